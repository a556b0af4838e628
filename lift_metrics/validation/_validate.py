"""Agreement of scores with labels: correlations, an interval, a calibration line, verdicts.

:func:`validate_scores` works on scores already computed; scoring labelled items with a
metric first is :func:`lift_metrics.validation.validate_metric`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lift_metrics._checks import as_float_array, check_iterable, check_real
from lift_metrics.errors import (
    MIN_SCORED_ITEMS,
    ConstantInputWarning,
    InputValueError,
    TooFewScoresError as TooFewScoresError,
)
from lift_metrics.validation._agreement import krippendorff_alpha


@dataclass(frozen=True, repr=False)
class ValidationResult:
    """How closely a metric's scores track labels (see :func:`validate_metric`).

    Attributes
    ----------
    metric : str
        Name of the metric.
    n : int
        Number of items with both a score and a label (missing scores excluded).
    pearson, pearson_low, pearson_high, pearson_pvalue : float
        Pearson's r, its confidence interval (Fisher z, from
        :func:`scipy.stats.pearsonr`) and the two-sided p-value; nan when undefined.
    spearman, kendall : float
        Spearman's rho and Kendall's tau-b.
    slope, intercept, residual_std : float
        The calibration line ``label ≈ slope * score + intercept`` (least squares) and the
        standard deviation of its residuals (``n - 2`` degrees of freedom).
    target, confidence_level : float
        The Pearson target and the interval's confidence level.
    scores, labels : tuple of float
        The paired values used (after dropping missing scores).
    ids : tuple of str
        Item ids in the same order.
    missing : tuple of (str, str)
        ``(id, reason)`` for every item whose score is missing.
    raters : int
        Number of rating fields per item (1 when there is a single label).
    rater_alpha : float or None
        Krippendorff's alpha (interval) among the raters; None with one rater.
    rater_mean_pearson, rater_mean_low, rater_mean_high : float or None
        Pearson of the scores with the mean of the available ratings, with its interval.
    """

    metric: str
    n: int
    pearson: float
    pearson_low: float
    pearson_high: float
    pearson_pvalue: float
    spearman: float
    kendall: float
    slope: float
    intercept: float
    residual_std: float
    target: float
    confidence_level: float
    scores: tuple[float, ...] = field(default=())
    labels: tuple[float, ...] = field(default=())
    ids: tuple[str, ...] = field(default=())
    missing: tuple[tuple[str, str], ...] = field(default=())
    raters: int = 1
    rater_alpha: float | None = None
    rater_mean_pearson: float | None = None
    rater_mean_low: float | None = None
    rater_mean_high: float | None = None

    @property
    def pearson_ci(self) -> tuple[float, float]:
        """``(low, high)`` of Pearson's r at :attr:`confidence_level`."""
        return (self.pearson_low, self.pearson_high)

    @property
    def passed(self) -> bool:
        """Point verdict: ``pearson >= target`` (False when pearson is nan)."""
        return bool(self.pearson >= self.target)

    @property
    def passed_ci(self) -> bool:
        """Interval verdict: the interval's lower bound ``>= target``."""
        return bool(self.pearson_low >= self.target)

    def __repr__(self) -> str:
        return (
            f"ValidationResult(metric={self.metric!r}, n={self.n}, pearson={self.pearson:.3f} "
            f"[{self.pearson_low:.3f}, {self.pearson_high:.3f}], spearman={self.spearman:.3f}, "
            f"kendall={self.kendall:.3f}, target={self.target:g}, passed={self.passed})"
        )

    def to_dict(self, *, include_pairs: bool = True) -> dict[str, Any]:
        """Plain-JSON form (nan stays a float; use :func:`lift_metrics._io.dumps_json`)."""
        out: dict[str, Any] = {
            "metric": self.metric,
            "n": self.n,
            "pearson": self.pearson,
            "pearson_ci": [self.pearson_low, self.pearson_high],
            "pearson_pvalue": self.pearson_pvalue,
            "spearman": self.spearman,
            "kendall": self.kendall,
            "calibration_line": {
                "slope": self.slope,
                "intercept": self.intercept,
                "residual_std": self.residual_std,
            },
            "target": self.target,
            "confidence_level": self.confidence_level,
            "passed": self.passed,
            "passed_ci": self.passed_ci,
            "raters": self.raters,
            "rater_alpha": self.rater_alpha,
            "rater_mean_pearson": self.rater_mean_pearson,
            "rater_mean_ci": (
                None if self.rater_mean_low is None else [self.rater_mean_low, self.rater_mean_high]
            ),
            "missing": [{"id": i, "reason": r} for i, r in self.missing],
        }
        if include_pairs:
            out["pairs"] = [
                {"id": i, "score": s, "label": y}
                for i, s, y in zip(self.ids, self.scores, self.labels, strict=True)
            ]
        return out


def _constant(values: np.ndarray) -> bool:
    return bool(values.size == 0 or np.all(values == values[0]))


def _correlations(
    scores: np.ndarray, labels: np.ndarray, confidence_level: float
) -> tuple[float, float, float, float, float, float]:
    """Pearson, its interval and p-value, Spearman, Kendall tau-b (nan if either is constant)."""
    if _constant(scores) or _constant(labels):
        nan = math.nan
        return nan, nan, nan, nan, nan, nan
    from scipy import stats

    result = stats.pearsonr(scores, labels)
    interval = result.confidence_interval(confidence_level=confidence_level)
    spearman = stats.spearmanr(scores, labels).statistic
    kendall = stats.kendalltau(scores, labels, variant="b").statistic
    return (
        float(result.statistic),
        float(interval.low),
        float(interval.high),
        float(result.pvalue),
        float(spearman),
        float(kendall),
    )


def check_target(name: str, value: Any) -> float:
    """Return ``value`` checked as a Pearson target: a correlation in [-1, 1]."""
    target = check_real(name, value)
    if not -1.0 <= target <= 1.0:
        raise InputValueError(f"{name} must be a correlation in [-1, 1], got {value!r}")
    return target


def check_level(name: str, value: Any) -> float:
    """Return ``value`` checked as a confidence level: in (0, 1)."""
    level = check_real(name, value)
    if not 0.0 < level < 1.0:
        raise InputValueError(f"{name} must be in (0, 1), got {value!r}")
    return level


def validate_scores(
    scores: Sequence[float] | np.ndarray,
    labels: Sequence[float] | np.ndarray,
    *,
    target: float = 0.8,
    confidence_level: float = 0.95,
    metric: str = "metric",
    ids: Sequence[str] | None = None,
    ratings: Sequence[Sequence[float | None]] | None = None,
    missing: Sequence[tuple[str, str]] = (),
) -> ValidationResult:
    """Compare scores already computed with labels (the statistics of :func:`validate_metric`).

    Parameters
    ----------
    scores, labels : sequence of float
        Paired metric scores and labels, same length, at least 3, finite.
    target : float, default 0.8
        Pearson's r the metric must reach (the project's target is 0.8).
    confidence_level : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    metric : str, default "metric"
        Name shown in the result.
    ids : sequence of str, optional
        Item ids (default ``"0"``, ``"1"``, ...).
    ratings : sequence of sequences, optional
        Per item, every rater's rating (``None`` where a rater did not rate the item). With
        two or more rating columns the result carries Krippendorff's alpha among the raters
        and the correlation of the scores with the rater mean.
    missing : sequence of (id, reason)
        Items dropped before the call; reported as they are.

    Returns
    -------
    ValidationResult

    Raises
    ------
    TooFewScoresError
        On fewer than 3 pairs (a ValueError; its message says when nothing could be scored
        and quotes the first reason in ``missing``).
    ValueError
        On unequal lengths, NaN/inf, a bad ``target`` or ``confidence_level``.

    Warns
    -----
    ConstantInputWarning
        When the scores or the labels are all equal; the correlations are then nan.

    Examples
    --------
    >>> result = validate_scores([0.1, 0.4, 0.35, 0.8], [0.0, 0.5, 0.3, 1.0], target=0.9)
    >>> round(result.pearson, 4), result.passed, result.passed_ci
    (0.9922, True, False)
    """
    check_iterable("scores", scores, of="numbers")
    check_iterable("labels", labels, of="numbers")
    if len(scores) < MIN_SCORED_ITEMS and len(scores) == len(labels):
        raise TooFewScoresError(metric, len(scores), missing)
    x = as_float_array("scores", scores)
    y = as_float_array("labels", labels)
    if x.size != y.size:
        raise InputValueError(
            f"scores and labels must have the same length, got {x.size} and {y.size}"
        )
    target_value = check_target("target", target)
    level = check_level("confidence_level", confidence_level)
    id_list = tuple(str(i) for i in ids) if ids is not None else tuple(map(str, range(x.size)))
    if len(id_list) != x.size:
        raise InputValueError(f"ids must have one entry per score ({x.size}), got {len(id_list)}")

    constant = [name for name, v in (("scores", x), ("labels", y)) if _constant(v)]
    if constant:
        warnings.warn(
            f"{metric}: the {' and the '.join(constant)} are constant "
            f"(all {x[0] if constant[0] == 'scores' else y[0]:g}); correlations are nan",
            ConstantInputWarning,
            stacklevel=2,
        )
    pearson, low, high, pvalue, spearman, kendall = _correlations(x, y, level)
    if _constant(x):
        slope = intercept = math.nan
        residual_std = float(np.std(y, ddof=1)) if y.size > 1 else math.nan
    else:
        slope, intercept = (float(v) for v in np.polyfit(x, y, 1))
        residuals = y - (slope * x + intercept)
        residual_std = float(math.sqrt(float(residuals @ residuals) / (x.size - 2)))

    raters = 1
    alpha: float | None = None
    mean_r: float | None = None
    mean_low: float | None = None
    mean_high: float | None = None
    if ratings is not None:
        matrix = _ratings_matrix(ratings, x.size)
        raters = int(matrix.shape[1])
        if raters >= 2:
            alpha = krippendorff_alpha(matrix.T)
            with np.errstate(invalid="ignore"):
                mean = np.nanmean(matrix, axis=1)
            if not np.isnan(mean).any():
                if _constant(mean):
                    warnings.warn(
                        f"{metric}: the rater means are constant; their correlation is nan",
                        ConstantInputWarning,
                        stacklevel=2,
                    )
                m = _correlations(x, mean, level)
                mean_r, mean_low, mean_high = m[0], m[1], m[2]

    return ValidationResult(
        metric=metric,
        n=int(x.size),
        pearson=pearson,
        pearson_low=low,
        pearson_high=high,
        pearson_pvalue=pvalue,
        spearman=spearman,
        kendall=kendall,
        slope=slope,
        intercept=intercept,
        residual_std=residual_std,
        target=target_value,
        confidence_level=level,
        scores=tuple(float(v) for v in x),
        labels=tuple(float(v) for v in y),
        ids=id_list,
        missing=tuple((str(i), str(r)) for i, r in missing),
        raters=raters,
        rater_alpha=alpha,
        rater_mean_pearson=mean_r,
        rater_mean_low=mean_low,
        rater_mean_high=mean_high,
    )


def _ratings_matrix(ratings: Sequence[Sequence[float | None]], n: int) -> np.ndarray:
    rows = list(ratings)
    if len(rows) != n:
        raise InputValueError(f"ratings must have one row per score ({n}), got {len(rows)}")
    width = max((len(row) for row in rows), default=0)
    matrix = np.full((n, max(width, 1)), np.nan)
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            if value is not None:
                matrix[i, j] = check_real(f"ratings[{i}][{j}]", value)
    return matrix
