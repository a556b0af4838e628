"""Evaluation statistics: summaries, grades, pass@k, regression detection, A/B comparison.

Naming follows scikit-learn: ``*_score`` is higher-is-better, units are in names
(``cost_usd``, ``duration_seconds``, ``latency_ms``). Every function validates its input and
raises ``ValueError``/``TypeError`` naming the parameter; nothing silently returns 0.
JSON output goes through :func:`lift_metrics._io.to_jsonable` (infinities become ``null``
with an ``<key>_is_infinite`` flag); reports print ``∞``.

Formulas, sources and edge-case decisions: docs/statistics.md and docs/decisions.md.
``scipy`` is imported only inside the functions that need it.

Importable from here but outside ``__all__``: the result types the functions return
(``LatencyPercentiles``, ``ConfidenceInterval``, ``PairedBootstrap``,
``PairedComparison``, ``DeltaStatistics``, ``ArmStatistics``, ``PairedDeltas``,
``ReportComparison``, ``CaseChange``, ``CaseStats``, ``ModelStats``, ``Gate``,
``MultiRunAggregate``, ``QuestionAggregate``, ``TierReport``, ``TierSummary``); the
constants ``MAX_RESAMPLES`` (the most bootstrap resamples a statistic accepts),
``DEFAULT_GRADE_SCALE``, ``DEFAULT_SUMMED_METRICS`` and ``DELTA_NAMES``; ``RecordError``,
whose home is :mod:`lift_metrics.errors`; and the shared internals ``bootstrap_means`` and
``check_confidence_level`` (homes: ``lift_metrics._resampling``, ``lift_metrics._checks``).
"""

from __future__ import annotations

# "name as name": importable from here, outside __all__ (shared internals)
from lift_metrics._checks import check_confidence_level as check_confidence_level
from lift_metrics._resampling import bootstrap_means as bootstrap_means
from lift_metrics.errors import RecordError as RecordError
from lift_metrics.stats._ab import (
    DeltaStatistics as DeltaStatistics,
    PairedComparison as PairedComparison,
    paired_comparison,
)
from lift_metrics.stats._arm_statistics import (
    DELTA_NAMES as DELTA_NAMES,
    ArmStatistics as ArmStatistics,
    PairedDeltas as PairedDeltas,
    arm_statistics,
    paired_deltas,
)
from lift_metrics.stats._compare import (
    CaseChange as CaseChange,
    ReportComparison as ReportComparison,
    compare_reports,
)
from lift_metrics.stats._gates import Gate as Gate, ab_decision
from lift_metrics.stats._intervals import (
    ConfidenceInterval as ConfidenceInterval,
    mean_interval,
    wilson_interval,
)
from lift_metrics.stats._paired import PairedBootstrap as PairedBootstrap, paired_bootstrap
from lift_metrics.stats._passk import pass_at_k, pass_hat_k
from lift_metrics.stats._reports import (
    CaseStats as CaseStats,
    EvalReport,
    EvalResult,
    ModelStats as ModelStats,
    forge_score,
)
from lift_metrics.stats._resample import MAX_RESAMPLES as MAX_RESAMPLES
from lift_metrics.stats._retrieval import (
    DEFAULT_SUMMED_METRICS as DEFAULT_SUMMED_METRICS,
    MultiRunAggregate as MultiRunAggregate,
    QuestionAggregate as QuestionAggregate,
    aggregate_runs,
    retrieval_precision,
    retrieval_recall,
)
from lift_metrics.stats._runs import RunRecord, load_run_records, split_arms, validate_run_records
from lift_metrics.stats._scoring import (
    DEFAULT_GRADE_SCALE as DEFAULT_GRADE_SCALE,
    composite_score,
    cost_delta,
    cost_of_pass,
    cost_usd,
    cost_variance,
    letter_grade,
    pass_rate,
    pass_rate_variance,
    tier_uplift,
)
from lift_metrics.stats._summary import (
    LatencyPercentiles as LatencyPercentiles,
    Statistics,
    latency_percentiles,
    summarize,
)
from lift_metrics.stats._tiers import (
    TierReport as TierReport,
    TierRun,
    TierSummary as TierSummary,
    load_tier_runs,
    summarize_tiers,
)

__all__ = [  # plain sorted() order (tests/test_package.py checks names == sorted(names))
    "EvalReport",
    "EvalResult",
    "RunRecord",
    "Statistics",
    "TierRun",
    "ab_decision",
    "aggregate_runs",
    "arm_statistics",
    "compare_reports",
    "composite_score",
    "cost_delta",
    "cost_of_pass",
    "cost_usd",
    "cost_variance",
    "forge_score",
    "latency_percentiles",
    "letter_grade",
    "load_run_records",
    "load_tier_runs",
    "mean_interval",
    "paired_bootstrap",
    "paired_comparison",
    "paired_deltas",
    "pass_at_k",
    "pass_hat_k",
    "pass_rate",
    "pass_rate_variance",
    "retrieval_precision",
    "retrieval_recall",
    "split_arms",
    "summarize",
    "summarize_tiers",
    "tier_uplift",
    "validate_run_records",
    "wilson_interval",
]
