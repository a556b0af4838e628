"""One optimization target from quality, cost and latency (docs/composite.md#aggregate_metric)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from lift_metrics._checks import (
    check_bool,
    check_non_negative,
    check_positive,
    check_unit_interval,
    normalize_weights,
)
from lift_metrics._records import breakdown_repr, record_dict

__all__ = [
    "DEFAULT_AGGREGATE_WEIGHTS",
    "DEFAULT_COST_CEILING_USD",
    "DEFAULT_LATENCY_CEILING_MS",
    "AggregateBreakdown",
    "aggregate_breakdown",
    "aggregate_metric",
]

#: Default weights: quality 0.7, cost 0.2, latency 0.1.
DEFAULT_AGGREGATE_WEIGHTS: Mapping[str, float] = {"quality": 0.7, "cost": 0.2, "latency": 0.1}
#: Cost at which the cost score reaches 0 (default $0.10 per request).
DEFAULT_COST_CEILING_USD = 0.10
#: Latency at which the latency score reaches 0 (default 60 s).
DEFAULT_LATENCY_CEILING_MS = 60_000.0


@dataclasses.dataclass(frozen=True, repr=False)
class AggregateBreakdown:
    """Result of :func:`aggregate_breakdown`.

    Attributes
    ----------
    score : float
        ``sum(weights[k] * components[k])`` in [0, 1].
    components : dict
        ``quality`` (mean of the three quality scores, or of code and end-to-end without an
        IR score), ``cost`` and ``latency`` (both
        normalised and inverted: 1 is free / instant, 0 is at or beyond the ceiling).
        ``cost`` or ``latency`` is absent when it was not known (None).
    weights : dict
        Normalised weights of the components present (sum to 1).
    gate : float
        What the cost and latency parts were multiplied by: ``code_score`` when gated
        (``gated=True``), else 1.
    end_to_end : EndToEndBreakdown or None
        The end-to-end breakdown the scores came from, when the aggregate was computed from a
        task (:func:`aggregate_task_breakdown`); None when the scores were given. Its IR and
        code breakdowns and its reasons are also ``ir``, ``code`` and ``reasons``.
    """

    score: float
    components: dict[str, float]
    weights: dict[str, float]
    gate: float = 1.0
    end_to_end: Any = None

    @property
    def ir(self) -> Any:
        """The IR part's breakdown (None without one)."""
        return getattr(self.end_to_end, "ir", None)

    @property
    def code(self) -> Any:
        """The code part's breakdown (None without one)."""
        return getattr(self.end_to_end, "code", None)

    @property
    def reasons(self) -> tuple[str, ...]:
        """What lost points in the end-to-end parts (empty without them)."""
        return tuple(getattr(self.end_to_end, "reasons", ()))

    def __repr__(self) -> str:
        return breakdown_repr(self)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (with the end-to-end breakdown's, when there is one)."""
        if self.end_to_end is None:
            return record_dict(self, "score components weights gate")
        return record_dict(
            self, "score components weights gate", end_to_end=self.end_to_end.to_dict()
        )


def aggregate_breakdown(
    ir_score: float | None,
    code_score: float,
    e2e_score: float,
    cost_usd: float | None,
    latency_ms: float | None,
    *,
    weights: Mapping[str, float] | None = None,
    cost_ceiling_usd: float = DEFAULT_COST_CEILING_USD,
    latency_ceiling_ms: float = DEFAULT_LATENCY_CEILING_MS,
    gated: bool = False,
) -> AggregateBreakdown:
    """Compute :func:`aggregate_metric` and keep its three components.

    Parameters and formula: see :func:`aggregate_metric`. Here ``cost_usd`` or
    ``latency_ms`` may also be None: not known (no trusted measurement). That component is
    then left out and the other weights are rescaled to sum to 1, so that an unknown cost
    neither helps nor hurts (``inf`` is the way to score it 0).

    Returns
    -------
    AggregateBreakdown

    Examples
    --------
    >>> aggregate_breakdown(0.9, 0.6, 0.6, 0.05, 30_000)
    AggregateBreakdown(score=0.640, quality=0.700, cost=0.500, latency=0.500)
    >>> aggregate_breakdown(0.9, 0.6, 0.6, None, None)  # quality alone
    AggregateBreakdown(score=0.700, quality=0.700)
    >>> aggregate_breakdown(0.9, 0.6, 0.6, 0.05, 30_000, gated=True).score  # 0.49 + 0.6 * 0.15
    0.58
    """
    ir = None if ir_score is None else check_unit_interval("ir_score", ir_score)
    code = check_unit_interval("code_score", code_score)
    e2e = check_unit_interval("e2e_score", e2e_score)
    scores = [code, e2e] if ir is None else [ir, code, e2e]
    cost_ceiling = check_positive("cost_ceiling_usd", cost_ceiling_usd)
    latency_ceiling = check_positive("latency_ceiling_ms", latency_ceiling_ms)
    w = normalize_weights("weights", weights, DEFAULT_AGGREGATE_WEIGHTS)
    components = {"quality": sum(scores) / len(scores)}
    if cost_usd is not None:
        cost = check_non_negative("cost_usd", cost_usd, allow_inf=True)
        components["cost"] = 1.0 - min(cost / cost_ceiling, 1.0)
    if latency_ms is not None:
        latency = check_non_negative("latency_ms", latency_ms, allow_inf=True)
        components["latency"] = 1.0 - min(latency / latency_ceiling, 1.0)
    if len(components) < len(w):
        kept = {key: w[key] for key in components}
        total = sum(kept.values())
        # quality always counts: all its weight when the known parts weigh nothing
        w = {key: value / total for key, value in kept.items()} if total > 0 else {"quality": 1.0}
        components = {key: components[key] for key in w}
    gate = code if check_bool("gated", gated) else 1.0
    score = sum(w[key] * components[key] * (1.0 if key == "quality" else gate) for key in w)
    return AggregateBreakdown(
        score=min(max(score, 0.0), 1.0), components=components, weights=w, gate=gate
    )


def aggregate_metric(
    ir_score: float | None,
    code_score: float,
    e2e_score: float,
    cost_usd: float,
    latency_ms: float,
    *,
    weights: Mapping[str, float] | None = None,
    cost_ceiling_usd: float = DEFAULT_COST_CEILING_USD,
    latency_ceiling_ms: float = DEFAULT_LATENCY_CEILING_MS,
    gated: bool = False,
) -> float:
    r"""Single optimization target in [0, 1] from quality, cost and latency.

    Parameters
    ----------
    ir_score, code_score, e2e_score : float
        Quality scores in [0, 1] (``ir_quality``, ``code_quality``, ``end_to_end``).
        ``ir_score`` None: a program without an IR; quality is then ``(code + e2e) / 2``.
    cost_usd : float
        Cost of the request in USD, ``>= 0`` (``inf`` allowed: cost score 0).
    latency_ms : float
        Latency in milliseconds, ``>= 0`` (``inf`` allowed: latency score 0).
    weights : mapping, optional
        Keys ``quality``, ``cost``, ``latency``; default 0.7 / 0.2 / 0.1. Rescaled to sum to 1.
    cost_ceiling_usd : float, default 0.10
        Cost that scores 0.
    latency_ceiling_ms : float, default 60000
        Latency that scores 0.
    gated : bool, default False
        Multiply the cost and latency parts by ``code_score``: being cheap or fast earns
        only as much as the code is worth, so code that fails every test cannot outrank
        correct code by being free and instant (:class:`lift_metrics.dspy_metrics.Aggregate`
        gates by default). False is the specification's weighted sum.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        For scores outside [0, 1], negative cost or latency, NaN, bad weights or ceilings;
        the message names the parameter.

    Notes
    -----
    .. math::

        \text{quality} = (ir + code + e2e) / 3, \quad
        \text{cost} = 1 - \min(c / c_{max}, 1), \quad
        \text{latency} = 1 - \min(L / L_{max}, 1)

        \text{aggregate} = w_q\,\text{quality} + g\,(w_c\,\text{cost} + w_l\,\text{latency})

    with :math:`g = code` when ``gated``, else 1.
    ``e2e_score`` already contains the IR and code scores, so they count twice in
    ``quality``; this definition is kept as specified
    (docs/decisions.md#aggregate-counts-ir-and-code-twice).

    Examples
    --------
    >>> aggregate_metric(1.0, 1.0, 1.0, 0.0, 0.0)
    1.0
    >>> round(aggregate_metric(0.9, 0.6, 0.6, 0.05, 30_000), 4)  # 0.7*0.7 + 0.2*0.5 + 0.1*0.5
    0.64
    """
    return aggregate_breakdown(
        ir_score,
        code_score,
        e2e_score,
        cost_usd,
        latency_ms,
        weights=weights,
        cost_ceiling_usd=cost_ceiling_usd,
        latency_ceiling_ms=latency_ceiling_ms,
        gated=gated,
    ).score
