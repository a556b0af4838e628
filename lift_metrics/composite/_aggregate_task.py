"""The aggregate of one task's outputs: its end-to-end breakdown, then the aggregate of it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from lift_metrics.composite._aggregate import (
    DEFAULT_COST_CEILING_USD,
    DEFAULT_LATENCY_CEILING_MS,
    AggregateBreakdown,
    aggregate_breakdown,
)
from lift_metrics.composite._end_to_end import _EndToEndKeywords, end_to_end_breakdown

if TYPE_CHECKING:
    from typing import Unpack


def aggregate_task_breakdown(
    *,
    cost_usd: float | None = None,
    aggregate_weights: Mapping[str, float] | None = None,
    cost_ceiling_usd: float | None = None,
    latency_ceiling_ms: float | None = None,
    gated: bool = True,
    **task: Unpack[_EndToEndKeywords],
) -> AggregateBreakdown:
    r"""Return the aggregate of one task's IR, code, latency and cost, with its parts.

    The core of the registered ``aggregate`` metric (``builtin_scorer("aggregate")``,
    ``DSPyMetric("aggregate")``): :func:`end_to_end_breakdown` of the outputs, then
    :func:`aggregate_breakdown` of its IR, code and end-to-end scores with the cost and the
    latency, as :class:`lift_metrics.dspy_metrics.Aggregate` computes it.

    Parameters
    ----------
    cost_usd : float or None, default None
        The measured cost; None: not known, that part is left out (the other weights
        rescaled), as is the latency when ``latency_ms`` is None.
    aggregate_weights : mapping, optional
        ``quality``/``cost``/``latency``: ``weights`` of :func:`aggregate_metric`.
    **task
        The keywords of :func:`end_to_end` (the outputs, the reference, the tests,
        ``latency_ms``, the end-to-end ``weights``, ...).
    cost_ceiling_usd, latency_ceiling_ms : float or None, default None
        As in :func:`aggregate_metric`; None: its defaults, 0.10 and 60000.
    gated : bool, default True
        As in :func:`aggregate_metric`; True, as :class:`~lift_metrics.dspy_metrics.Aggregate`
        scores: cost and latency count in proportion to the code score.

    Returns
    -------
    AggregateBreakdown
        With ``end_to_end`` (and so ``ir``, ``code`` and ``reasons``) set.

    Raises
    ------
    TypeError, ValueError
        As :func:`end_to_end` and :func:`aggregate_metric`, naming the parameter.

    Examples
    --------
    Without the embedding terms, so no model is loaded:

    >>> ir = {"intent": "Add a and b.", "signature": {"name": "add"}}
    >>> add = "def add(a, b):\n    return a + b\n"
    >>> no_model = {"ir_weights": {"intent": 0, "signature": 1, "structure": 1,
    ...             "constraints": 1}, "code_profile": "seed", "code_weights": {"syntax": 0.2,
    ...             "tests": 0.4, "semantic": 0, "style": 0.1}}
    >>> result = aggregate_task_breakdown(predicted_ir=ir, expected_ir=ir, predicted_code=add,
    ...     expected_code=add, tests=[({"a": 1, "b": 2}, 3)], latency_ms=None, cost_usd=0.05,
    ...     **no_model)
    >>> result
    AggregateBreakdown(score=0.877, quality=0.988, cost=0.500)
    >>> result.code.tests_passed, result.components["cost"], "latency" in result.components
    (1, 0.5, False)
    """
    e2e = end_to_end_breakdown(**task)
    result = aggregate_breakdown(
        e2e.components["ir"],
        e2e.components["code"],
        e2e.score,
        cost_usd,
        task.get("latency_ms"),
        weights=aggregate_weights,
        cost_ceiling_usd=DEFAULT_COST_CEILING_USD if cost_ceiling_usd is None else cost_ceiling_usd,
        latency_ceiling_ms=(
            DEFAULT_LATENCY_CEILING_MS if latency_ceiling_ms is None else latency_ceiling_ms
        ),
        gated=gated,
    )
    return dataclasses.replace(result, end_to_end=e2e)
