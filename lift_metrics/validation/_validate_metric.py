"""Scoring labelled items with a metric, then measuring its agreement with the labels.

:func:`validate_metric` calls any metric on labelled items (three call styles, a thread
pool, failed items counted as missing with their reason) and hands the scores to
:func:`lift_metrics.validation.validate_scores`; :func:`validate_field_baselines` does the
same for the field's metrics (BLEU, chrF, ...), the comparison rows of a report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from lift_metrics._checks import check_choice, check_int, check_iterable, check_real, score_value
from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.validation._labels import LabelledItem
from lift_metrics.validation._validate import (
    ValidationResult,
    check_level,
    check_target,
    validate_scores,
)

CallStyle = Literal["item", "kwargs", "dspy"]
_CALL_STYLES: tuple[str, ...] = ("item", "kwargs", "dspy")


def _caller(
    metric: Callable[..., Any], call: str, prediction_fields: Sequence[str]
) -> Callable[[Any], Any]:
    if call == "item":
        return metric
    if call == "kwargs":

        def by_kwargs(item: Any) -> Any:
            if not isinstance(item, Mapping):
                raise InputTypeError(
                    f"call='kwargs' needs mapping items, got {type(item).__name__}"
                )
            return metric(**item)

        return by_kwargs
    if not prediction_fields:
        raise InputValueError(
            "call='dspy' needs prediction_fields naming the item's prediction fields"
        )
    import dspy

    def by_dspy(item: Any) -> Any:
        if not isinstance(item, Mapping):
            raise InputTypeError(f"call='dspy' needs mapping items, got {type(item).__name__}")
        absent = [name for name in prediction_fields if name not in item]
        if absent:
            raise InputValueError(f"the item has no prediction field(s) {absent}")
        example = dspy.Example(**{k: v for k, v in item.items() if k not in prediction_fields})
        prediction = dspy.Prediction(**{k: item[k] for k in prediction_fields})
        return metric(example, prediction)

    return by_dspy


def _as_items(examples: Iterable[Any]) -> list[LabelledItem]:
    items: list[LabelledItem] = []
    for index, example in enumerate(examples):
        if isinstance(example, LabelledItem):
            items.append(example)
            continue
        if (
            isinstance(example, tuple | list)
            and len(example) == 2
            and not isinstance(example[1], bool)
        ):
            label = check_real(f"examples[{index}] label", example[1])
            items.append(LabelledItem(id=str(index), item=example[0], label=label))
            continue
        raise InputTypeError(
            f"examples[{index}] must be a LabelledItem or an (item, label) pair, "
            f"got {type(example).__name__}"
        )
    return items


def metric_name(metric: Any) -> str:
    """Return a readable name for a metric callable (function name, class name or repr)."""
    name = getattr(metric, "__name__", None)
    if isinstance(name, str):
        return name
    return type(metric).__name__


def validate_metric(
    metric: Callable[..., Any],
    examples: Iterable[LabelledItem | tuple[Any, float]],
    *,
    target: float = 0.8,
    confidence_level: float = 0.95,
    call: CallStyle = "item",
    prediction_fields: Sequence[str] = (),
    name: str | None = None,
    errors: Literal["raise", "missing"] = "raise",
    num_threads: int = 1,
) -> ValidationResult:
    r"""Score labelled items with ``metric`` and measure how well the scores track the labels.

    Parameters
    ----------
    metric : callable
        Any metric. How it is called on an item depends on ``call``:

        - ``"item"`` (default): ``metric(item)``;
        - ``"kwargs"``: ``metric(**item)`` for mapping items (a pure function such as
          ``lambda predicted, expected: ir_quality(IR(**predicted), IR(**expected))``, or a
          judge module called with its input fields);
        - ``"dspy"``: ``metric(example, prediction)`` where the item's ``prediction_fields``
          form a ``dspy.Prediction`` and the other fields a ``dspy.Example``: DSPy's metric
          protocol with ``trace=None``, so the metric returns its score.

        The return value may be a number, a bool, or an object with a ``score`` attribute
        (``dspy.Prediction(score=...)``, a breakdown). ``None``/NaN means the metric could
        not score the item (a failed judgement): the item is listed in ``missing`` with the
        reason (the object's ``missing`` attribute when it has one) and left out.
    examples : iterable of LabelledItem or (item, label) pairs
        Items with their labels, e.g. from :func:`load_labels`. A LabelledItem with
        several ratings adds the raters' agreement and the correlation with their mean.
    target : float, default 0.8
        The Pearson correlation the metric must reach (the project's target is 0.8).
    confidence_level : float, default 0.95
    call : {"item", "kwargs", "dspy"}, default "item"
    prediction_fields : sequence of str
        With ``call="dspy"``: the item fields that belong to the prediction.
    name : str, optional
        Name shown in the result; default the metric's ``__name__`` or class name.
    errors : {"raise", "missing"}, default "raise"
        What an exception inside the metric does: propagate (with the item id added as a
        note), or count the item as missing with the exception as its reason.
    num_threads : int, default 1
        Items are scored in a thread pool of this size (metrics must be thread-safe, as DSPy
        requires anyway). Order of the result does not depend on it.

    Returns
    -------
    ValidationResult
        ``.pearson`` with ``.pearson_ci``, ``.spearman``, ``.kendall``, ``.n``, the
        calibration line, ``.passed`` (``pearson >= target``) and ``.passed_ci`` (the lower
        bound of the interval ``>= target``).

    Raises
    ------
    TooFewScoresError
        When fewer than 3 items could be scored (with ``errors="missing"``, the reasons are
        in its ``missing`` attribute).
    TypeError, ValueError
        For a non-callable metric, malformed examples or bad options.
    RuntimeError
        With ``errors="raise"``, when the metric calls ``sys.exit`` (with
        ``errors="missing"`` the item is missing, with that reason).

    Warns
    -----
    ConstantInputWarning
        When all scores or all labels are equal (correlations are then nan).

    Notes
    -----
    Pearson's interval is the Fisher z interval of :func:`scipy.stats.pearsonr`,
    :math:`\tanh(\operatorname{artanh} r \pm z_{1-\alpha/2} / \sqrt{n-3})`. Kendall's tau is
    the tau-b variant (ties corrected). The calibration line regresses the label on the
    score, so ``slope * score + intercept`` predicts the label and ``residual_std`` is the
    typical error of that prediction.

    Examples
    --------
    >>> items = [({"a": 1, "b": 1}, 1.0), ({"a": 1, "b": 3}, 0.4), ({"a": 2, "b": 5}, 0.3),
    ...          ({"a": 0, "b": 9}, 0.0)]
    >>> def closeness(item):
    ...     return 1 / (1 + abs(item["a"] - item["b"]))
    >>> result = validate_metric(closeness, items, target=0.8)
    >>> result.n, round(result.pearson, 3), round(result.spearman, 3), result.passed
    (4, 0.985, 1.0, True)
    """
    if not callable(metric):
        raise InputTypeError(f"metric must be callable, got {type(metric).__name__}")
    check_target("target", target)  # before any item is scored
    check_level("confidence_level", confidence_level)
    style = check_choice("call", call, _CALL_STYLES)
    check_choice("errors", errors, ("raise", "missing"))
    threads = check_int("num_threads", num_threads, minimum=1)
    if isinstance(prediction_fields, str):
        raise InputTypeError("prediction_fields must be a sequence of field names, not a str")
    items = _as_items(check_iterable("examples", examples, of="labelled items"))
    if not items:
        raise InputValueError("examples must not be empty")
    caller = _caller(metric, style, tuple(prediction_fields))

    def score_one(labelled: LabelledItem) -> tuple[float | None, str | None]:
        try:
            return score_value(caller(labelled.item))
        except SystemExit as exc:  # a metric must not end the caller's program
            reason = f"the metric called sys.exit({exc.code!r})"
            if errors == "raise":
                raise RuntimeError(f"{reason} while scoring item {labelled.id!r}") from exc
            return None, reason
        except Exception as exc:
            if errors == "raise":
                exc.add_note(f"while scoring item {labelled.id!r}")
                raise
            return None, f"{type(exc).__name__}: {exc}"

    if threads == 1:
        outcomes = [score_one(item) for item in items]
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            outcomes = list(pool.map(score_one, items))
    return _result_from_outcomes(
        items,
        outcomes,
        metric=name if name is not None else metric_name(metric),
        target=target,
        confidence_level=confidence_level,
    )


def _result_from_outcomes(
    items: Sequence[LabelledItem],
    outcomes: Sequence[tuple[float | None, str | None]],
    *,
    metric: str,
    target: float,
    confidence_level: float,
) -> ValidationResult:
    scores: list[float] = []
    labels: list[float] = []
    ids: list[str] = []
    ratings: list[tuple[float | None, ...]] = []
    missing: list[tuple[str, str]] = []
    for labelled, (score, reason) in zip(items, outcomes, strict=True):
        if score is None:
            missing.append((labelled.id, reason or "no score"))
            continue
        scores.append(score)
        labels.append(labelled.label)
        ids.append(labelled.id)
        ratings.append(labelled.ratings or (labelled.label,))
    many_raters = any(len(r) > 1 for r in ratings)
    return validate_scores(
        scores,
        labels,
        target=target,
        confidence_level=confidence_level,
        metric=metric,
        ids=ids,
        ratings=ratings if many_raters else None,
        missing=missing,
    )


def validate_field_baselines(
    items: Sequence[LabelledItem],
    *,
    target: float = 0.8,
    confidence_level: float = 0.95,
    num_threads: int = 1,
) -> tuple[list[ValidationResult], list[str]]:
    """Return the field's metrics (:data:`lift_metrics.validation.FIELD_METRICS`) on ``items``.

    Each goes through :func:`validate_metric` like any metric, named ``"NAME (field
    baseline)"``. They are shown for comparison, so what cannot be run is a note, not an
    error: CodeBLEU when it is not installed, a baseline that scored fewer than 3 items.

    Parameters
    ----------
    items : sequence of LabelledItem
        Items with the fields the baselines read (``predicted_code``/``expected_code``).
    target, confidence_level, num_threads
        As :func:`validate_metric`.

    Returns
    -------
    results : list of ValidationResult
    notes : list of str
        One line per baseline left out, saying why.
    """
    from lift_metrics._builtin_metrics import FIELD_METRICS, FieldMetricScorer
    from lift_metrics.code import codebleu_available
    from lift_metrics.errors import TooFewScoresError

    items = list(check_iterable("items", items, of="labelled items"))
    check_target("target", target)
    check_level("confidence_level", confidence_level)
    results: list[ValidationResult] = []
    notes: list[str] = []
    for name in FIELD_METRICS:
        if name == "codebleu" and not codebleu_available():
            notes.append(
                "codebleu is not installed (pip install 'lift-metrics[codebleu]'); "
                "its row is left out"
            )
            continue
        try:
            results.append(
                validate_metric(
                    FieldMetricScorer(name),
                    items,
                    target=target,
                    confidence_level=confidence_level,
                    name=f"{name} (field baseline)",
                    errors="missing",
                    num_threads=num_threads,
                )
            )
        except TooFewScoresError as exc:  # shown for comparison only: a note, not a failure
            notes.append(f"its row is left out: {exc}")
    return results, notes
