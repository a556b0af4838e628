"""The composite metric objects: :class:`EndToEnd` (IR, code, latency) and :class:`Aggregate`."""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lift_metrics._checks import (
    check_bool,
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
    IR_UNUSABLE_FACTOR,
    IRQualityBreakdown,
)

if TYPE_CHECKING:
    from typing import Unpack

    from lift_metrics.code import CodeQualityOptions
    from lift_metrics.dspy_metrics._measured import Measurement
    from lift_metrics.dspy_metrics._profiles import ProfileLike
    from lift_metrics.similarity import Embedder


from lift_metrics.dspy_metrics._code import _CodeOptions, _CodePart
from lift_metrics.dspy_metrics._fields import _check_field, _number_field
from lift_metrics.dspy_metrics._ir import _IRPart
from lift_metrics.dspy_metrics._protocol import (
    MetricBreakdown,
    _threshold_above,
)

logger = logging.getLogger(__name__)


class _EndToEndOptions(_CodeOptions, total=False):
    """The keywords of :class:`EndToEnd`, which :class:`Aggregate` passes on to it."""

    expected_ir_field: str
    ir_field: str
    expected_code_field: str
    latency_field: str | None
    target_ms: float
    weights: Mapping[str, float] | None
    ir_weights: Mapping[str, float] | None
    code_weights: Mapping[str, float] | None
    ir_profile: ProfileLike | None
    code_profile: ProfileLike | CodeQualityOptions | None
    embedder: Embedder | None
    require_usable_ir: bool


class EndToEnd(_IRPart, _CodePart):
    """:func:`lift_metrics.composite.end_to_end` as a DSPy metric (0.4 IR, 0.5 code, 0.1 latency).

    Parameters
    ----------
    expected_ir_field, ir_field
        As in :class:`IRQuality`.
    expected_code_field, tests_field, entry_point_field, code_field
        As in :class:`CodeQuality`.
    latency_field : str or None, default None
        Where the latency comes from. None: the latency measured while the program ran
        (:class:`Measurement`, recorded by the project's runner and pipeline, by
        :func:`measured` around your own program or by :func:`record_measurement`), which
        nothing in the prediction can set. A prediction without a measurement: the latency
        part is left out (the IR and code weights rescaled to sum to 1) and a reason says so.
        A field name (opt-in): read the latency in ms from that prediction field, trusting
        the program and its LM outputs (a missing or unusable value scores 0 on latency).
    target_ms : float, default 16000
        Latency budget for :func:`lift_metrics.composite.latency_penalty`.
    weights : mapping, optional
        ``ir``/``code``/``latency``; default 0.4/0.5/0.1. An ``ir`` weight of 0 scores a
        single-step program without an IR: neither the example's ``expected_ir`` field nor
        the prediction's IR is read, the breakdown has no ``ir`` part, and the attribute
        ``scores_ir`` is False. A ``latency`` weight of 0 leaves latency out (attribute
        ``scores_latency`` False).
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
    require_all_tests : bool, default True
        Under a trace, code that fails any test, or disagrees with the reference on a
        generated input, is rejected whatever the score (see :class:`CodeQuality`): only
        code that passes every test and agrees everywhere it was compared becomes a
        demonstration.
    require_usable_ir : bool, default True
        Under a trace, an IR that :class:`IRQuality` would reject (its score below
        IRQuality's default threshold, 0.75: a wrong name or parameters, a wrong or generic
        intent, ...) rejects the demonstration whatever the code and the total: passing code
        does not carry an unusable IR into the IR predictor's demonstrations.
    reveal_expected : bool, default False
        GEPA's feedback quotes neither the expected IR nor expected test values; True
        (opt-in) quotes both (see :class:`IRQuality` and :class:`CodeQuality`).
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
        latency_field: str | None = None,
        target_ms: float = DEFAULT_TARGET_MS,
        weights: Mapping[str, float] | None = None,
        ir_weights: Mapping[str, float] | None = None,
        code_weights: Mapping[str, float] | None = None,
        ir_profile: ProfileLike | None = None,
        code_profile: ProfileLike | CodeQualityOptions | None = None,
        embedder: Embedder | None = None,
        threshold: float | None = None,
        require_usable_ir: bool = True,
        **options: Unpack[_CodeOptions],
    ) -> None:
        super().__init__(threshold=threshold, **options)
        self.require_usable_ir = check_bool("require_usable_ir", require_usable_ir)
        self._init_ir(
            expected_ir_field=expected_ir_field,
            ir_field=ir_field,
            ir_weights=ir_weights,
            ir_profile=ir_profile,
            embedder=embedder,
        )
        self._init_code(
            expected_code_field=expected_code_field,
            code_weights=code_weights,
            code_profile=code_profile,
            embedder=embedder,
        )
        self.latency_field = _check_field("latency_field", latency_field, optional=True)
        self.target_ms = check_positive("target_ms", target_ms)
        self.weights = normalize_weights("weights", weights, DEFAULT_E2E_WEIGHTS)
        if self.weights["ir"] + self.weights["code"] <= 0:
            raise InputValueError(
                f"weights for 'ir' and 'code' must not both be 0 (latency may be unknown), "
                f"got {weights}"
            )
        #: an IR weight of 0: a program without an IR (no IR read from example or prediction)
        self.scores_ir = self.weights["ir"] > 0
        #: a latency weight of 0: latency is not scored (measured or not)
        self.scores_latency = self.weights["latency"] > 0
        self._warned_unmeasured = False
        self._part_fields = {"code": str(self.code_field)}
        if self.scores_ir:
            self._part_fields["ir"] = str(self.ir_field)
        if self.scores_latency and self.latency_field is not None:
            self._part_fields["latency"] = self.latency_field
        if threshold is None:  # Aggregate sets its own once its weights are known
            self.threshold = _threshold_above(EndToEnd._failing_ceiling(self))

    def _ir_usable(self, e2e: EndToEndBreakdown) -> bool | None:
        """Whether the IR clears IRQuality's default threshold (None: not checked)."""
        if not (self.scores_ir and self.require_usable_ir) or "ir" not in e2e.components:
            return None
        return e2e.components["ir"] >= _threshold_above(IR_UNUSABLE_FACTOR)

    def _failing_ceiling(self) -> float:
        """Return the best score of an output whose code fails every test (all else perfect)."""
        w = dict(self.weights)
        if not self.scores_latency:
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
        latency, latency_reason = self._latency(prediction)
        if latency_reason and self.scores_latency:
            reasons.append(latency_reason)
        result = end_to_end_from_parts(
            ir=ir,
            ir_score=ir_score,
            code=None,  # code reasons are added below with the failing tests spelled out
            code_score=code_score,
            latency_ms=latency if self.scores_latency else None,
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

    def _measured(self, prediction: Any, what: str) -> tuple[Measurement | None, str | None]:
        """Return the prediction's :class:`Measurement`, or (None, the reason there is none)."""
        from lift_metrics.dspy_metrics._measured import measurement_of

        measurement = measurement_of(prediction)
        if measurement is not None:
            return measurement, None
        if not self._warned_unmeasured:
            self._warned_unmeasured = True
            logger.warning(
                "%s: a prediction has no measured %s, so that part is left out. Run the "
                "program through lift_metrics.dspy_metrics.measured(program) (or "
                "record_measurement); the prediction's own fields are read only when "
                "latency_field/cost_field name them.",
                type(self).__name__,
                what,
            )
        return None, (
            f"{what}: not scored (part left out): no measurement for this prediction; "
            f"its fields are not trusted"
        )

    def _latency(self, prediction: Any) -> tuple[float | None, str | None]:
        """Return the latency in ms (None: unknown) and the reason it is unknown or 0."""
        if self.latency_field is not None:
            latency, failure = _number_field(prediction, self.latency_field, "milliseconds")
            return latency, f"latency: scored 0 because {failure}" if failure else None
        measurement, reason = self._measured(prediction, "latency")
        return (None, reason) if measurement is None else (measurement.latency_ms, None)

    def _hints(self, e2e: EndToEndBreakdown, entry_point: str | None) -> list[str]:
        """Return ``e2e.reasons`` as hints: IR and code lines without the reference."""
        lines = [r for r in e2e.reasons if not r.startswith(("ir/", "code/"))]
        if e2e.ir is not None:
            lines.extend(f"ir/{hint}" for hint in e2e.ir.hints)
        lines.extend(self._code_reasons(e2e.code, entry_point, "code/", reveal_expected=False))
        return lines

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair; see the class docstring."""
        e2e, _ = self._end_to_end(example, prediction)
        return MetricBreakdown(
            "EndToEnd",
            e2e.score,
            dict(e2e.components),
            dict(e2e.weights),
            e2e.reasons,
            hints=tuple(self._hints(e2e, self._task_fields(example)[0])),
            all_tests_passed=self._tests_verdict(example, e2e.code),
            ir=e2e.ir,
            code=e2e.code,
            end_to_end=e2e,
            ir_usable=self._ir_usable(e2e),
        )


class Aggregate(EndToEnd):
    """:func:`lift_metrics.composite.aggregate_metric` as a DSPy metric.

    Quality is the mean of the IR, code and end-to-end scores, cost and latency are
    normalised against ceilings (docs/composite.md#aggregate_metric); default weights
    0.7 / 0.2 / 0.1.

    Parameters
    ----------
    latency_field, cost_field : str or None, default None
        Where latency and cost come from. None: the :class:`Measurement` recorded while the
        program ran (the runner's clock; the billed usage of its LM calls priced with
        litellm's price table), which nothing in the prediction can set. Without a
        measurement (or with a cost that is unknown because a model has no price) that
        part is left out and the other aggregate weights are rescaled, with a reason. A
        field name (opt-in): read the value from that prediction field, trusting the
        program and its LM outputs; a missing or unusable value scores 0 there (an
        unknown cost is not free).
    aggregate_weights : mapping, optional
        ``quality``/``cost``/``latency``; default 0.7/0.2/0.1.
    cost_ceiling_usd : float, default 0.10
    latency_ceiling_ms : float, default 60000
    weights : mapping, optional
        The end-to-end weights, as in :class:`EndToEnd`. An ``ir`` weight of 0 scores a
        program without an IR: no ``expected_ir`` field is needed, and quality is the mean
        of the code and end-to-end scores (:func:`lift_metrics.composite.aggregate_metric`
        with ``ir_score=None``).
    gated : bool, default True
        Count cost and latency in proportion to the code score
        (:func:`lift_metrics.composite.aggregate_metric` with ``gated=True``): code that
        fails every test (code score at most 0.2) earns at most a fifth of the cost and
        latency weight, so being cheap or fast cannot lift it above correct code. False: the
        specification's ungated weighted sum.
    threshold : float or None, default None
        None: 0.05 above the best aggregate an output whose code fails every test can reach
        (perfect IR, free, instant). With the default weights and the validated code
        profile: quality ``(1 + 0.2 + 0.6) / 3 = 0.6``, aggregate ``0.7 * 0.6 + 0.2 * (0.2 +
        0.1) = 0.48``, so the default is 0.53 (0.77 ungated).
    others
        As in :class:`EndToEnd` (``weights`` are the end-to-end weights; ``ir_profile`` and
        ``code_profile`` the profiles of the IR and code parts).

    Examples
    --------
    >>> Aggregate().threshold
    0.53
    >>> Aggregate(gated=False).threshold
    0.77
    """

    def __init__(
        self,
        *,
        cost_field: str | None = None,
        aggregate_weights: Mapping[str, float] | None = None,
        cost_ceiling_usd: float = DEFAULT_COST_CEILING_USD,
        latency_ceiling_ms: float = DEFAULT_LATENCY_CEILING_MS,
        threshold: float | None = None,
        gated: bool = True,
        **options: Unpack[_EndToEndOptions],
    ) -> None:
        super().__init__(threshold=threshold, **options)
        self.cost_field = _check_field("cost_field", cost_field, optional=True)
        self.gated = check_bool("gated", gated)
        self.aggregate_weights = normalize_weights(
            "aggregate_weights", aggregate_weights, DEFAULT_AGGREGATE_WEIGHTS
        )
        self.cost_ceiling_usd = check_positive("cost_ceiling_usd", cost_ceiling_usd)
        self.latency_ceiling_ms = check_positive("latency_ceiling_ms", latency_ceiling_ms)
        if self.cost_field is not None:
            self._part_fields["cost"] = self.cost_field
        if self.latency_field is not None:
            self._part_fields["latency"] = self.latency_field
        if threshold is None:
            self.threshold = _threshold_above(self._failing_ceiling())

    def _cost(self, prediction: Any) -> tuple[float | None, str | None]:
        """Return the cost in USD (None: unknown) and the reason it is unknown or 0."""
        if self.cost_field is not None:
            cost, failure = _number_field(prediction, self.cost_field, "US dollars")
            return cost, f"cost: scored 0 because {failure}" if failure else None
        measurement, reason = self._measured(prediction, "cost")
        if measurement is None:
            return None, reason
        if math.isnan(measurement.cost_usd):
            return None, "cost: not scored (part left out): an LM call of it has no known price"
        return measurement.cost_usd, None

    def _failing_ceiling(self) -> float:
        """Return the best aggregate of an output whose code fails every test (all else perfect)."""
        e2e = EndToEnd._failing_ceiling(self)
        code = self._failing_code_ceiling()
        parts = [code, e2e] + ([1.0] if self.scores_ir else [])
        quality = sum(parts) / len(parts)
        w = self.aggregate_weights
        gate = code if self.gated else 1.0
        return w["quality"] * quality + gate * (w["cost"] + w["latency"])

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair; see the class docstring."""
        e2e, latency = self._end_to_end(example, prediction)
        cost, cost_reason = self._cost(prediction)
        agg = aggregate_breakdown(
            e2e.components.get("ir"),  # absent with an IR weight of 0
            e2e.components["code"],
            e2e.score,
            cost,
            latency,
            weights=self.aggregate_weights,
            cost_ceiling_usd=self.cost_ceiling_usd,
            latency_ceiling_ms=self.latency_ceiling_ms,
            gated=self.gated,
        )
        reasons = list(e2e.reasons)
        extra: list[str] = []
        if not self.scores_latency:  # the end-to-end part did not say why latency is unknown
            _, latency_reason = self._latency(prediction)
            if latency_reason:
                extra.append(latency_reason)
        if cost_reason:
            extra.append(cost_reason)
        elif cost is not None and agg.components["cost"] < 1.0:
            extra.append(
                f"cost: ${cost:.4f} per request (score {agg.components['cost']:.3f}; "
                f"${self.cost_ceiling_usd:.2f} scores 0)"
            )
        if latency is not None and agg.components["latency"] < 1.0 and not self.scores_latency:
            extra.append(
                f"latency: {latency:.0f} ms (score {agg.components['latency']:.3f}; "
                f"{self.latency_ceiling_ms:.0f} ms scores 0)"
            )
        if agg.gate < 1.0 and len(agg.components) > 1:
            extra.append(
                f"cost and latency: counted at {agg.gate:.3f} of their weight (the code score)"
            )
        reasons.extend(extra)
        hints = self._hints(e2e, self._task_fields(example)[0]) + extra
        return MetricBreakdown(
            "Aggregate",
            agg.score,
            dict(agg.components),
            dict(agg.weights),
            tuple(reasons),
            hints=tuple(hints),
            all_tests_passed=self._tests_verdict(example, e2e.code),
            ir=e2e.ir,
            code=e2e.code,
            end_to_end=e2e,
            aggregate=agg,
            ir_usable=self._ir_usable(e2e),
        )
