"""The package's built-in metrics: their registered specs, their item scorers, look-up by name.

Each metric is one registered :class:`~lift_metrics.validation.MetricSpec`; the classes here
are :class:`~lift_metrics.validation.MetricScorer` made for one metric, which take its options
as keyword parameters and validate them. The validation scorers
(``lift_metrics.validation``) and the DSPy metric objects (``lift_metrics.dspy_metrics``) are
both made from these specs.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from typing import Any

from lift_metrics._checks import check_bool, check_timeout, normalize_weights
from lift_metrics._registry import (
    ItemField,
    MetricScorer,
    MetricSpec,
    Score,
    lazy,
    metric_names,
    read_fields,
    register_metric,
    registered_metric,
)
from lift_metrics._test_cases import as_test_cases
from lift_metrics.errors import InputTypeError, InputValueError


def _as_ir(value: Any) -> Any:
    """Return the IR of a mapping or of its text (:func:`lift_metrics.ir.parse_ir`)."""
    from lift_metrics.ir import parse_ir

    return parse_ir(value)


def _latency(value: Any) -> float | None:
    return None if value in (None, "") else float(value)


def _or_none(value: Any) -> Any:
    return value or None


#: what a code task gives besides the code, all optional: tests, entry point, prompt
_TASK = (
    ItemField("tests", required=False, parse=as_test_cases),
    ItemField("entry_point", required=False, parse=_or_none),
    ItemField("prompt", required=False, parse=_or_none),
)
_CODE_TASK = (
    ItemField("predicted_code", "predicted", source="prediction.code"),
    ItemField("expected_code", "expected"),
    *_TASK,
)
_END_TO_END_TASK = (
    ItemField("predicted_ir", source="prediction.ir"),
    ItemField("expected_ir"),
    ItemField("predicted_code", source="prediction.code"),
    ItemField("expected_code"),
    *_TASK,
    # a DSPy prediction's latency is what the program says it is: never read
    ItemField("latency_ms", required=False, parse=_latency, source=None),
)
_CODE_PAIR = (
    ItemField("predicted_code", "predicted", parse=str, source="prediction.code"),
    ItemField("expected_code", "expected", parse=str),
)
#: the CoNaLa grades' own names of a code pair's fields
_CONALA_KEYS = {"predicted_code": "prediction", "expected_code": "reference"}
#: the field's metrics and the functions of lift_metrics.code that compute them
_FIELD_FUNCTIONS = {
    "chrf": "chrf_score",
    "bleu": "bleu_score",
    "codebleu": "codebleu_score",
    "exact_match": "exact_match",
}


def _loader(module: str, name: str) -> Callable[[], Mapping[str, float]]:
    """Return a loader of the default weights ``module.name`` (imported when asked for)."""
    return lambda: getattr(importlib.import_module(module), name)


def _same(*names: str) -> dict[str, str]:
    """Return the attributes passed to the core under their own names."""
    return {name: name for name in names}


def _function_name(item: Any) -> str | None:
    """Return the expected function's name (pairs built on one function share a fold)."""
    expected = item.get("expected") if isinstance(item, Mapping) else None
    if isinstance(expected, Mapping):
        signature = expected.get("signature")
        if isinstance(signature, Mapping):
            return str(signature.get("name"))
    return None


def _reference_snippet(item: Any) -> str | None:
    """Return the reference snippet (predictions for one task share a fold)."""
    try:
        return str(read_fields(item, _CODE_PAIR, _CONALA_KEYS, "reference_score")["expected"])
    except (TypeError, ValueError):
        return None


def _pair_texts(arguments: Mapping[str, Any]) -> list[Any]:
    return [arguments["predicted"], arguments["expected"]]


def _intents(arguments: Mapping[str, Any]) -> list[str]:
    return [arguments["predicted"].intent.description, arguments["expected"].intent.description]


def _field_core(function: str) -> Callable[[str, str], Score]:
    """Return the core of a field's metric: ``lift_metrics.code.<function>`` as a result."""
    compute = lazy("lift_metrics.code", function)

    def core(predicted: str, expected: str) -> Score:
        return Score(float(compute(predicted, expected)))

    return core


class IRPairScorer(MetricScorer):
    """Score an IR pair ``{"predicted": IR-JSON, "expected": IR-JSON}`` with ``ir_quality``.

    Calls ``ir_quality(IR.model_validate(predicted), IR.model_validate(expected),
    weights=..., embedder=...)``; the item keys are those of ``datasets/labels/ir_pairs.jsonl``.

    Parameters
    ----------
    weights : mapping, optional
        ``intent``/``signature``/``structure``/``constraints``; default 0.3 / 0.3 / 0.2 / 0.2.
    embedder : Embedder, optional
        Default the bundled all-MiniLM-L6-v2.
    similarity_floor : float, default 0.0
        Passed to ``ir_quality`` (opt-in rescaling of the intent cosine; 0 is the default
        metric). :func:`~lift_metrics.validation.load_profile` reads one with its weights.

    Examples
    --------
    >>> ir = {"intent": {"description": "Add a and b."}, "signature": {"name": "add"}}
    >>> scorer = IRPairScorer(weights={"intent": 0, "signature": 1, "structure": 1,
    ...                                "constraints": 1})
    >>> scorer({"predicted": ir, "expected": ir})
    1.0
    """

    _shows_name = False

    def __init__(
        self,
        *,
        weights: Mapping[str, float] | None = None,
        embedder: Any = None,
        similarity_floor: float = 0.0,
    ) -> None:
        from lift_metrics.similarity import check_similarity_floor

        self._bind(_IR_QUALITY)
        self.weights = normalize_weights("weights", weights, self.default_weights)
        self.embedder = embedder
        self.similarity_floor = check_similarity_floor(similarity_floor)


_IR_QUALITY = register_metric(
    MetricSpec(
        name="ir_quality",
        core=lazy("lift_metrics.ir", "ir_quality_breakdown"),
        fields=(
            ItemField("predicted", parse=_as_ir, source="prediction.ir"),
            ItemField("expected", parse=_as_ir, source="example.expected_ir"),
        ),
        passes=_same("weights", "embedder", "similarity_floor"),
        default_weights=_loader("lift_metrics.ir", "DEFAULT_IR_WEIGHTS"),
        similarity_component="intent",
        group=_function_name,
        embeds=_intents,
        embeds_if=lambda scorer: scorer.weights.get("intent", 0) > 0,
        shown=lambda scorer: {
            "weights": scorer.weights,
            **({"similarity_floor": scorer.similarity_floor} if scorer.similarity_floor else {}),
        },
        scorer=IRPairScorer,
    )
)


class CodePairScorer(MetricScorer):
    """Score a code pair with ``code_quality`` (item keys of ``code_pairs.jsonl``).

    Calls the code_quality scoring core on ``item["predicted_code"]`` and
    ``item["expected_code"]`` with the item's tests (``[{"inputs": {...}, "expected": v}]``
    cases as ``(kwargs, v)`` pairs, or a check script), ``entry_point`` and ``prompt``
    (both optional).

    Parameters
    ----------
    profile : str, path, CalibrationProfile, CodeQualityOptions or None, default None
        As in :func:`lift_metrics.code.code_quality` (None: ``"validated"``, or the plain
        weighted sum when a weighted-sum option is given).
    weights : mapping, optional
        Weighted-sum weights ``syntax``/``tests``/``semantic``/``style`` (optionally
        ``structural``).
    embedder, sandbox, timeout_s
        Passed to the scoring core.
    similarity_floor : float or None, default None
    wrong_answer_gate : bool or None, default None
    stub_cap : float or None, default None
        Weighted-sum options (0.0 and False count as not given).

    Examples
    --------
    >>> CodePairScorer().options.profile
    'validated'
    >>> CodePairScorer(profile="seed").weights["tests"]
    0.4
    """

    _shows_name = False

    def __init__(
        self,
        *,
        profile: Any = None,
        weights: Mapping[str, float] | None = None,
        embedder: Any = None,
        sandbox: Any = None,
        timeout_s: float | None = None,
        similarity_floor: float | None = None,
        wrong_answer_gate: bool | None = None,
        stub_cap: float | None = None,
    ) -> None:
        from lift_metrics.code import code_quality_options

        self._bind(_CODE_QUALITY)
        self.options = code_quality_options(
            profile,
            weights=weights,
            similarity_floor=similarity_floor or None,
            wrong_answer_gate=wrong_answer_gate or None,
            stub_cap=stub_cap,
            timeout_s=timeout_s,
        )
        self.weights: dict[str, float] = dict(self.options.weights or {})
        self.embedder = embedder
        self.sandbox = sandbox
        self.timeout_s = self.options.timeout_s
        self.similarity_floor = self.options.similarity_floor
        self.wrong_answer_gate = self.options.wrong_answer_gate
        self.stub_cap = self.options.stub_cap


_CODE_QUALITY = register_metric(
    MetricSpec(
        name="code_quality",
        core=lazy("lift_metrics.code", "code_quality_breakdown"),
        fields=_CODE_TASK,
        passes={"profile": "options", **_same("embedder", "sandbox")},
        default_weights=_loader("lift_metrics.code", "DEFAULT_CODE_QUALITY_WEIGHTS"),
        similarity_component="semantic",
        embeds=_pair_texts,
        embeds_if=lambda s: s.options.validated or s.weights.get("semantic", 0) > 0,
        shown=lambda s: (
            {"profile": s.options.profile}
            if s.options.validated
            else {"weights": s.weights, **s.options.metric_options()}
        ),
        scorer=CodePairScorer,
    )
)


class EndToEndScorer(MetricScorer):
    """Score an end-to-end item with ``end_to_end``.

    Item keys: ``predicted_ir``, ``expected_ir`` (IR JSON objects or text),
    ``predicted_code``, ``expected_code``, ``tests``, optional ``entry_point`` and
    ``latency_ms`` (absent: latency is left out and the other weights rescaled). No labelled
    end-to-end data ships with the package: pass your own file.

    Parameters
    ----------
    weights : mapping, optional
        ``ir``/``code``/``latency``; default 0.4/0.5/0.1.
    ir_weights, code_weights : mapping, optional
    code_profile : optional
        The code part's profile, as ``profile`` in :func:`lift_metrics.code.code_quality`.
    embedder, sandbox, timeout_s
    """

    _shows_name = False

    def __init__(
        self,
        *,
        weights: Mapping[str, float] | None = None,
        ir_weights: Mapping[str, float] | None = None,
        code_weights: Mapping[str, float] | None = None,
        code_profile: Any = None,
        embedder: Any = None,
        sandbox: Any = None,
        timeout_s: float | None = None,
    ) -> None:
        self._bind(_END_TO_END)
        self.weights = normalize_weights("weights", weights, self.default_weights)
        _bind_parts(self, ir_weights, code_weights, code_profile, embedder, sandbox, timeout_s)


def _bind_parts(scorer: Any, *options: Any) -> None:
    """Keep a composite's IR weights, code weights, code profile, embedder, sandbox, limit."""
    from lift_metrics.code import code_quality_options

    ir_weights, code_weights, code_profile, embedder, sandbox, timeout_s = options
    scorer.ir_weights, scorer.code_weights = ir_weights, code_weights
    scorer.embedder, scorer.sandbox, scorer.timeout_s = embedder, sandbox, timeout_s
    scorer.code_options = code_quality_options(
        code_profile, weights=code_weights, name="code_profile", weights_name="code_weights"
    )


_END_TO_END = register_metric(
    MetricSpec(
        name="end_to_end",
        core=lazy("lift_metrics.composite", "end_to_end_breakdown"),
        fields=_END_TO_END_TASK,
        passes={
            "code_profile": "code_options",
            **_same("weights", "ir_weights", "embedder", "sandbox", "timeout_s"),
        },
        default_weights=_loader("lift_metrics.composite", "DEFAULT_E2E_WEIGHTS"),
        shown=lambda scorer: {"weights": scorer.weights},
        scorer=EndToEndScorer,
    )
)


class AggregateScorer(MetricScorer):
    """Score an end-to-end item with the aggregate of quality, cost and latency.

    Item keys: those of :class:`EndToEndScorer` and an optional ``cost_usd`` (absent: left out).

    Parameters
    ----------
    weights : mapping, optional
        ``quality``/``cost``/``latency``; default 0.7/0.2/0.1.
    e2e_weights : mapping, optional
        ``ir``/``code``/``latency`` of the end-to-end score; default 0.4/0.5/0.1.
    ir_weights, code_weights, code_profile, embedder, sandbox, timeout_s
        As in :class:`EndToEndScorer`.
    cost_ceiling_usd, latency_ceiling_ms : float or None, default None
        The ceilings of :func:`lift_metrics.composite.aggregate_metric` (None: 0.10, 60000).
    gated : bool, default True
        Cost and latency count in proportion to the code score
        (:func:`lift_metrics.composite.aggregate_task_breakdown`).
    """

    _shows_name = False

    def __init__(
        self,
        *,
        weights: Mapping[str, float] | None = None,
        e2e_weights: Mapping[str, float] | None = None,
        ir_weights: Mapping[str, float] | None = None,
        code_weights: Mapping[str, float] | None = None,
        code_profile: Any = None,
        cost_ceiling_usd: float | None = None,
        latency_ceiling_ms: float | None = None,
        gated: bool = True,
        embedder: Any = None,
        sandbox: Any = None,
        timeout_s: float | None = None,
    ) -> None:
        from lift_metrics.composite import DEFAULT_E2E_WEIGHTS

        self._bind(_AGGREGATE)
        self.weights = normalize_weights("weights", weights, self.default_weights)
        self.e2e_weights = normalize_weights("e2e_weights", e2e_weights, DEFAULT_E2E_WEIGHTS)
        self.cost_ceiling_usd = cost_ceiling_usd  # checked by the core, None: its default
        self.latency_ceiling_ms = latency_ceiling_ms
        self.gated = check_bool("gated", gated)
        _bind_parts(self, ir_weights, code_weights, code_profile, embedder, sandbox, timeout_s)


_AGGREGATE = register_metric(
    MetricSpec(
        name="aggregate",
        core=lazy("lift_metrics.composite", "aggregate_task_breakdown"),
        fields=(
            *_END_TO_END_TASK,
            # a DSPy prediction's cost is what the program says, as its latency: never read
            ItemField("cost_usd", required=False, parse=_latency, source=None),
        ),
        passes={
            "code_profile": "code_options",
            "aggregate_weights": "weights",
            "weights": "e2e_weights",
            **_same("ir_weights", "gated", "embedder", "sandbox", "timeout_s"),
            **_same("cost_ceiling_usd", "latency_ceiling_ms"),
        },
        default_weights=_loader("lift_metrics.composite", "DEFAULT_AGGREGATE_WEIGHTS"),
        shown=lambda scorer: {"weights": scorer.weights, "gated": scorer.gated},
        scorer=AggregateScorer,
    )
)


class ReferenceScorer(MetricScorer):
    """Score a code pair without tests with :func:`lift_metrics.code.reference_score`.

    Item keys: ``predicted_code`` and ``expected_code`` (or ``prediction`` and
    ``reference``); tests, when the item has them, are not used.

    Examples
    --------
    >>> ReferenceScorer()({"predicted_code": "x = 1", "expected_code": "x = 1"})
    1.0
    """

    _shows_name = False

    def __init__(self, *, embedder: Any = None) -> None:
        self._bind(_REFERENCE_SCORE)
        self.embedder = embedder


_REFERENCE_SCORE = register_metric(
    MetricSpec(
        name="reference_score",
        core=lazy("lift_metrics.code", "reference_score_breakdown"),
        fields=_CODE_PAIR,
        aliases=_CONALA_KEYS,
        passes=_same("embedder"),
        group=_reference_snippet,
        embeds=_pair_texts,
        scorer=ReferenceScorer,
    )
)


class PassRateScorer(MetricScorer):
    """Score a code item with :func:`lift_metrics.code.test_pass_rate` (no reference).

    Item keys: ``predicted_code`` and ``tests`` (``[{"inputs": {...}, "expected": v}]``
    cases, or a check script; an item without tests is an error: no tests is never a
    pass), optional ``entry_point`` and ``prompt``.

    Parameters
    ----------
    sandbox : Sandbox or None, default None
        Where the tests run (None: the process-wide sandbox).
    timeout_s : float or None, default None
        Per-execution time limit (None: the sandbox's own).

    Examples
    --------
    >>> PassRateScorer(timeout_s=2.5)
    PassRateScorer(timeout_s=2.5)
    """

    _shows_name = False

    def __init__(self, *, sandbox: Any = None, timeout_s: float | None = None) -> None:
        self._bind(_TEST_PASS_RATE)
        self.sandbox = sandbox
        self.timeout_s = check_timeout(timeout_s)


_TEST_PASS_RATE = register_metric(
    MetricSpec(
        name="test_pass_rate",
        core=lazy("lift_metrics.code", "test_pass_rate_breakdown"),
        fields=(
            ItemField("predicted_code", "code", source="prediction.code"),
            ItemField("tests", parse=as_test_cases),
            *_TASK[1:],
        ),
        passes=_same("sandbox", "timeout_s"),
        shown=lambda scorer: {} if scorer.timeout_s is None else {"timeout_s": scorer.timeout_s},
        scorer=PassRateScorer,
    )
)


class FieldMetricScorer(MetricScorer):
    """Score a code pair with one of the field's metrics (:data:`FIELD_METRICS`).

    ``chrf``, ``bleu``, ``codebleu`` and ``exact_match`` call
    :func:`lift_metrics.code.chrf_score`, :func:`~lift_metrics.code.bleu_score`,
    :func:`~lift_metrics.code.codebleu_score` and :func:`~lift_metrics.code.exact_match` on
    the item's ``predicted_code``/``expected_code`` (or ``prediction``/``reference``).

    Examples
    --------
    >>> FieldMetricScorer("exact_match")({"prediction": "x = 1", "reference": "x = 1"})
    1.0
    """

    def __init__(self, metric: str) -> None:
        if metric not in FIELD_METRICS:
            raise InputValueError(f"metric must be one of {FIELD_METRICS}, got {metric!r}")
        self._bind(registered_metric(metric))
        self.function = getattr(
            importlib.import_module("lift_metrics.code"), _FIELD_FUNCTIONS[metric]
        )


for _name, _function in _FIELD_FUNCTIONS.items():
    register_metric(
        MetricSpec(
            name=_name,
            core=_field_core(_function),
            fields=_CODE_PAIR,
            aliases=_CONALA_KEYS,
            scorer=functools.partial(FieldMetricScorer, _name),
            baseline=True,
        )
    )


BUILTIN_METRICS: tuple[str, ...] = metric_names()

FIELD_METRICS: tuple[str, ...] = metric_names(baseline=True)
"""The field's reference metrics ``lift-metrics validate --baselines`` adds (see
:class:`FieldMetricScorer`)."""


def _takers(option: str) -> str:
    """Return the built-in metrics that take ``option``, for an error message."""
    return " and ".join(n for n in metric_names() if option in registered_metric(n).options)


def builtin_scorer(
    name: str,
    *,
    weights: Mapping[str, float] | None = None,
    similarity_floor: float = 0.0,
    wrong_answer_gate: bool = False,
    stub_cap: float | None = None,
) -> MetricScorer:
    """Return the item scorer for a metric name.

    The name is one of :data:`BUILTIN_METRICS`: ``"ir_quality"``, ``"code_quality"``,
    ``"end_to_end"``, ``"aggregate"``, ``"reference_score"`` or ``"test_pass_rate"`` (the
    last two take none of the options).

    ``code_quality`` scores with its default ``"validated"`` profile unless weighted-sum
    options are given (``weights``, a ``similarity_floor`` above 0, ``wrong_answer_gate``,
    ``stub_cap``: the plain weighted sum with them). ``similarity_floor`` applies to
    ``ir_quality`` and ``code_quality``; ``end_to_end`` takes none. A
    :class:`~lift_metrics.validation.CalibrationProfile` gives them all:
    ``builtin_scorer(name, **profile.metric_options())``.

    Raises
    ------
    ValueError
        An unknown ``name``, or an option given to a metric that does not take it.

    Examples
    --------
    >>> builtin_scorer("code_quality").options.profile
    'validated'
    >>> builtin_scorer("code_quality", weights={"syntax": 0, "tests": 1, "semantic": 0,
    ...                                         "style": 0}).weights["tests"]
    1.0
    >>> builtin_scorer("ir_quality", similarity_floor=0.44).similarity_floor
    0.44
    >>> builtin_scorer("code_quality", stub_cap=0.1).stub_cap
    0.1
    """
    if not isinstance(name, str):
        raise InputTypeError(f"name must be a metric name (str), got {type(name).__name__}")
    if name not in metric_names():
        raise InputValueError(f"metric must be one of {metric_names()}, got {name!r}")
    spec = registered_metric(name)
    options = {
        "weights": (weights, weights is not None),
        "similarity_floor": (similarity_floor, bool(similarity_floor)),
        "wrong_answer_gate": (wrong_answer_gate, wrong_answer_gate is not False),
        "stub_cap": (stub_cap, stub_cap is not None),
    }
    refused = [key for key, (_, given) in options.items() if given and key not in spec.options]
    for key in ("wrong_answer_gate", "stub_cap"):
        if key in refused:
            raise InputValueError(f"{key} applies to {_takers(key)} only, not to {name!r}")
    if refused and not {"weights", "similarity_floor"} & set(spec.options):
        raise InputValueError(f"{name} takes no weights or similarity_floor")
    if refused:
        raise InputValueError(f"{refused[0]} applies to {_takers(refused[0])} only")
    return spec.make(**{key: value for key, (value, _) in options.items() if key in spec.options})
