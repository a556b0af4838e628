"""Agreement of a metric with labels: correlations, an interval, a calibration line, verdicts."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from lift_metrics._checks import as_float_array, check_choice, check_int, check_real
from lift_metrics.validation._labels import LabelledItem

CallStyle = Literal["item", "kwargs", "dspy"]
_CALL_STYLES: tuple[str, ...] = ("item", "kwargs", "dspy")
_MIN_ITEMS = 3


class ConstantInputWarning(RuntimeWarning):
    """All scores (or all labels) are equal, so a correlation is undefined and reported as nan.

    The counterpart of :class:`scipy.stats.ConstantInputWarning`, raised by this package
    before scipy is called.
    """


class TooFewScoresError(ValueError):
    """Fewer than 3 items could be scored, so the agreement cannot be computed.

    Attributes
    ----------
    metric : str
        Name of the metric.
    scored : int
        Number of items that have a score.
    missing : tuple of (str, str)
        ``(id, reason)`` for every item whose score is missing.
    """

    def __init__(self, metric: str, scored: int, missing: Sequence[tuple[str, str]]) -> None:
        self.metric = metric
        self.scored = scored
        self.missing = tuple((str(i), str(r)) for i, r in missing)
        if missing:
            first_id, first_reason = self.missing[0]
            why = f"; first missing item {first_id!r}: {first_reason}"
        else:
            why = ""
        if scored == 0 and missing:
            message = (
                f"{metric}: nothing could be scored: all {len(missing)} items are missing{why}"
            )
        else:
            message = (
                f"{metric}: need at least {_MIN_ITEMS} scored items to validate a metric, got "
                f"{scored}" + (f" ({len(missing)} missing{why})" if missing else "")
            )
        super().__init__(message)


@dataclass(frozen=True, repr=False)
class ValidationResult:
    """How closely a metric's scores track labels (see :func:`validate_metric`).

    Attributes
    ----------
    metric : str
        Name of the metric.
    n : int
        Number of items with both a score and a label (missing scores excluded).
    pearson, pearson_low, pearson_high, pearson_pvalue : float
        Pearson's r, its confidence interval (Fisher z, from
        :func:`scipy.stats.pearsonr`) and the two-sided p-value; nan when undefined.
    spearman, kendall : float
        Spearman's rho and Kendall's tau-b.
    slope, intercept, residual_std : float
        The calibration line ``label ≈ slope * score + intercept`` (least squares) and the
        standard deviation of its residuals (``n - 2`` degrees of freedom).
    target, confidence_level : float
        The Pearson target and the interval's confidence level.
    scores, labels : tuple of float
        The paired values used (after dropping missing scores).
    ids : tuple of str
        Item ids in the same order.
    missing : tuple of (str, str)
        ``(id, reason)`` for every item whose score is missing.
    raters : int
        Number of rating fields per item (1 when there is a single label).
    rater_alpha : float or None
        Krippendorff's alpha (interval) among the raters; None with one rater.
    rater_mean_pearson, rater_mean_low, rater_mean_high : float or None
        Pearson of the scores with the mean of the available ratings, with its interval.
    """

    metric: str
    n: int
    pearson: float
    pearson_low: float
    pearson_high: float
    pearson_pvalue: float
    spearman: float
    kendall: float
    slope: float
    intercept: float
    residual_std: float
    target: float
    confidence_level: float
    scores: tuple[float, ...] = field(default=())
    labels: tuple[float, ...] = field(default=())
    ids: tuple[str, ...] = field(default=())
    missing: tuple[tuple[str, str], ...] = field(default=())
    raters: int = 1
    rater_alpha: float | None = None
    rater_mean_pearson: float | None = None
    rater_mean_low: float | None = None
    rater_mean_high: float | None = None

    @property
    def pearson_ci(self) -> tuple[float, float]:
        """``(low, high)`` of Pearson's r at :attr:`confidence_level`."""
        return (self.pearson_low, self.pearson_high)

    @property
    def passed(self) -> bool:
        """Point verdict: ``pearson >= target`` (False when pearson is nan)."""
        return bool(self.pearson >= self.target)

    @property
    def passed_ci(self) -> bool:
        """Interval verdict: the interval's lower bound ``>= target``."""
        return bool(self.pearson_low >= self.target)

    def __repr__(self) -> str:
        return (
            f"ValidationResult(metric={self.metric!r}, n={self.n}, pearson={self.pearson:.3f} "
            f"[{self.pearson_low:.3f}, {self.pearson_high:.3f}], spearman={self.spearman:.3f}, "
            f"kendall={self.kendall:.3f}, target={self.target:g}, passed={self.passed})"
        )

    def to_dict(self, *, include_pairs: bool = True) -> dict[str, Any]:
        """Plain-JSON form (nan stays a float; use :func:`lift_metrics._io.dumps_json`)."""
        out: dict[str, Any] = {
            "metric": self.metric,
            "n": self.n,
            "pearson": self.pearson,
            "pearson_ci": [self.pearson_low, self.pearson_high],
            "pearson_pvalue": self.pearson_pvalue,
            "spearman": self.spearman,
            "kendall": self.kendall,
            "calibration_line": {
                "slope": self.slope,
                "intercept": self.intercept,
                "residual_std": self.residual_std,
            },
            "target": self.target,
            "confidence_level": self.confidence_level,
            "passed": self.passed,
            "passed_ci": self.passed_ci,
            "raters": self.raters,
            "rater_alpha": self.rater_alpha,
            "rater_mean_pearson": self.rater_mean_pearson,
            "rater_mean_ci": (
                None if self.rater_mean_low is None else [self.rater_mean_low, self.rater_mean_high]
            ),
            "missing": [{"id": i, "reason": r} for i, r in self.missing],
        }
        if include_pairs:
            out["pairs"] = [
                {"id": i, "score": s, "label": y}
                for i, s, y in zip(self.ids, self.scores, self.labels, strict=True)
            ]
        return out


def _constant(values: np.ndarray) -> bool:
    return bool(values.size == 0 or np.all(values == values[0]))


def _correlations(
    scores: np.ndarray, labels: np.ndarray, confidence_level: float
) -> tuple[float, float, float, float, float, float]:
    """Pearson, its interval and p-value, Spearman, Kendall tau-b (nan if either is constant)."""
    if _constant(scores) or _constant(labels):
        nan = math.nan
        return nan, nan, nan, nan, nan, nan
    from scipy import stats

    result = stats.pearsonr(scores, labels)
    interval = result.confidence_interval(confidence_level=confidence_level)
    spearman = stats.spearmanr(scores, labels).statistic
    kendall = stats.kendalltau(scores, labels, variant="b").statistic
    return (
        float(result.statistic),
        float(interval.low),
        float(interval.high),
        float(result.pvalue),
        float(spearman),
        float(kendall),
    )


def validate_scores(
    scores: Sequence[float] | np.ndarray,
    labels: Sequence[float] | np.ndarray,
    *,
    target: float = 0.8,
    confidence_level: float = 0.95,
    metric: str = "metric",
    ids: Sequence[str] | None = None,
    ratings: Sequence[Sequence[float | None]] | None = None,
    missing: Sequence[tuple[str, str]] = (),
) -> ValidationResult:
    """Compare scores already computed with labels (the statistics of :func:`validate_metric`).

    Parameters
    ----------
    scores, labels : sequence of float
        Paired metric scores and labels, same length, at least 3, finite.
    target : float, default 0.8
        Pearson's r the metric must reach (the project's target is 0.8).
    confidence_level : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    metric : str, default "metric"
        Name shown in the result.
    ids : sequence of str, optional
        Item ids (default ``"0"``, ``"1"``, ...).
    ratings : sequence of sequences, optional
        Per item, every rater's rating (``None`` where a rater did not rate the item). With
        two or more rating columns the result carries Krippendorff's alpha among the raters
        and the correlation of the scores with the rater mean.
    missing : sequence of (id, reason)
        Items dropped before the call; reported as they are.

    Returns
    -------
    ValidationResult

    Raises
    ------
    TooFewScoresError
        On fewer than 3 pairs (a ValueError; its message says when nothing could be scored
        and quotes the first reason in ``missing``).
    ValueError
        On unequal lengths, NaN/inf, a bad ``target`` or ``confidence_level``.

    Warns
    -----
    ConstantInputWarning
        When the scores or the labels are all equal; the correlations are then nan.

    Examples
    --------
    >>> result = validate_scores([0.1, 0.4, 0.35, 0.8], [0.0, 0.5, 0.3, 1.0], target=0.9)
    >>> round(result.pearson, 4), result.passed, result.passed_ci
    (0.9922, True, False)
    """
    if len(scores) < _MIN_ITEMS and len(scores) == len(labels):
        raise TooFewScoresError(metric, len(scores), missing)
    x = as_float_array("scores", scores)
    y = as_float_array("labels", labels)
    if x.size != y.size:
        raise ValueError(f"scores and labels must have the same length, got {x.size} and {y.size}")
    target_value = check_real("target", target)
    if not -1.0 <= target_value <= 1.0:
        raise ValueError(f"target must be a correlation in [-1, 1], got {target!r}")
    level = check_real("confidence_level", confidence_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    id_list = tuple(str(i) for i in ids) if ids is not None else tuple(map(str, range(x.size)))
    if len(id_list) != x.size:
        raise ValueError(f"ids must have one entry per score ({x.size}), got {len(id_list)}")

    constant = [name for name, v in (("scores", x), ("labels", y)) if _constant(v)]
    if constant:
        warnings.warn(
            f"{metric}: the {' and the '.join(constant)} are constant "
            f"(all {x[0] if constant[0] == 'scores' else y[0]:g}); correlations are nan",
            ConstantInputWarning,
            stacklevel=2,
        )
    pearson, low, high, pvalue, spearman, kendall = _correlations(x, y, level)
    if _constant(x):
        slope = intercept = math.nan
        residual_std = float(np.std(y, ddof=1)) if y.size > 1 else math.nan
    else:
        slope, intercept = (float(v) for v in np.polyfit(x, y, 1))
        residuals = y - (slope * x + intercept)
        residual_std = float(math.sqrt(float(residuals @ residuals) / (x.size - 2)))

    raters = 1
    alpha: float | None = None
    mean_r: float | None = None
    mean_low: float | None = None
    mean_high: float | None = None
    if ratings is not None:
        matrix = _ratings_matrix(ratings, x.size)
        raters = int(matrix.shape[1])
        if raters >= 2:
            from lift_metrics.validation._agreement import krippendorff_alpha

            alpha = krippendorff_alpha(matrix.T)
            with np.errstate(invalid="ignore"):
                mean = np.nanmean(matrix, axis=1)
            if not np.isnan(mean).any():
                if _constant(mean):
                    warnings.warn(
                        f"{metric}: the rater means are constant; their correlation is nan",
                        ConstantInputWarning,
                        stacklevel=2,
                    )
                m = _correlations(x, mean, level)
                mean_r, mean_low, mean_high = m[0], m[1], m[2]

    return ValidationResult(
        metric=metric,
        n=int(x.size),
        pearson=pearson,
        pearson_low=low,
        pearson_high=high,
        pearson_pvalue=pvalue,
        spearman=spearman,
        kendall=kendall,
        slope=slope,
        intercept=intercept,
        residual_std=residual_std,
        target=target_value,
        confidence_level=level,
        scores=tuple(float(v) for v in x),
        labels=tuple(float(v) for v in y),
        ids=id_list,
        missing=tuple((str(i), str(r)) for i, r in missing),
        raters=raters,
        rater_alpha=alpha,
        rater_mean_pearson=mean_r,
        rater_mean_low=mean_low,
        rater_mean_high=mean_high,
    )


def _ratings_matrix(ratings: Sequence[Sequence[float | None]], n: int) -> np.ndarray:
    rows = list(ratings)
    if len(rows) != n:
        raise ValueError(f"ratings must have one row per score ({n}), got {len(rows)}")
    width = max((len(row) for row in rows), default=0)
    matrix = np.full((n, max(width, 1)), np.nan)
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            if value is not None:
                matrix[i, j] = check_real(f"ratings[{i}][{j}]", value)
    return matrix


def score_value(result: Any) -> tuple[float | None, str | None]:
    """Turn what a metric returned into ``(score, None)`` or ``(None, why it is missing)``.

    Accepted: a real number, a bool (1.0/0.0), an object with a ``score`` attribute
    (``dspy.Prediction(score=...)``, a breakdown, a judge's prediction) or one that supports
    ``float()``. ``None``, NaN and anything else are missing; an object's ``missing``
    attribute, when it is a str, is used as the reason.

    Examples
    --------
    >>> score_value(0.25), score_value(True), score_value(None)
    ((0.25, None), (1.0, None), (None, 'the metric returned None'))
    """
    value = result
    if value is None:
        return None, "the metric returned None"
    if not isinstance(value, int | float | np.integer | np.floating):
        score = getattr(value, "score", None)
        if score is None:
            reason = getattr(value, "missing", None)
            if isinstance(reason, str) and reason:
                return None, reason
            if hasattr(value, "score"):
                return None, "the metric's score is None"
            if not hasattr(value, "__float__"):
                return None, f"the metric returned {type(value).__name__}, not a score"
            score = value
        value = score
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None, f"the metric returned {type(value).__name__}, not a score"
    if math.isnan(number):
        return None, "the metric returned nan"
    if math.isinf(number):
        return None, "the metric returned an infinite score"
    return number, None


def _caller(
    metric: Callable[..., Any], call: str, prediction_fields: Sequence[str]
) -> Callable[[Any], Any]:
    if call == "item":
        return metric
    if call == "kwargs":

        def by_kwargs(item: Any) -> Any:
            if not isinstance(item, Mapping):
                raise TypeError(f"call='kwargs' needs mapping items, got {type(item).__name__}")
            return metric(**item)

        return by_kwargs
    if not prediction_fields:
        raise ValueError("call='dspy' needs prediction_fields naming the item's prediction fields")
    import dspy

    def by_dspy(item: Any) -> Any:
        if not isinstance(item, Mapping):
            raise TypeError(f"call='dspy' needs mapping items, got {type(item).__name__}")
        absent = [name for name in prediction_fields if name not in item]
        if absent:
            raise ValueError(f"the item has no prediction field(s) {absent}")
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
        raise TypeError(
            f"examples[{index}] must be a LabelledItem or an (item, label) pair, "
            f"got {type(example).__name__}"
        )
    return items


def metric_name(metric: Any) -> str:
    """A readable name for a metric callable (function name, class name or repr)."""
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
    """Score labelled items with ``metric`` and measure how well the scores track the labels.

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
    :math:`\\tanh(\\operatorname{artanh} r \\pm z_{1-\\alpha/2} / \\sqrt{n-3})`. Kendall's tau is
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
        raise TypeError(f"metric must be callable, got {type(metric).__name__}")
    style = check_choice("call", call, _CALL_STYLES)
    check_choice("errors", errors, ("raise", "missing"))
    threads = check_int("num_threads", num_threads, minimum=1)
    if isinstance(prediction_fields, str):
        raise TypeError("prediction_fields must be a sequence of field names, not a str")
    items = _as_items(examples)
    if not items:
        raise ValueError("examples must not be empty")
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
