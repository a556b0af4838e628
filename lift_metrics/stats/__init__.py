"""Evaluation statistics: summaries, grades, pass@k, regression detection, A/B comparison.

Naming follows scikit-learn: ``*_score`` is higher-is-better, units are in names
(``cost_usd``, ``duration_seconds``, ``latency_ms``). Every function validates its input and
raises ``ValueError``/``TypeError`` naming the parameter; nothing silently returns 0.
JSON output goes through :func:`lift_metrics._io.to_jsonable` (infinities become ``null``
with an ``<key>_is_infinite`` flag); reports print ``∞``.

Formulas, sources and edge-case decisions: docs/statistics.md and docs/decisions.md.
``scipy`` is imported only inside the functions that need it.

:data:`MAX_RESAMPLES` is the most bootstrap resamples a statistic accepts.
"""

from __future__ import annotations

# "name as name": importable from here, outside __all__ (shared internals)
from lift_metrics._checks import check_confidence_level as check_confidence_level
from lift_metrics._resampling import bootstrap_means as bootstrap_means
from lift_metrics.errors import RecordError
from lift_metrics.stats._ab import DeltaStatistics, PairedComparison, paired_comparison
from lift_metrics.stats._arm_statistics import (
    DELTA_NAMES,
    ArmStatistics,
    PairedDeltas,
    arm_statistics,
    paired_deltas,
)
from lift_metrics.stats._compare import CaseChange, ReportComparison, compare_reports
from lift_metrics.stats._gates import Gate, ab_decision
from lift_metrics.stats._intervals import (
    ConfidenceInterval,
    mean_interval,
    wilson_interval,
)
from lift_metrics.stats._paired import PairedBootstrap, paired_bootstrap
from lift_metrics.stats._passk import pass_at_k, pass_hat_k
from lift_metrics.stats._reports import CaseStats, EvalReport, EvalResult, ModelStats, forge_score
from lift_metrics.stats._resample import MAX_RESAMPLES
from lift_metrics.stats._retrieval import (
    DEFAULT_SUMMED_METRICS,
    MultiRunAggregate,
    QuestionAggregate,
    aggregate_runs,
    retrieval_precision,
    retrieval_recall,
)
from lift_metrics.stats._runs import RunRecord, load_run_records, split_arms, validate_run_records
from lift_metrics.stats._scoring import (
    DEFAULT_GRADE_SCALE,
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
    LatencyPercentiles,
    Statistics,
    latency_percentiles,
    summarize,
)
from lift_metrics.stats._tiers import (
    TierReport,
    TierRun,
    TierSummary,
    load_tier_runs,
    summarize_tiers,
)

__all__ = [  # plain sorted() order (tests/test_package.py checks names == sorted(names))
    "ArmStatistics",
    "CaseChange",
    "CaseStats",
    "ConfidenceInterval",
    "DEFAULT_GRADE_SCALE",
    "DEFAULT_SUMMED_METRICS",
    "DELTA_NAMES",
    "DeltaStatistics",
    "EvalReport",
    "EvalResult",
    "Gate",
    "LatencyPercentiles",
    "MAX_RESAMPLES",
    "ModelStats",
    "MultiRunAggregate",
    "PairedBootstrap",
    "PairedComparison",
    "PairedDeltas",
    "QuestionAggregate",
    "RecordError",
    "ReportComparison",
    "RunRecord",
    "Statistics",
    "TierReport",
    "TierRun",
    "TierSummary",
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
