"""Agreement of a metric with hand-labelled examples, and calibration of its weights.

A metric is only worth optimizing if it agrees with people (the project's target:
Pearson > 0.8; docs/validation.md). This package measures that agreement for any callable:

- :func:`validate_metric` / :func:`validate_scores`: Pearson with a confidence interval,
  Spearman, Kendall tau-b, a calibration line and two verdicts (point estimate and interval
  lower bound against a target) in a :class:`ValidationResult`;
- :func:`load_labels`: labelled items from JSON Lines or CSV with a field mapping, several
  raters per item; :func:`krippendorff_alpha` for the raters' agreement;
- :func:`builtin_scorer`: the package's metrics (``ir_quality``, ``code_quality``,
  ``end_to_end``, ``aggregate``, ``reference_score``, ``test_pass_rate``) applied to
  labelled items (``datasets/labels/``);
- :func:`calibrate_weights`, :func:`save_weights`, :func:`load_weights`: fit component weights
  on the calibration split with k-fold cross-validation and keep them in a file;
  :func:`calibrate_metric` (and :func:`calibrate_code_quality`) does the whole recipe for a
  built-in metric (its components, similarity floor, gate and cap) and returns a
  :class:`MetricCalibration` with the fit and the profile;
- :func:`validate_field_baselines`: the field's metrics (BLEU, chrF, ...) on the same items,
  the comparison rows of a report;
- :func:`load_profile`, :func:`resolve_profile`, :func:`shipped_profile_path`,
  :func:`unrelated_similarity_floor`: the
  opt-in calibrated profiles (weights + a floor for the embedding similarity, and for
  ``code_quality`` a wrong-answer gate and a stub cap) shipped in ``datasets/labels/``; the
  default weights without a floor, gate or cap stay the metrics' default;
- :func:`gaming_check`: the gaming check, which scores honest outputs beside outputs that
  compute nothing (:data:`CODE_TRICKS`) and says in a :class:`GamingReport` which tricks
  score like a correct output; :func:`format_gaming` prints it;
- :func:`plot_validation`, :func:`format_table`, :func:`markdown_report`: what
  ``lift-metrics validate`` writes;
- :func:`register_metric` with a :class:`MetricSpec` (its core and the :class:`ItemField` s
  it reads): a metric of your own, scored on labelled items by :class:`MetricScorer` and in
  DSPy by :class:`~lift_metrics.dspy_metrics.DSPyMetric` (``DSPyMetric(name)``);
  :func:`registered_metric`,
  :func:`metric_names` and :func:`unregister_metric` look the registry up.

Importable from here but outside ``__all__``: the result types (``ValidationResult``,
``CalibrationResult``, ``MetricCalibration``, ``GamingReport``, ``TrickResult``,
``ShippedDataset``); the built-in scorers behind :func:`builtin_scorer` (``IRPairScorer``,
``CodePairScorer``, ``EndToEndScorer``, ``AggregateScorer``, ``ReferenceScorer``,
``PassRateScorer``, ``FieldMetricScorer``) and their tables ``BUILTIN_METRICS`` and
``FIELD_METRICS``; the trick registry ``CODE_TRICKS``; the shipped files
``SHIPPED_DATASETS``, ``SHIPPED_LABELS`` and ``SHIPPED_PROFILES``; the check ``score_value``;
and ``LabelFileError``, ``TooFewScoresError`` and ``ConstantInputWarning``, whose home is
:mod:`lift_metrics.errors`.

Importing this package loads numpy only; scipy, krippendorff and matplotlib load on use.
"""

from __future__ import annotations

from lift_metrics._builtin_metrics import (
    BUILTIN_METRICS as BUILTIN_METRICS,
    FIELD_METRICS as FIELD_METRICS,
    AggregateScorer as AggregateScorer,
    CodePairScorer as CodePairScorer,
    EndToEndScorer as EndToEndScorer,
    FieldMetricScorer as FieldMetricScorer,
    IRPairScorer as IRPairScorer,
    PassRateScorer as PassRateScorer,
    ReferenceScorer as ReferenceScorer,
    builtin_scorer,
)

# "name as name": importable from here, outside __all__ (an internal, shared with the optimizers)
from lift_metrics._checks import score_value as score_value
from lift_metrics._registry import (
    ItemField,
    MetricScorer,
    MetricSpec,
    metric_names,
    register_metric,
    registered_metric,
    unregister_metric,
)
from lift_metrics.errors import (
    ConstantInputWarning as ConstantInputWarning,
    LabelFileError as LabelFileError,
    TooFewScoresError as TooFewScoresError,
)
from lift_metrics.validation._agreement import krippendorff_alpha
from lift_metrics.validation._calibrate import (
    CalibrationResult as CalibrationResult,
    calibrate_weights,
)
from lift_metrics.validation._calibrate_metric import (
    MetricCalibration as MetricCalibration,
    calibrate_code_quality,
    calibrate_metric,
)
from lift_metrics.validation._gaming import (
    GamingReport as GamingReport,
    TrickResult as TrickResult,
    format_gaming,
    gaming_check,
)
from lift_metrics.validation._gaming_tricks import CODE_TRICKS as CODE_TRICKS, Trick
from lift_metrics.validation._import import import_metric
from lift_metrics.validation._labels import (
    SHIPPED_DATASETS as SHIPPED_DATASETS,
    SHIPPED_LABELS as SHIPPED_LABELS,
    LabelledItem,
    ShippedDataset as ShippedDataset,
    load_labels,
    shipped_dataset_path,
    shipped_labels_path,
)
from lift_metrics.validation._plot import plot_validation
from lift_metrics.validation._report import format_table, markdown_report
from lift_metrics.validation._validate import ValidationResult as ValidationResult, validate_scores
from lift_metrics.validation._validate_metric import (
    validate_field_baselines,
    validate_metric,
)
from lift_metrics.validation.profiles import (
    SHIPPED_PROFILES as SHIPPED_PROFILES,
    CalibrationProfile,
    load_profile,
    load_weights,
    resolve_profile,
    save_weights,
    shipped_profile_path,
    unrelated_similarity_floor,
)

__all__ = [
    "CalibrationProfile",
    "ItemField",
    "LabelledItem",
    "MetricScorer",
    "MetricSpec",
    "Trick",
    "builtin_scorer",
    "calibrate_code_quality",
    "calibrate_metric",
    "calibrate_weights",
    "format_gaming",
    "format_table",
    "gaming_check",
    "import_metric",
    "krippendorff_alpha",
    "load_labels",
    "load_profile",
    "load_weights",
    "markdown_report",
    "metric_names",
    "plot_validation",
    "register_metric",
    "registered_metric",
    "resolve_profile",
    "save_weights",
    "shipped_dataset_path",
    "shipped_labels_path",
    "shipped_profile_path",
    "unregister_metric",
    "unrelated_similarity_floor",
    "validate_field_baselines",
    "validate_metric",
    "validate_scores",
]
