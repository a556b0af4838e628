"""The aggregate of one task's outputs: its end-to-end breakdown, then the aggregate of it."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lift_metrics.composite._aggregate import (
    DEFAULT_COST_CEILING_USD,
    DEFAULT_LATENCY_CEILING_MS,
    AggregateBreakdown,
    aggregate_breakdown,
)
from lift_metrics.composite._end_to_end import DEFAULT_TARGET_MS, end_to_end_breakdown

if TYPE_CHECKING:
    from lift_metrics._profiles import CalibrationProfile
    from lift_metrics.code import CodeQualityOptions
    from lift_metrics.ir import IR
    from lift_metrics.sandbox import Sandbox
    from lift_metrics.similarity import Embedder


def aggregate_task_breakdown(
    *,
    predicted_ir: IR | Mapping[str, Any] | str,
    expected_ir: IR | Mapping[str, Any] | str,
    predicted_code: str,
    expected_code: str,
    tests: Sequence[tuple[dict[str, Any], Any]] | str,
    entry_point: str | None = None,
    prompt: str | None = None,
    latency_ms: float | None = None,
    cost_usd: float | None = None,
    weights: Mapping[str, float] | None = None,
    e2e_weights: Mapping[str, float] | None = None,
    ir_weights: Mapping[str, float] | None = None,
    code_weights: Mapping[str, float] | None = None,
    code_profile: str | os.PathLike[str] | CalibrationProfile | CodeQualityOptions | None = None,
    target_ms: float = DEFAULT_TARGET_MS,
    cost_ceiling_usd: float | None = None,
    latency_ceiling_ms: float | None = None,
    gated: bool = True,
    embedder: Embedder | None = None,
    sandbox: Sandbox | None = None,
    timeout_s: float | None = None,
) -> AggregateBreakdown:
    r"""Return the aggregate of one task's IR, code, latency and cost, with its parts.

    The core of the registered ``aggregate`` metric (``builtin_scorer("aggregate")``,
    ``DSPyMetric("aggregate")``): :func:`end_to_end_breakdown` of the outputs, then
    :func:`aggregate_breakdown` of its IR, code and end-to-end scores with the cost and the
    latency, as :class:`lift_metrics.dspy_metrics.Aggregate` computes it.

    Parameters
    ----------
    predicted_ir, expected_ir, predicted_code, expected_code, tests, entry_point, prompt
        As in :func:`end_to_end`.
    latency_ms, cost_usd : float or None, default None
        The measured latency and cost; None: not known, that part is left out (the other
        weights rescaled), in the end-to-end score too for the latency.
    weights : mapping, optional
        ``quality``/``cost``/``latency``, as in :func:`aggregate_metric`.
    e2e_weights : mapping, optional
        ``ir``/``code``/``latency`` of the end-to-end score (``weights`` in :func:`end_to_end`).
    ir_weights, code_weights, code_profile, target_ms, embedder, sandbox, timeout_s
        As in :func:`end_to_end`.
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

    >>> ir = {"intent": "Add a and b.", "signature": {"name": "add",
    ...       "parameters": [{"name": "a"}, {"name": "b"}]}}
    >>> result = aggregate_task_breakdown(
    ...     predicted_ir=ir, expected_ir=ir,
    ...     predicted_code="def add(a, b):\n    return a + b\n",
    ...     expected_code="def add(a, b):\n    return a + b\n",
    ...     tests=[({"a": 1, "b": 2}, 3)], cost_usd=0.05,
    ...     ir_weights={"intent": 0, "signature": 1, "structure": 1, "constraints": 1},
    ...     code_weights={"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1})
    >>> result
    AggregateBreakdown(score=0.877, quality=0.988, cost=0.500)
    >>> result.code.tests_passed, result.components["cost"], "latency" in result.components
    (1, 0.5, False)
    """
    e2e = end_to_end_breakdown(
        predicted_ir=predicted_ir,
        expected_ir=expected_ir,
        predicted_code=predicted_code,
        expected_code=expected_code,
        tests=tests,
        entry_point=entry_point,
        prompt=prompt,
        latency_ms=latency_ms,
        target_ms=target_ms,
        weights=e2e_weights,
        ir_weights=ir_weights,
        code_weights=code_weights,
        code_profile=code_profile,
        embedder=embedder,
        sandbox=sandbox,
        timeout_s=timeout_s,
    )
    result = aggregate_breakdown(
        e2e.components["ir"],
        e2e.components["code"],
        e2e.score,
        cost_usd,
        latency_ms,
        weights=weights,
        cost_ceiling_usd=DEFAULT_COST_CEILING_USD if cost_ceiling_usd is None else cost_ceiling_usd,
        latency_ceiling_ms=(
            DEFAULT_LATENCY_CEILING_MS if latency_ceiling_ms is None else latency_ceiling_ms
        ),
        gated=gated,
    )
    return dataclasses.replace(result, end_to_end=e2e)
