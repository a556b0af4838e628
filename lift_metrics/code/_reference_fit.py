"""Fitting the reference model on graded data and evaluating it.

The fitting script is benchmarks/fit_reference_model.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lift_metrics._resampling import percentile_interval
from lift_metrics.code._reference import (
    _apply_model,
)
from lift_metrics.code._reference_features import (
    REFERENCE_FEATURES,
)
from lift_metrics.errors import InputValueError

_RAMP = 1e-3


def _check_columns(names: Sequence[str], option: str) -> list[int]:
    allowed = [name for name in REFERENCE_FEATURES if name != "function"]
    unknown = [name for name in names if name not in allowed]
    if unknown or not names:
        raise InputValueError(
            f"{option} must be a non-empty subset of {allowed}, got {list(names)}"
        )
    return [REFERENCE_FEATURES.index(name) for name in names]


def fit_reference_model(
    matrix: np.ndarray,
    grades: Sequence[float],
    *,
    features: Sequence[str] | None = None,
    function_features: Sequence[str] | None = None,
    sample_weight: Sequence[float] | None = None,
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
    features : sequence of str, optional
        The columns the model uses; default every feature but ``function`` (which is not a
        column: it chooses the weights).
    function_features : sequence of str, optional
        When given, rows whose reference is a function or a function body (``function`` = 1)
        get weights, an intercept and a calibration map of their own on these columns, fitted
        on those rows; the other rows fit the top-level part.
    sample_weight : sequence of float, optional
        Weight of each row (to give two data sets equal say, for instance).
    alpha : float, default 1.0
        Ridge penalty on the (standardised) weights.
    knots : int, default 21
        Points of the piecewise-linear calibration map (at quantiles of the linear score).
    grade_max : float, default 4.0
        The top grade (grades are divided by it).

    Returns
    -------
    dict
        ``{"features", "weights", "intercept", "calibration": {"x", "y"}}`` and, with
        ``function_features``, ``"function": {"features", "weights", "intercept"}``: the
        content of ``reference_model.json`` (plain JSON).

    Raises
    ------
    ImportError
        Without scikit-learn (``pip install 'lift-metrics[validation]'``).
    ValueError
        For an unknown feature, mismatched lengths or bad options.

    Notes
    -----
    The linear part is scikit-learn's ``Ridge(positive=True)`` on standardised columns of
    ``grades / grade_max`` (folded back into raw-feature weights), one per part with
    ``function_features``. The map is an
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
    names = (
        [n for n in REFERENCE_FEATURES if n != "function"] if features is None else list(features)
    )
    snippet = _check_columns(names, "features")
    x_all = np.asarray(matrix, dtype=np.float64)
    y = np.asarray(grades, dtype=np.float64) / float(grade_max)
    if x_all.ndim != 2 or x_all.shape[1] != len(REFERENCE_FEATURES) or len(y) != len(x_all):
        raise InputValueError(
            f"matrix must have shape (n, {len(REFERENCE_FEATURES)}) with one grade per row, "
            f"got {x_all.shape} and {len(y)} grades"
        )
    if knots < 2:
        raise InputValueError(f"knots must be >= 2, got {knots}")
    weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    if weight.shape != y.shape or not np.all(weight >= 0) or not weight.sum() > 0:
        raise InputValueError(
            f"sample_weight must be {len(y)} non-negative numbers, not all 0, got {weight.shape}"
        )

    def part_of(rows: np.ndarray, columns: list[int]) -> dict[str, Any]:
        weights, intercept = _ridge(x_all[rows][:, columns], y[rows], weight[rows], alpha)
        linear = x_all[rows][:, columns] @ weights + intercept
        return {
            "weights": _rounded(weights),
            "intercept": round(intercept, 6),
            "calibration": _calibration(linear, y[rows], weight[rows], knots),
        }

    if function_features is None:
        return {"features": names, **part_of(np.ones(len(y), dtype=bool), snippet)}
    function = _check_columns(list(function_features), "function_features")
    gate = x_all[:, REFERENCE_FEATURES.index("function")] >= 0.5
    if not (gate.any() and (~gate).any()):
        raise InputValueError("function_features needs rows of both kinds of reference")
    return {
        "features": names,
        **part_of(~gate, snippet),
        "function": {"features": list(function_features), **part_of(gate, function)},
    }


def _ridge(
    x: np.ndarray, y: np.ndarray, weight: np.ndarray, alpha: float
) -> tuple[np.ndarray, float]:
    """Return raw-feature weights and intercept of a non-negative ridge on standardised columns."""
    from sklearn.linear_model import Ridge

    mean = np.average(x, axis=0, weights=weight)
    std = np.sqrt(np.average((x - mean) ** 2, axis=0, weights=weight))
    std[std == 0] = 1.0
    ridge = Ridge(alpha=alpha, positive=True).fit((x - mean) / std, y, sample_weight=weight)
    weights = ridge.coef_ / std
    return weights, float(ridge.intercept_ - np.sum(weights * mean))


def _calibration(
    linear: np.ndarray, y: np.ndarray, weight: np.ndarray, knots: int
) -> dict[str, list[float]]:
    """Return the monotone map from the linear score to [0, 1]: isotonic, read at quantiles."""
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    iso.fit(linear, y, sample_weight=weight)
    qx = np.unique(np.quantile(linear, np.linspace(0.0, 1.0, knots)))
    # nondecreasing, then a 0.001 ramp so that no two linear scores tie after the map (a tie
    # inside one task's candidates loses their order)
    qy = np.maximum.accumulate(iso.predict(qx))
    qy = (1.0 - _RAMP) * qy + _RAMP * np.linspace(0.0, 1.0, len(qy))
    return {"x": _rounded(qx), "y": _rounded(qy)}


def _rounded(values: np.ndarray) -> list[float]:
    return [round(float(v), 6) for v in values]


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
        Passed to :func:`fit_reference_model` (``sample_weight`` is split with the rows).

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
    weight = options.pop("sample_weight", None)
    out = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=folds).split(x, y, labels):
        if weight is not None:
            options["sample_weight"] = np.asarray(weight, dtype=np.float64)[train]
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
    low, high = percentile_interval(np.asarray(values, dtype=np.float64), confidence_level)
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


def within_group_kendall(
    scores: Sequence[float], labels: Sequence[float], groups: Sequence[str]
) -> tuple[float, int]:
    """Return the mean over groups of Kendall's tau-b between scores and labels, and the count.

    Groups whose labels are all equal are skipped; a group whose scores are all equal counts
    as 0. This is how the HumanEval completions data is read (the mean within-problem tau:
    does the score order one task's candidates as their verdicts do?).

    Examples
    --------
    >>> within_group_kendall([0.1, 0.9, 0.5, 0.4, 0.3], [0, 1, 1, 1, 1], "aabbb")
    (1.0, 1)
    """
    from scipy import stats

    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    g = np.asarray(list(groups))
    taus = []
    for name in np.unique(g):
        member = g == name
        if np.all(y[member] == y[member][0]):
            continue
        tau = 0.0 if np.all(x[member] == x[member][0]) else stats.kendalltau(x[member], y[member])
        taus.append(float(tau if isinstance(tau, float) else tau.statistic))
    return (float(np.mean(taus)) if taus else float("nan")), len(taus)
