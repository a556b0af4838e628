"""End-to-end quality: IR quality, code quality and a latency penalty.

Formulas and metric card: docs/composite.md#end_to_end.

``end_to_end = 0.4 * ir_quality + 0.5 * code_quality + 0.1 * latency_penalty`` on plain values.
The DSPy-facing adapter that reads these values from an example and a prediction is
:class:`lift_metrics.dspy_metrics.EndToEnd`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from lift_metrics._checks import check_non_negative, check_positive, normalize_weights
from lift_metrics._keywords import keyword_arguments, takes_keywords
from lift_metrics._records import breakdown_repr, record_dict
from lift_metrics.errors import InputTypeError, InputValueError

if TYPE_CHECKING:
    import os
    from typing import Unpack

    from lift_metrics._profiles import CalibrationProfile
    from lift_metrics.code import CodeQualityOptions
    from lift_metrics.ir import IR, IRQualityBreakdown
    from lift_metrics.sandbox import Sandbox
    from lift_metrics.similarity import Embedder

__all__ = [
    "DEFAULT_E2E_WEIGHTS",
    "DEFAULT_TARGET_MS",
    "EndToEndBreakdown",
    "end_to_end",
    "end_to_end_breakdown",
    "end_to_end_from_parts",
    "latency_penalty",
]

#: Default weights: IR quality 0.4, code quality 0.5, latency 0.1.
DEFAULT_E2E_WEIGHTS: Mapping[str, float] = {"ir": 0.4, "code": 0.5, "latency": 0.1}
#: Default latency target: 16 seconds.
DEFAULT_TARGET_MS = 16_000.0


def latency_penalty(latency_ms: float, *, target_ms: float = DEFAULT_TARGET_MS) -> float:
    r"""Latency score in (0, 1]: 1 up to the target, then exponential decay.

    Despite the name (kept from the original specification) this is a higher-is-better
    score: 1.0 means no penalty.

    Parameters
    ----------
    latency_ms : float
        Observed latency in milliseconds, ``>= 0`` (``inf`` allowed: scores 0).
    target_ms : float, default 16000
        Latency budget in milliseconds, ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        For non-numeric, NaN or negative ``latency_ms``, or non-positive ``target_ms``.

    Notes
    -----
    .. math::

        p(L) = \begin{cases} 1 & L \le T \\ e^{-2 (L/T - 1)} & L > T \end{cases}

    The original specification says "50% penalty at 2x target"; its formula (kept here)
    yields :math:`e^{-2} \approx 0.135` at 2x, 0.368 at 1.5x and 0.0025 at 4x
    (docs/decisions.md#latency-penalty-formula-kept). The function is continuous at the target.

    Examples
    --------
    >>> latency_penalty(8_000)
    1.0
    >>> round(latency_penalty(32_000), 4)  # 2x the target: e^-2, not 0.5
    0.1353
    """
    latency = check_non_negative("latency_ms", latency_ms, allow_inf=True)
    target = check_positive("target_ms", target_ms)
    if latency <= target:
        return 1.0
    return math.exp(-2.0 * (latency / target - 1.0))


@dataclasses.dataclass(frozen=True, repr=False)
class EndToEndBreakdown:
    """Result of :func:`end_to_end_breakdown`.

    Attributes
    ----------
    score : float
        Weighted sum of ``components`` in [0, 1].
    components : dict
        ``{"ir", "code", "latency"}`` -> score; ``latency`` is absent when latency was not
        measured (``latency_ms=None``).
    weights : dict
        Normalised weights actually used (without ``latency`` when it was not measured).
    ir : IRQualityBreakdown or None
        The IR part's breakdown (None when it could not be computed; see ``reasons``).
    code : CodeQualityBreakdown or None
        The code part's breakdown from :func:`lift_metrics.code.code_quality_breakdown`.
    latency_ms : float or None
    reasons : tuple of str
        What lost points, each line prefixed with its part (``"ir/signature: ..."``).
    """

    score: float
    components: dict[str, float]
    weights: dict[str, float]
    ir: IRQualityBreakdown | None = None
    code: Any = None
    latency_ms: float | None = None
    reasons: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return breakdown_repr(self)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (sub-breakdowns as dicts where they offer ``to_dict``)."""
        return record_dict(
            self, code=self.code.to_dict() if hasattr(self.code, "to_dict") else None
        )


def _combine(
    components: Mapping[str, float], weights: Mapping[str, float] | None
) -> tuple[float, dict[str, float]]:
    """Return the end-to-end formula: weighted sum, ``latency`` dropped when it was not measured."""
    w = normalize_weights("weights", weights, DEFAULT_E2E_WEIGHTS)
    if "latency" not in components:
        rest = w["ir"] + w["code"]
        if rest <= 0:
            raise InputValueError(
                f"weights for 'ir' and 'code' must not both be 0 when latency_ms is None, got {w}"
            )
        w = {"ir": w["ir"] / rest, "code": w["code"] / rest}
    score = sum(w[key] * components[key] for key in w)
    return min(max(score, 0.0), 1.0), w


def end_to_end_from_parts(
    *,
    ir: IRQualityBreakdown | None,
    ir_score: float,
    code: Any,
    code_score: float,
    latency_ms: float | None,
    target_ms: float,
    weights: Mapping[str, float] | None,
    reasons: Sequence[str] = (),
) -> EndToEndBreakdown:
    """Return the end-to-end breakdown of parts already scored.

    :func:`end_to_end_breakdown` scores the IR and the code and calls this; the DSPy metric
    objects (:class:`lift_metrics.dspy_metrics.EndToEnd`) call it with their own parts.

    Parameters
    ----------
    ir : IRQualityBreakdown or None
        The IR part's breakdown (its reasons are kept, prefixed ``ir/``).
    ir_score : float
        The IR part's score in [0, 1].
    code : object
        The code part's breakdown (its ``reasons`` are kept, prefixed ``code/``) or None.
    code_score : float
        The code part's score in [0, 1].
    latency_ms : float or None
        Measured latency; None drops the latency part and renormalises the weights.
    target_ms : float
        Latency target of :func:`latency_penalty`.
    weights : mapping or None
        ``ir``/``code``/``latency`` weights (default :data:`DEFAULT_E2E_WEIGHTS`).
    reasons : sequence of str, default ()
        Reasons to put first.

    Returns
    -------
    EndToEndBreakdown

    Examples
    --------
    >>> result = end_to_end_from_parts(ir=None, ir_score=1.0, code=None, code_score=0.5,
    ...                                latency_ms=None, target_ms=16000, weights=None)
    >>> round(result.score, 4), result.weights
    (0.7222, {'ir': 0.4444444444444444, 'code': 0.5555555555555556})
    """
    components = {"ir": ir_score, "code": code_score}
    lines = list(reasons)
    if latency_ms is not None:
        components["latency"] = latency_penalty(latency_ms, target_ms=target_ms)
        if components["latency"] < 1.0 and math.isfinite(latency_ms):
            lines.append(
                f"latency: {latency_ms:.0f} ms over the {target_ms:.0f} ms target "
                f"(score {components['latency']:.3f})"
            )
    score, used = _combine(components, weights)
    if ir is not None:
        lines.extend(f"ir/{reason}" for reason in ir.reasons)
    for reason in getattr(code, "reasons", ()) or ():
        lines.append(f"code/{reason}")
    return EndToEndBreakdown(
        score=score,
        components=components,
        weights=used,
        ir=ir,
        code=code,
        latency_ms=latency_ms,
        reasons=tuple(lines),
    )


class _EndToEndInputs(TypedDict):
    """The required keywords of :func:`end_to_end`: what it scores."""

    predicted_ir: IR | Mapping[str, Any] | str
    expected_ir: IR | Mapping[str, Any] | str
    predicted_code: str
    expected_code: str
    tests: Sequence[tuple[dict[str, Any], Any]] | str
    latency_ms: float | None


class _EndToEndKeywords(_EndToEndInputs, total=False):
    """The keywords of :func:`end_to_end` and :func:`end_to_end_breakdown`; see ``_DEFAULTS``."""

    target_ms: float
    weights: Mapping[str, float] | None
    ir_weights: Mapping[str, float] | None
    code_weights: Mapping[str, float] | None
    code_profile: str | os.PathLike[str] | CalibrationProfile | CodeQualityOptions | None
    embedder: Embedder | None
    sandbox: Sandbox | None
    entry_point: str | None
    prompt: str | None
    timeout_s: float | None


#: the defaults of :class:`_EndToEndKeywords` other than None
_DEFAULTS: Mapping[str, Any] = {"target_ms": DEFAULT_TARGET_MS}


@takes_keywords(_EndToEndKeywords, _DEFAULTS)
def end_to_end_breakdown(**options: Unpack[_EndToEndKeywords]) -> EndToEndBreakdown:
    r"""Compute :func:`end_to_end` and keep the IR and code breakdowns and what lost points.

    Parameters, raised errors and the formula are those of :func:`end_to_end`.

    Returns
    -------
    EndToEndBreakdown

    Examples
    --------
    Without the embedding terms (intent and semantic weights 0, the code part as the plain
    weighted sum), so no model is loaded:

    >>> ir = {"intent": "Add a and b.", "signature": {"name": "add",
    ...       "parameters": [{"name": "a"}, {"name": "b"}]}}
    >>> result = end_to_end_breakdown(
    ...     predicted_ir=ir, expected_ir=ir,
    ...     predicted_code="def add(a, b):\n    return a - b\n",
    ...     expected_code="def add(a, b):\n    return a + b\n",
    ...     tests=[({"a": 1, "b": 2}, 3), ({"a": 0, "b": 0}, 0)], latency_ms=1_000,
    ...     ir_weights={"intent": 0, "signature": 1, "structure": 1, "constraints": 1},
    ...     code_weights={"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1})
    >>> result.components["ir"], result.code.tests_passed
    (1.0, 1)
    >>> round(result.score, 4) == round(0.4 + 0.5 * result.components["code"] + 0.1, 4)
    True
    """
    from lift_metrics.ir import IR, ir_quality_breakdown

    given = keyword_arguments(end_to_end_breakdown, options)
    latency_ms = given["latency_ms"]
    latency = (
        None if latency_ms is None else check_non_negative("latency_ms", latency_ms, allow_inf=True)
    )
    target = check_positive("target_ms", given["target_ms"])
    weights = given.get("weights")
    normalize_weights("weights", weights, DEFAULT_E2E_WEIGHTS)  # fail before the slow parts
    from lift_metrics.code import code_quality_breakdown, code_quality_options

    code_options = code_quality_options(
        given.get("code_profile"),
        weights=given.get("code_weights"),
        timeout_s=given.get("timeout_s"),
        name="code_profile",
        weights_name="code_weights",
    )
    predicted_ir, expected_ir = given["predicted_ir"], given["expected_ir"]
    for name, value in (("predicted_ir", predicted_ir), ("expected_ir", expected_ir)):
        if not isinstance(value, IR | Mapping | str | bytes):  # named here, not as ir_quality's
            raise InputTypeError(
                f"{name} must be an IR, a mapping or a JSON string, got {type(value).__name__}"
            )
    embedder = given.get("embedder")
    ir_weights = given.get("ir_weights")
    ir = ir_quality_breakdown(predicted_ir, expected_ir, weights=ir_weights, embedder=embedder)
    code = code_quality_breakdown(
        given["predicted_code"],
        given["expected_code"],
        given["tests"],
        profile=code_options,
        embedder=embedder,
        sandbox=given.get("sandbox"),
        entry_point=given.get("entry_point"),
        prompt=given.get("prompt"),
    )
    return end_to_end_from_parts(
        ir=ir,
        ir_score=ir.score,
        code=code,
        code_score=float(code.score),
        latency_ms=latency,
        target_ms=target,
        weights=weights,
    )


@takes_keywords(_EndToEndKeywords, _DEFAULTS)
def end_to_end(**options: Unpack[_EndToEndKeywords]) -> float:
    r"""End-to-end pipeline quality in [0, 1]: 0.4 IR + 0.5 code + 0.1 latency.

    All arguments are keyword-only; :func:`end_to_end_breakdown` takes the same ones and
    returns the parts and reasons behind the score.

    Parameters
    ----------
    predicted_ir, expected_ir : IR, mapping or JSON string
        Generated and ground-truth IR (see :func:`lift_metrics.ir.ir_quality`).
    predicted_code, expected_code : str
        Generated and ground-truth Python source.
    tests : sequence of (kwargs, expected) or str
        I/O cases or a HumanEval-style ``check(candidate)`` script, as
        :func:`lift_metrics.code.code_quality` takes them.
    latency_ms : float or None
        Pipeline latency in milliseconds. ``None`` means "not measured": the latency term is
        left out and the IR and code weights are rescaled to sum to 1.
    target_ms : float, default 16000
        Latency budget for :func:`latency_penalty`.
    weights : mapping, optional
        Keys ``ir``, ``code``, ``latency``; default 0.4 / 0.5 / 0.1.
    ir_weights, code_weights : mapping, optional
        Passed to :func:`lift_metrics.ir.ir_quality_breakdown` and
        :func:`lift_metrics.code.code_quality_breakdown` as ``weights`` (code weights select
        the weighted-sum family of the code metric).
    code_profile : str, path, CalibrationProfile, CodeQualityOptions or None, default None
        The code metric's profile, as ``profile`` in :func:`lift_metrics.code.code_quality`
        (None: ``"validated"``, or the plain weighted sum when ``code_weights`` is given).
    embedder, sandbox, entry_point, prompt, timeout_s
        Passed on to the IR and code metrics.

    Returns
    -------
    float

    Raises
    ------
    lift_metrics.ir.IRParseError
        When an IR given as text or dict is not a valid IR.
    TypeError, ValueError
        For bad weights, latencies or inputs.

    Notes
    -----
    .. math::

        \text{e2e} = w_{ir}\,\text{ir\_quality} + w_{code}\,\text{code\_quality}
        + w_{lat}\,\text{latency\_penalty}(L)

    The specification defines ``end_to_end(example, prediction)`` on DSPy objects; here the pure
    function takes plain values and :class:`lift_metrics.dspy_metrics.EndToEnd` is the
    DSPy-facing adapter.

    Examples
    --------
    >>> round(0.4 * 1.0 + 0.5 * 1.0 + 0.1 * latency_penalty(32_000), 4)  # perfect but 2x slow
    0.9135
    """
    return end_to_end_breakdown(**keyword_arguments(end_to_end, options)).score
