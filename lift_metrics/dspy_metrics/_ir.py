"""The IR metric object, :class:`IRQuality`, and the IR part shared with the composites."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lift_metrics._registry import registered_metric
from lift_metrics.ir import (
    DEFAULT_IR_WEIGHTS,
    IR,
    IR_UNUSABLE_FACTOR,
    IRQualityBreakdown,
    parse_ir,
)

if TYPE_CHECKING:
    from typing import Unpack

    from lift_metrics.dspy_metrics._profiles import ProfileLike
    from lift_metrics.similarity import Embedder


from lift_metrics.dspy_metrics._cache import _cache_key
from lift_metrics.dspy_metrics._derived import Source, _SpecMetric
from lift_metrics.dspy_metrics._fields import (
    _MISSING,
    _check_embedder,
    _check_field,
    _example_field,
    _ExampleError,
    _PartFailedError,
    _prediction_field,
    _read,
    _score_part,
)
from lift_metrics.dspy_metrics._profiles import (
    _weights_and_options,
)
from lift_metrics.dspy_metrics._protocol import (
    _Metric,
    _ProtocolOptions,
    _threshold_above,
)


class _IRPart(_Metric):
    """Scoring of the IR part, shared by IRQuality, EndToEnd and Aggregate."""

    def _init_ir(
        self,
        *,
        expected_ir_field: str,
        ir_field: str,
        ir_weights: Mapping[str, float] | None,
        ir_profile: ProfileLike | None,
        embedder: Embedder | None,
        names: tuple[str, str] = ("ir_weights", "ir_profile"),
    ) -> None:
        self.expected_ir_field = _check_field("expected_ir_field", expected_ir_field)
        self.ir_field = _check_field("ir_field", ir_field)
        self.ir_weights, self._ir_options, self.ir_profile = _weights_and_options(
            "ir_quality",
            weights=ir_weights,
            profile=ir_profile,
            weights_name=names[0],
            profile_name=names[1],
            defaults=DEFAULT_IR_WEIGHTS,
        )
        self.embedder = _check_embedder(embedder)

    @property
    def ir_options(self) -> Mapping[str, Any]:
        """Options passed to :func:`lift_metrics.ir.ir_quality_breakdown` besides the weights.

        Read-only; empty without a profile (the default metric), ``{"similarity_floor": ...}``
        with one.
        """
        return self._ir_options

    def _expected_ir(self, value: Any) -> IR:
        """Return the example's IR; one that is not valid raises, naming the field."""
        name = type(self).__name__
        try:
            return parse_ir(value)
        except (ValueError, TypeError) as exc:
            raise _ExampleError(
                f"{name}: example.{self.expected_ir_field} is not a valid IR: {exc}"
            ) from exc

    def _score_ir(
        self, example: Any, prediction: Any
    ) -> tuple[IRQualityBreakdown | None, float, str | None]:
        expected_value = _example_field(type(self).__name__, example, str(self.expected_ir_field))
        raw = _read(prediction, str(self.ir_field))
        key = ("ir", _cache_key(expected_value), _cache_key(raw)) if raw is not _MISSING else None
        cached = self._cache.get(key) if key is not None else _MISSING
        if isinstance(cached, IRQualityBreakdown):
            return cached, cached.score, None
        expected = self._expected_ir(expected_value)
        result, failure = _score_part(
            "ir",
            lambda: self._ir_breakdown(prediction, expected),
            core="ir_quality",
            log="ir_quality raised; scoring the IR part 0",
        )
        if result is None:
            return None, 0.0, failure
        if key is not None:
            self._cache.put(key, result)
        return result, result.score, None

    def _ir_breakdown(self, prediction: Any, expected: IR) -> IRQualityBreakdown:
        """Return the IR part's breakdown; a prediction without a usable IR raises."""
        predicted = self._predicted_ir(_prediction_field(prediction, str(self.ir_field)))
        result: IRQualityBreakdown = self._ir_scorer().compute(
            {"predicted": predicted, "expected": expected}
        )
        return result

    def _predicted_ir(self, raw: Any) -> IR:
        """Return the predicted IR; a value that is not one raises :class:`_PartFailedError`."""
        if not isinstance(raw, IR | Mapping | str | bytes):
            raise _PartFailedError(
                f"prediction.{self.ir_field} is a {type(raw).__name__}, "
                "not an IR, dict or JSON text"
            )
        try:
            return parse_ir(raw)
        except ValueError as exc:
            raise _PartFailedError(f"prediction.{self.ir_field} is not a valid IR: {exc}") from exc

    def _ir_scorer(self) -> Any:
        """Return the ``ir_quality`` scorer with this object's weights, embedder and options."""
        return self._registered_scorer(
            "ir_quality", weights=self.ir_weights, embedder=self.embedder, **self._ir_options
        )


class IRQuality(_IRPart, _SpecMetric):
    """:func:`lift_metrics.ir.ir_quality` as a DSPy metric.

    The registered ``ir_quality`` metric's object (as :class:`DSPyMetric` makes it), with
    the IR read from ``ir_field`` and ``expected_ir_field``, calibrated profiles by name,
    and the score reported as the one part ``ir``.

    Parameters
    ----------
    expected_ir_field : str, default "expected_ir"
        Example field with the ground-truth IR (IR, dict or JSON text).
    ir_field : str, default "ir"
        Prediction field with the generated IR (IR, dict, or text that :func:`parse_ir`
        accepts: JSON, fenced JSON, JSON after prose).
    weights : mapping, optional
        ``intent``/``signature``/``structure``/``constraints``; default 0.3/0.3/0.2/0.2.
        Normalised to sum to 1 in the attribute ``ir_weights``.
    profile : CalibrationProfile, path or "shipped", optional
        A calibrated ``ir_quality`` profile (:func:`lift_metrics.validation.load_profile`):
        a :class:`~lift_metrics.validation.CalibrationProfile`, the path of a profile file,
        or ``"shipped"`` for ``datasets/labels/calibrated_ir_quality.json``. Its weights
        replace the defaults (giving ``weights`` too is an error) and its other options
        (``similarity_floor``) are passed to :func:`lift_metrics.ir.ir_quality_breakdown`
        on every call; they are in the read-only attribute ``ir_options`` (empty without a
        profile: the default metric). A profile for another metric raises ValueError.
    embedder : Embedder, optional
        For intent similarity; default the bundled all-MiniLM-L6-v2.
    threshold : float or None, default None
        ``score >= threshold`` is a success when bootstrapping demonstrations. None: 0.05
        above :data:`lift_metrics.ir.IR_UNUSABLE_FACTOR` (0.75), the most an IR with a
        usability defect can score (a wrong function name or parameters, a generic, negated
        or opposite intent, self-contradicting constraints; docs/ir.md#usability), so that no
        such IR becomes a demonstration.
    history_size : int, default 256
        How many recent breakdowns :attr:`history` keeps (0 keeps none).
    trace_returns : {"bool", "float"}, default "bool"
        What the metric returns when DSPy passes a ``trace`` (bootstrapping demonstrations).
        ``"bool"``: ``score >= threshold``; ``BootstrapFewShot(metric_threshold=...)`` then
        compares that bool (``True >= 0.8`` holds), so only ``threshold`` decides.
        ``"float"``: the score itself, for ``BootstrapFewShot(metric=...,
        metric_threshold=t)`` to compare with ``t``; give ``metric_threshold`` then, since
        DSPy takes any non-zero float as success without one.
    cache_size : int, default 4096
        How many part results to remember. A part (the IR part, the code part) whose inputs
        were scored before - same prediction value, same reference, same tests - is not
        recomputed: optimizers score the same outputs again and again (DSPy caches LM
        answers), and the cache also makes repeated scores identical. 0 disables it (for
        example for generated code whose behaviour is random). Latency and cost are never
        cached.
    reveal_expected : bool, default False
        What GEPA's feedback quotes. False: which part of the IR is wrong, quoting only the
        predicted IR (:attr:`MetricBreakdown.hints`), never the expected intent, names,
        types or effects. True (opt-in): the full reasons, which quote the expected IR: an
        answer key that a reflection LM can copy into the prompt, so that the score climbs
        on the training examples without the program getting better on new ones.

    Examples
    --------
    >>> ir = {"intent": {"description": "Add a and b."}, "signature": {"name": "add"}}
    >>> metric = IRQuality(weights={"intent": 0, "signature": 1, "structure": 1, "constraints": 1})
    >>> metric({"expected_ir": ir}, {"ir": ir})
    1.0
    >>> metric({"expected_ir": ir}, {"ir": "not json"})
    0.0
    >>> print(metric.history[-1].reasons[0])
    ir: scored 0 because prediction.ir is not a valid IR: no JSON object found in the text ...

    The shipped calibrated profile (fitted weights and a floor for the intent similarity):

    >>> calibrated = IRQuality(profile="shipped")
    >>> dict(calibrated.ir_options), round(calibrated.ir_weights["intent"], 3)
    ({'similarity_floor': 0.44}, 0.474)
    """

    _part = "ir"
    _reads_none = True

    def __init__(
        self,
        *,
        expected_ir_field: str = "expected_ir",
        ir_field: str = "ir",
        weights: Mapping[str, float] | None = None,
        profile: ProfileLike | None = None,
        embedder: Embedder | None = None,
        threshold: float | None = None,
        **options: Unpack[_ProtocolOptions],
    ) -> None:
        super().__init__(threshold=threshold, **options)
        self._init_ir(
            expected_ir_field=expected_ir_field,
            ir_field=ir_field,
            ir_weights=weights,
            ir_profile=profile,
            embedder=embedder,
            names=("weights", "profile"),
        )
        self._bind_fields(
            registered_metric("ir_quality"),
            {
                "predicted": f"prediction.{self.ir_field}",
                "expected": f"example.{self.expected_ir_field}",
            },
        )
        if threshold is None:
            self.threshold = _threshold_above(IR_UNUSABLE_FACTOR)

    def __repr__(self) -> str:
        return (
            f"IRQuality(expected_ir_field={self.expected_ir_field!r}, ir_field={self.ir_field!r}, "
            f"threshold={self.threshold})"
        )

    def _scorer(self) -> Any:
        return self._ir_scorer()

    def _read_field(self, field: Any, source: Source, raw: Any) -> Any:
        """Return the predicted or the expected IR, read the way the composites read it."""
        if source is not None and source[0] == "prediction":
            return self._predicted_ir(raw)
        return self._expected_ir(raw)

    def _naming_hint(self, field: Any) -> str:
        return "pass the right field name to IRQuality(...)"
