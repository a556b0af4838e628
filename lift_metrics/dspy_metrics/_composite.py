"""The composite metric objects: :class:`EndToEnd` (IR, code, latency) and :class:`Aggregate`."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lift_metrics._checks import (
    check_positive,
    normalize_weights,
)
from lift_metrics.composite import (
    DEFAULT_AGGREGATE_WEIGHTS,
    DEFAULT_COST_CEILING_USD,
    DEFAULT_E2E_WEIGHTS,
    DEFAULT_LATENCY_CEILING_MS,
    DEFAULT_TARGET_MS,
    EndToEndBreakdown,
    aggregate_breakdown,
    end_to_end_from_parts,
)
from lift_metrics.errors import InputValueError
from lift_metrics.ir import (
    IRQualityBreakdown,
)

if TYPE_CHECKING:
    from lift_metrics.code import CodeQualityOptions
    from lift_metrics.dspy_metrics._profiles import ProfileLike
    from lift_metrics.sandbox import Sandbox
    from lift_metrics.similarity import Embedder


from lift_metrics.dspy_metrics._code import _CodePart
from lift_metrics.dspy_metrics._fields import _check_field, _number_field
from lift_metrics.dspy_metrics._ir import _IRPart
from lift_metrics.dspy_metrics._protocol import (
    MetricBreakdown,
    TraceReturns,
    _Metric,
    _threshold_above,
)


class EndToEnd(_IRPart, _CodePart, _Metric):
    """:func:`lift_metrics.composite.end_to_end` as a DSPy metric (0.4 IR, 0.5 code, 0.1 latency).

    Parameters
    ----------
    expected_ir_field, ir_field
        As in :class:`IRQuality`.
    expected_code_field, tests_field, entry_point_field, code_field
        As in :class:`CodeQuality`.
    latency_field : str or None, default "latency_ms"
        Prediction field with the pipeline latency in ms. None: latency is not scored and the
        IR and code weights are rescaled to sum to 1. A prediction without a usable latency
        scores 0 on latency.
    target_ms : float, default 16000
        Latency budget for :func:`lift_metrics.composite.latency_penalty`.
    weights : mapping, optional
        ``ir``/``code``/``latency``; default 0.4/0.5/0.1. An ``ir`` weight of 0 scores a
        single-step program without an IR: neither the example's ``expected_ir`` field nor
        the prediction's IR is read, the breakdown has no ``ir`` part, and the attribute
        ``scores_ir`` is False.
    ir_weights, code_weights : mapping, optional
        Weights inside the IR and code metrics.
    ir_profile, code_profile : optional
        Profiles of the IR and code parts, as ``profile`` in :class:`IRQuality` and
        :class:`CodeQuality` (``"shipped"`` picks the shipped profile of each metric; the
        code part defaults to ``"validated"``). A calibrated profile replaces
        ``ir_weights``/``code_weights`` (giving both is an error); its other options are in
        the read-only attributes ``ir_options`` and ``code_options``.
    prompt_field
        As in :class:`CodeQuality`.
    threshold : float or None, default None
        ``score >= threshold`` accepts a demonstration when bootstrapping. None: 0.05 above
        the best score an output whose code fails every test can reach with a perfect IR
        and latency (at least 0.5). With the default weights and the validated code
        profile that best is ``0.4 + 0.5 * 0.2 + 0.1 = 0.6``, so the default is 0.65: a
        perfect IR cannot carry failing code into the demonstrations.
    embedder, sandbox, timeout_s, history_size, cache_size, trace_returns
        As in :class:`CodeQuality`.

    Examples
    --------
    >>> EndToEnd().threshold
    0.65
    >>> metric = EndToEnd(ir_profile="shipped", code_profile="shipped")
    >>> dict(metric.ir_options)
    {'similarity_floor': 0.44}
    >>> dict(metric.code_options)
    {'similarity_floor': 0.44, 'wrong_answer_gate': True, 'stub_cap': 0.1}
    """

    def __init__(
        self,
        *,
        expected_ir_field: str = "expected_ir",
        ir_field: str = "ir",
        expected_code_field: str = "expected_code",
        tests_field: str | None = "tests",
        entry_point_field: str | None = "entry_point",
        prompt_field: str | None = "prompt",
        code_field: str = "code",
        latency_field: str | None = "latency_ms",
        target_ms: float = DEFAULT_TARGET_MS,
        weights: Mapping[str, float] | None = None,
        ir_weights: Mapping[str, float] | None = None,
        code_weights: Mapping[str, float] | None = None,
        ir_profile: ProfileLike | None = None,
        code_profile: ProfileLike | CodeQualityOptions | None = None,
        embedder: Embedder | None = None,
        sandbox: Sandbox | None = None,
        timeout_s: float | None = None,
        threshold: float | None = None,
        history_size: int = 256,
        cache_size: int = 4096,
        trace_returns: TraceReturns = "bool",
    ) -> None:
        _Metric.__init__(
            self,
            threshold=threshold,
            history_size=history_size,
            cache_size=cache_size,
            trace_returns=trace_returns,
        )
        self._init_ir(
            expected_ir_field=expected_ir_field,
            ir_field=ir_field,
            ir_weights=ir_weights,
            ir_profile=ir_profile,
            embedder=embedder,
        )
        self._init_code(
            expected_code_field=expected_code_field,
            tests_field=tests_field,
            entry_point_field=entry_point_field,
            prompt_field=prompt_field,
            code_field=code_field,
            code_weights=code_weights,
            code_profile=code_profile,
            embedder=embedder,
            sandbox=sandbox,
            timeout_s=timeout_s,
        )
        self.latency_field = _check_field("latency_field", latency_field, optional=True)
        self.target_ms = check_positive("target_ms", target_ms)
        self.weights = normalize_weights("weights", weights, DEFAULT_E2E_WEIGHTS)
        if self.latency_field is None and self.weights["ir"] + self.weights["code"] <= 0:
            raise InputValueError(
                f"weights for 'ir' and 'code' must not both be 0 without latency, got {weights}"
            )
        #: an IR weight of 0: a program without an IR (no IR read from example or prediction)
        self.scores_ir = self.weights["ir"] > 0
        self._part_fields = {"code": str(self.code_field)}
        if self.scores_ir:
            self._part_fields["ir"] = str(self.ir_field)
        if self.latency_field is not None:
            self._part_fields["latency"] = self.latency_field
        if threshold is None:  # Aggregate sets its own once its weights are known
            self.threshold = _threshold_above(EndToEnd._failing_ceiling(self))

    def _failing_ceiling(self) -> float:
        """Return the best score of an output whose code fails every test (all else perfect)."""
        w = dict(self.weights)
        if self.latency_field is None:
            rest = w["ir"] + w["code"]
            w = {"ir": w["ir"] / rest, "code": w["code"] / rest, "latency": 0.0}
        return w["ir"] + w["latency"] + w["code"] * self._failing_code_ceiling()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(ir_field={self.ir_field!r}, code_field={self.code_field!r}, "
            f"latency_field={self.latency_field!r}, threshold={self.threshold})"
        )

    def _end_to_end(self, example: Any, prediction: Any) -> tuple[EndToEndBreakdown, float | None]:
        ir: IRQualityBreakdown | None = None
        ir_score, ir_failure = 0.0, None
        if self.scores_ir:
            ir, ir_score, ir_failure = self._score_ir(example, prediction)
        code, code_score, code_failure, entry_point = self._score_code(example, prediction)
        reasons = [r for r in (ir_failure, code_failure) if r]
        latency: float | None = None
        if self.latency_field is not None:
            latency, latency_failure = _number_field(prediction, self.latency_field, "milliseconds")
            if latency_failure:
                reasons.append(f"latency: scored 0 because {latency_failure}")
        result = end_to_end_from_parts(
            ir=ir,
            ir_score=ir_score,
            code=None,  # code reasons are added below with the failing tests spelled out
            code_score=code_score,
            latency_ms=latency,
            target_ms=self.target_ms,
            weights=self.weights,
            reasons=reasons,
        )
        code_lines = self._code_reasons(code, entry_point, "code/")
        result = dataclasses.replace(result, code=code, reasons=result.reasons + tuple(code_lines))
        if not self.scores_ir:  # weight 0: the part is absent, not a 0
            result = dataclasses.replace(
                result,
                components={k: v for k, v in result.components.items() if k != "ir"},
                weights={k: v for k, v in result.weights.items() if k != "ir"},
            )
        return result, latency

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair; see the class docstring."""
        e2e, _ = self._end_to_end(example, prediction)
        return MetricBreakdown(
            "EndToEnd",
            e2e.score,
            dict(e2e.components),
            dict(e2e.weights),
            e2e.reasons,
            ir=e2e.ir,
            code=e2e.code,
            end_to_end=e2e,
        )


class Aggregate(EndToEnd):
    """:func:`lift_metrics.composite.aggregate_metric` as a DSPy metric.

    Quality is the mean of the IR, code and end-to-end scores, cost and latency are
    normalised against ceilings (docs/composite.md#aggregate_metric); default weights
    0.7 / 0.2 / 0.1.

    Parameters
    ----------
    cost_field : str, default "cost_usd"
        Prediction field with the request's cost in USD. A prediction without a usable cost
        scores 0 on cost (an unknown cost is not free).
    aggregate_weights : mapping, optional
        ``quality``/``cost``/``latency``; default 0.7/0.2/0.1.
    cost_ceiling_usd : float, default 0.10
    latency_ceiling_ms : float, default 60000
    latency_field : str, default "latency_ms"
        Required here (the aggregate always scores latency).
    weights : mapping, optional
        The end-to-end weights, as in :class:`EndToEnd`. An ``ir`` weight of 0 scores a
        program without an IR: no ``expected_ir`` field is needed, and quality is the mean
        of the code and end-to-end scores (:func:`lift_metrics.composite.aggregate_metric`
        with ``ir_score=None``).
    threshold : float or None, default None
        None: 0.05 above the best aggregate an output whose code fails every test can reach
        (perfect IR, free, instant). With the default weights and the validated code
        profile: quality ``(1 + 0.2 + 0.6) / 3 = 0.6``, aggregate ``0.7 * 0.6 + 0.2 + 0.1 =
        0.72``, so the default is 0.77.
    others
        As in :class:`EndToEnd` (``weights`` are the end-to-end weights; ``ir_profile`` and
        ``code_profile`` the profiles of the IR and code parts).

    Examples
    --------
    >>> Aggregate().threshold
    0.77
    """

    def __init__(
        self,
        *,
        expected_ir_field: str = "expected_ir",
        ir_field: str = "ir",
        expected_code_field: str = "expected_code",
        tests_field: str | None = "tests",
        entry_point_field: str | None = "entry_point",
        prompt_field: str | None = "prompt",
        code_field: str = "code",
        latency_field: str = "latency_ms",
        cost_field: str = "cost_usd",
        target_ms: float = DEFAULT_TARGET_MS,
        weights: Mapping[str, float] | None = None,
        aggregate_weights: Mapping[str, float] | None = None,
        ir_weights: Mapping[str, float] | None = None,
        code_weights: Mapping[str, float] | None = None,
        ir_profile: ProfileLike | None = None,
        code_profile: ProfileLike | CodeQualityOptions | None = None,
        cost_ceiling_usd: float = DEFAULT_COST_CEILING_USD,
        latency_ceiling_ms: float = DEFAULT_LATENCY_CEILING_MS,
        embedder: Embedder | None = None,
        sandbox: Sandbox | None = None,
        timeout_s: float | None = None,
        threshold: float | None = None,
        history_size: int = 256,
        cache_size: int = 4096,
        trace_returns: TraceReturns = "bool",
    ) -> None:
        if latency_field is None:
            raise InputValueError(
                "latency_field must name a prediction field for Aggregate, got None"
            )
        super().__init__(
            expected_ir_field=expected_ir_field,
            ir_field=ir_field,
            expected_code_field=expected_code_field,
            tests_field=tests_field,
            entry_point_field=entry_point_field,
            prompt_field=prompt_field,
            code_field=code_field,
            latency_field=latency_field,
            target_ms=target_ms,
            weights=weights,
            ir_weights=ir_weights,
            code_weights=code_weights,
            ir_profile=ir_profile,
            code_profile=code_profile,
            embedder=embedder,
            sandbox=sandbox,
            timeout_s=timeout_s,
            threshold=threshold,
            history_size=history_size,
            cache_size=cache_size,
            trace_returns=trace_returns,
        )
        self.cost_field = _check_field("cost_field", cost_field)
        self.aggregate_weights = normalize_weights(
            "aggregate_weights", aggregate_weights, DEFAULT_AGGREGATE_WEIGHTS
        )
        self.cost_ceiling_usd = check_positive("cost_ceiling_usd", cost_ceiling_usd)
        self.latency_ceiling_ms = check_positive("latency_ceiling_ms", latency_ceiling_ms)
        self._part_fields["cost"] = str(self.cost_field)
        if threshold is None:
            self.threshold = _threshold_above(self._failing_ceiling())

    def _failing_ceiling(self) -> float:
        """Return the best aggregate of an output whose code fails every test (all else perfect)."""
        e2e = EndToEnd._failing_ceiling(self)
        parts = [self._failing_code_ceiling(), e2e] + ([1.0] if self.scores_ir else [])
        quality = sum(parts) / len(parts)
        w = self.aggregate_weights
        return w["quality"] * quality + w["cost"] + w["latency"]

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair; see the class docstring."""
        e2e, latency = self._end_to_end(example, prediction)
        cost, cost_failure = _number_field(prediction, str(self.cost_field), "US dollars")
        agg = aggregate_breakdown(
            e2e.components.get("ir"),  # absent with an IR weight of 0
            e2e.components["code"],
            e2e.score,
            cost,
            math.inf if latency is None else latency,
            weights=self.aggregate_weights,
            cost_ceiling_usd=self.cost_ceiling_usd,
            latency_ceiling_ms=self.latency_ceiling_ms,
        )
        reasons = list(e2e.reasons)
        if cost_failure:
            reasons.append(f"cost: scored 0 because {cost_failure}")
        elif agg.components["cost"] < 1.0:
            reasons.append(
                f"cost: ${cost:.4f} per request (score {agg.components['cost']:.3f}; "
                f"${self.cost_ceiling_usd:.2f} scores 0)"
            )
        return MetricBreakdown(
            "Aggregate",
            agg.score,
            dict(agg.components),
            dict(agg.weights),
            tuple(reasons),
            ir=e2e.ir,
            code=e2e.code,
            end_to_end=e2e,
            aggregate=agg,
        )
