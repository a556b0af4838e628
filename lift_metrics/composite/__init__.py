"""Composite metrics: several scores, costs and latencies combined into one target.

Formulas and metric cards: docs/composite.md.

- :func:`end_to_end` / :func:`end_to_end_breakdown`: IR quality, code quality and a latency
  penalty (:func:`latency_penalty`) on plain values; :func:`end_to_end_from_parts` builds the
  breakdown from parts already scored (what :class:`lift_metrics.dspy_metrics.EndToEnd` does).
- :func:`aggregate_metric` / :func:`aggregate_breakdown`: one optimization target from quality,
  cost and latency; :func:`aggregate_task_breakdown` computes it from one task's outputs
  (the end-to-end breakdown first), the core of the registered ``aggregate`` metric.
- :class:`ProviderRoute`, :func:`route_cost`, :func:`route_quality`,
  :func:`suggest_route_migration`: cost and quality per provider route, and route migration.

Importable from here but outside ``__all__``: the result types (``EndToEndBreakdown``,
``AggregateBreakdown``, ``RouteSuggestion``), the defaults (``DEFAULT_E2E_WEIGHTS``,
``DEFAULT_TARGET_MS``, ``DEFAULT_AGGREGATE_WEIGHTS``, ``DEFAULT_COST_CEILING_USD``,
``DEFAULT_LATENCY_CEILING_MS``, ``DEFAULT_GPU_PRICES_PER_SECOND``, ``DEFAULT_TASK_WEIGHTS``)
and ``end_to_end_from_parts``, which the DSPy metric objects share.

The DSPy metric objects that read these values from an example and a prediction are in
:mod:`lift_metrics.dspy_metrics`. Model prices are in :mod:`lift_metrics.pricing`.
"""

from lift_metrics.composite._aggregate import (
    DEFAULT_AGGREGATE_WEIGHTS as DEFAULT_AGGREGATE_WEIGHTS,
    DEFAULT_COST_CEILING_USD as DEFAULT_COST_CEILING_USD,
    DEFAULT_LATENCY_CEILING_MS as DEFAULT_LATENCY_CEILING_MS,
    AggregateBreakdown as AggregateBreakdown,
    aggregate_breakdown,
    aggregate_metric,
)
from lift_metrics.composite._aggregate_task import aggregate_task_breakdown
from lift_metrics.composite._end_to_end import (
    DEFAULT_E2E_WEIGHTS as DEFAULT_E2E_WEIGHTS,
    DEFAULT_TARGET_MS as DEFAULT_TARGET_MS,
    EndToEndBreakdown as EndToEndBreakdown,
    end_to_end,
    end_to_end_breakdown,
    end_to_end_from_parts as end_to_end_from_parts,
    latency_penalty,
)
from lift_metrics.composite._routes import (
    DEFAULT_GPU_PRICES_PER_SECOND as DEFAULT_GPU_PRICES_PER_SECOND,
    DEFAULT_TASK_WEIGHTS as DEFAULT_TASK_WEIGHTS,
    ProviderRoute,
    RouteSuggestion as RouteSuggestion,
    route_cost,
    route_quality,
    suggest_route_migration,
)

__all__ = [
    "ProviderRoute",
    "aggregate_breakdown",
    "aggregate_metric",
    "aggregate_task_breakdown",
    "end_to_end",
    "end_to_end_breakdown",
    "latency_penalty",
    "route_cost",
    "route_quality",
    "suggest_route_migration",
]
