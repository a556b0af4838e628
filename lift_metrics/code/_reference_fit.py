"""Fitting the reference model on graded data and evaluating it (scripts/fit_reference_model.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lift_metrics.code._reference import (
    _apply_model,
)
from lift_metrics.code._reference_features import (
    REFERENCE_FEATURES,
)
from lift_metrics.errors import InputValueError


def fit_reference_model(
    matrix: np.ndarray,
    grades: Sequence[float],
    *,
    features: Sequence[str] = REFERENCE_FEATURES,
    alpha: float = 1.0,
    knots: int = 21,
    grade_max: float = 4.0,
) -> dict[str, Any]:
    """Fit the no-test score's model: non-negative ridge, then a monotone map to [0, 1].

    Parameters
    ----------
    matrix : numpy.ndarray
        Feature rows from :func:`reference_feature_matrix` (all of its columns).
    grades : sequence of float
        The human grade of each row, 0 to ``grade_max``.
    features : sequence of str, default every feature
        The columns the model uses.
    alpha : float, default 1.0
        Ridge penalty on the (standardised) weights.
    knots : int, default 21
        Points of the piecewise-linear calibration map (at quantiles of the linear score).
    grade_max : float, default 4.0
        The top grade (grades are divided by it).

    Returns
    -------
    dict
        ``{"features", "weights", "intercept", "calibration": {"x", "y"}}``, the content of
        ``reference_model.json`` (plain JSON).

    Raises
    ------
    ImportError
        Without scikit-learn (``pip install 'lift-metrics[validation]'``).
    ValueError
        For an unknown feature, mismatched lengths or bad options.

    Notes
    -----
    The linear part is scikit-learn's ``Ridge(positive=True)`` on standardised columns of
    ``grades / grade_max`` (folded back into raw-feature weights); the map is an
    ``IsotonicRegression`` of the grade on the linear score, read at ``knots`` quantiles and
    interpolated linearly in between, so the stored model stays small and smooth.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.random((200, len(REFERENCE_FEATURES)))
    >>> y = 4 * x[:, 1]
    >>> model = fit_reference_model(x, y, features=["chrf", "embedding"])
    >>> model["weights"][0] > model["weights"][1]
    True
    """
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import Ridge

    names = list(features)
    unknown = [name for name in names if name not in REFERENCE_FEATURES]
    if unknown or not names:
        raise InputValueError(
            f"features must be a non-empty subset of {REFERENCE_FEATURES}, got {names}"
        )
    x_all = np.asarray(matrix, dtype=np.float64)
    y = np.asarray(grades, dtype=np.float64) / float(grade_max)
    if x_all.ndim != 2 or x_all.shape[1] != len(REFERENCE_FEATURES) or len(y) != len(x_all):
        raise InputValueError(
            f"matrix must have shape (n, {len(REFERENCE_FEATURES)}) with one grade per row, "
            f"got {x_all.shape} and {len(y)} grades"
        )
    if knots < 2:
        raise InputValueError(f"knots must be >= 2, got {knots}")
    x = x_all[:, [REFERENCE_FEATURES.index(name) for name in names]]
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std == 0] = 1.0
    ridge = Ridge(alpha=alpha, positive=True).fit((x - mean) / std, y)
    weights = ridge.coef_ / std
    intercept = float(ridge.intercept_ - np.sum(weights * mean))
    linear = x @ weights + intercept
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(linear, y)
    qx = np.unique(np.quantile(linear, np.linspace(0.0, 1.0, knots)))
    qy = np.maximum.accumulate(iso.predict(qx))
    return {
        "features": names,
        "weights": [round(float(w), 6) for w in weights],
        "intercept": round(intercept, 6),
        "calibration": {
            "x": [round(float(v), 6) for v in qx],
            "y": [round(float(v), 6) for v in qy],
        },
    }


def cross_validated_reference_scores(
    matrix: np.ndarray,
    grades: Sequence[float],
    groups: Sequence[str],
    *,
    folds: int = 5,
    **options: Any,
) -> np.ndarray:
    """Out-of-fold scores of :func:`fit_reference_model`, folds grouped (scikit-learn GroupKFold).

    Parameters
    ----------
    matrix : numpy.ndarray
        Feature rows (:func:`reference_feature_matrix`).
    grades : sequence of float
    groups : sequence of str
        Rows of one group (one task or intent) stay in one fold.
    folds : int, default 5
    **options
        Passed to :func:`fit_reference_model`.

    Returns
    -------
    numpy.ndarray
        Each row's score from the model fitted on the other folds.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.random((100, len(REFERENCE_FEATURES)))
    >>> out = cross_validated_reference_scores(x, 4 * x[:, 0], [str(i // 5) for i in range(100)])
    >>> bool(np.corrcoef(out, x[:, 0])[0, 1] > 0.9)
    True
    """
    from sklearn.model_selection import GroupKFold

    x = np.asarray(matrix, dtype=np.float64)
    y = np.asarray(grades, dtype=np.float64)
    labels = np.asarray(groups)
    out = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=folds).split(x, y, labels):
        out[test] = _apply_model(x[test], fit_reference_model(x[train], y[train], **options))
    return out


def grouped_bootstrap_interval(
    scores: Sequence[float],
    grades: Sequence[float],
    groups: Sequence[str],
    *,
    statistic: str = "pearson",
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Return a correlation and its percentile bootstrap interval, resampling whole groups.

    Parameters
    ----------
    scores, grades : sequence of float
    groups : sequence of str
        Resampled with replacement as units (all rows of an intent together), since rows of
        one intent share a reference and are not independent.
    statistic : {"pearson", "spearman", "kendall"}, default "pearson"
    n_resamples : int, default 2000
    confidence_level : float, default 0.95
    seed : int, default 0

    Returns
    -------
    (value, low, high) : tuple of float

    Examples
    --------
    >>> value, low, high = grouped_bootstrap_interval([0.1, 0.5, 0.4, 0.9, 0.2, 0.7],
    ...                                               [0, 2, 1, 4, 1, 3], "aabbcc",
    ...                                               n_resamples=200)
    >>> round(value, 3), low <= value <= high
    (0.97, True)
    """
    from scipy import stats

    if statistic not in ("pearson", "spearman", "kendall"):
        raise InputValueError(
            f"statistic must be 'pearson', 'spearman' or 'kendall', got {statistic!r}"
        )
    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(grades, dtype=np.float64)
    labels = np.asarray(list(groups))

    def corr(a: np.ndarray, b: np.ndarray) -> float:
        if statistic == "pearson":
            return float(np.corrcoef(a, b)[0, 1])
        if statistic == "spearman":
            return float(stats.spearmanr(a, b).statistic)
        return float(stats.kendalltau(a, b).statistic)

    unique, inverse = np.unique(labels, return_inverse=True)
    members = [np.flatnonzero(inverse == k) for k in range(len(unique))]
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_resamples):
        picked = np.concatenate([members[k] for k in rng.integers(0, len(unique), len(unique))])
        a, b = x[picked], y[picked]
        if np.all(a == a[0]) or np.all(b == b[0]):
            continue
        values.append(corr(a, b))
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return corr(x, y), float(low), float(high)


def graders_mean(row: Mapping[str, Any]) -> float:
    """Return the mean of a CoNaLa row's per-grader grades (``grades``), else its ``grade``.

    The model is fitted on this mean: it uses every grader's judgement, and is less noisy than
    the aggregated ``grade`` it is then judged against.

    Examples
    --------
    >>> graders_mean({"grade": 3.0, "grades": {"a": 4, "b": 1, "c": 4}})
    3.0
    >>> graders_mean({"grade": 2.0})
    2.0
    """
    grades = row.get("grades")
    if isinstance(grades, Mapping) and grades:
        return float(np.mean([float(v) for v in grades.values()]))
    return float(row["grade"])
