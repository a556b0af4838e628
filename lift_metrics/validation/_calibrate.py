"""Fitting a metric's component weights to labels, with k-fold cross-validation."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from lift_metrics._checks import as_float_array, check_choice, check_int, check_non_negative
from lift_metrics._records import format_scores, record_dict, short_repr
from lift_metrics.errors import InputTypeError, InputValueError

Objective = Literal["pearson", "squared_error"]
_OBJECTIVES = ("pearson", "squared_error")


@dataclass(frozen=True, repr=False)
class CalibrationResult:
    """Weights fitted to labels and how well they do in-sample and cross-validated.

    Attributes
    ----------
    metric : str
    weights : dict of str to float
        Fitted on all the data given; non-negative, summing to 1.
    default_weights : dict of str to float or None
        The metric's default weights, for comparison.
    objective : {"pearson", "squared_error"}
    n, folds : int
    in_sample_pearson : float
        Pearson of the fitted weighted score with the labels on the data it was fitted on.
    cv_pearson : float
        Pearson of the out-of-fold scores (each item scored with weights fitted without its
        fold) with the labels: the honest estimate.
    cv_fold_pearson : tuple of float
        Pearson within each fold (nan for a fold with constant values).
    default_pearson : float or None
        Pearson of the default weights on the same data (nothing fitted).
    fold_weights : tuple of dict
        The weights fitted in each fold (their spread shows how stable the fit is).
    """

    metric: str
    weights: dict[str, float]
    default_weights: dict[str, float] | None
    objective: str
    n: int
    folds: int
    in_sample_pearson: float
    cv_pearson: float
    cv_fold_pearson: tuple[float, ...] = field(default=())
    default_pearson: float | None = None
    fold_weights: tuple[dict[str, float], ...] = field(default=())

    def __repr__(self) -> str:
        return short_repr(
            self,
            "metric!r n weights in_sample_pearson:.3f cv_pearson:.3f",
            weights=f"{{{format_scores(self.weights)}}}",
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return record_dict(self)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def _predict(w: np.ndarray, x: np.ndarray, bound: np.ndarray | None) -> np.ndarray:
    pred: np.ndarray = x @ w
    return pred if bound is None else np.minimum(pred, bound)


def _loss(
    w: np.ndarray, x: np.ndarray, y: np.ndarray, objective: str, bound: np.ndarray | None = None
) -> float:
    pred = _predict(w, x, bound)
    if objective == "squared_error":
        return float(np.mean((pred - y) ** 2))
    r = _pearson(pred, y)
    return 1.0 if math.isnan(r) else -r


def _fit(
    x: np.ndarray,
    y: np.ndarray,
    objective: str,
    start: np.ndarray | None,
    bound: np.ndarray | None = None,
) -> np.ndarray:
    from scipy import optimize

    k = x.shape[1]
    starts: list[np.ndarray] = [np.full(k, 1.0 / k), *np.eye(k)]
    if start is not None:
        starts.insert(0, start)
    best = starts[0]
    best_loss = _loss(best, x, y, objective, bound)
    for w0 in starts:
        result = optimize.minimize(
            _loss,
            w0,
            args=(x, y, objective, bound),
            method="SLSQP",
            bounds=[(0.0, 1.0)] * k,
            constraints=[{"type": "eq", "fun": lambda w: float(np.sum(w) - 1.0)}],
            options={"maxiter": 500, "ftol": 1e-12},
        )
        w = np.clip(result.x, 0.0, None)
        w = w / w.sum() if w.sum() > 0 else np.full(k, 1.0 / k)
        loss = _loss(w, x, y, objective, bound)
        if loss < best_loss - 1e-12:
            best, best_loss = w, loss
    return best


def _fold_ids(n: int, folds: int, groups: Sequence[Any] | None, seed: int) -> np.ndarray:
    """Return the fold of each item: scikit-learn's ``GroupKFold`` with shuffled groups.

    Without ``groups`` every item is its own group. The groups are shuffled with ``seed`` and
    dealt into ``folds`` runs of (nearly) equal group counts, so one group never spans two
    folds. scikit-learn is imported here, not with the package.
    """
    from sklearn.model_selection import GroupKFold

    keys = np.arange(n) if groups is None else np.array([str(g) for g in groups])
    n_groups = len(np.unique(keys))
    if n_groups < folds:
        raise InputValueError(f"folds ({folds}) must not exceed the number of groups ({n_groups})")
    ids = np.empty(n, dtype=int)
    splitter = GroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    for fold, (_, test) in enumerate(splitter.split(np.zeros(n), groups=keys)):
        ids[test] = fold
    return ids


def calibrate_weights(
    components: Mapping[str, Sequence[float] | np.ndarray],
    labels: Sequence[float] | np.ndarray,
    *,
    objective: Objective = "pearson",
    folds: int = 5,
    groups: Sequence[Any] | None = None,
    default_weights: Mapping[str, float] | None = None,
    metric: str = "metric",
    seed: int = 0,
    upper_bounds: Sequence[float] | np.ndarray | None = None,
) -> CalibrationResult:
    r"""Fit non-negative component weights that sum to 1, with k-fold cross-validation.

    Parameters
    ----------
    components : mapping of str to sequence of float
        Each component's value on every item (e.g. a breakdown's ``components``), all the
        same length. Only the data to fit on: never pass the held-out split.
    labels : sequence of float
        The labels, same length.
    objective : {"pearson", "squared_error"}, default "pearson"
        Maximise Pearson's r of ``sum_k w_k c_k`` with the labels, or minimise the mean
        squared difference between that weighted score and the labels.
    folds : int, default 5
        Number of cross-validation folds (at least 2).
    groups : sequence, optional
        A group per item; items of one group stay in one fold (pairs built on the same
        function), so the cross-validated figure is not flattered by near-duplicates.
    default_weights : mapping, optional
        The metric's defaults; their Pearson is reported next to the fitted one, and they are
        one of the optimiser's starting points.
    metric : str, default "metric"
    seed : int, default 0
        Seed of the fold assignment (scikit-learn's ``GroupKFold`` with shuffled groups;
        without ``groups`` each item is its own group).
    upper_bounds : sequence of float, optional
        One per item: the most its weighted score may be (``inf`` for no bound), applied
        before the score is compared with the label, in the fit and in every figure. It is
        how a metric's cap enters the fit, e.g. ``code_quality``'s ``stub_cap`` on the items
        that are stubs.

    Returns
    -------
    CalibrationResult

    Raises
    ------
    ValueError
        On empty or unequal inputs, fewer items than ``2 * folds``, an unknown objective,
        default weights with other keys than ``components``, or ``upper_bounds`` of another
        length or with a nan.

    Notes
    -----
    The weights are found with SLSQP under :math:`w_k \ge 0,\ \sum_k w_k = 1`, started
    from the defaults, uniform weights and every single component, keeping the best.
    ``cv_pearson`` is Pearson's r of the pooled out-of-fold predictions: each item is scored
    with weights fitted on the other folds only.

    Examples
    --------
    Labels made from known weights 0.7 / 0.3 are recovered:

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> a, b, c = rng.random(60), rng.random(60), rng.random(60)
    >>> fit = calibrate_weights({"a": a, "b": b, "c": c}, 0.7 * a + 0.3 * b,
    ...                         objective="squared_error")
    >>> {k: round(v, 3) for k, v in fit.weights.items()}
    {'a': 0.7, 'b': 0.3, 'c': 0.0}
    >>> round(fit.cv_pearson, 3)
    1.0
    """
    if not isinstance(components, Mapping) or not components:
        raise InputTypeError("components must be a non-empty mapping of name -> values")
    names = [str(k) for k in components]
    columns = [as_float_array(f"components[{k!r}]", v) for k, v in components.items()]
    y = as_float_array("labels", labels)
    for name, column in zip(names, columns, strict=True):
        if column.size != y.size:
            raise InputValueError(
                f"components[{name!r}] has {column.size} values but labels has {y.size}"
            )
    x = np.column_stack(columns)
    kind = check_choice("objective", objective, _OBJECTIVES)
    k = check_int("folds", folds, minimum=2)
    if y.size < 2 * k:
        raise InputValueError(f"need at least 2 * folds = {2 * k} items to calibrate, got {y.size}")
    if groups is not None and len(groups) != y.size:
        raise InputValueError(f"groups must have one entry per label ({y.size}), got {len(groups)}")
    bound: np.ndarray | None = None
    if upper_bounds is not None:
        bound = np.asarray(upper_bounds, dtype=float)
        if bound.ndim != 1 or bound.size != y.size or np.isnan(bound).any():
            raise InputValueError(
                f"upper_bounds must hold one number (inf for none) per label ({y.size}), "
                f"got {bound.size} values"
                + (" with a nan" if bound.size and np.isnan(bound).any() else "")
            )
    start: np.ndarray | None = None
    defaults: dict[str, float] | None = None
    if default_weights is not None:
        if set(default_weights) != set(names):
            raise InputValueError(
                f"default_weights must have the keys {sorted(names)}, got {sorted(default_weights)}"
            )
        raw = np.array(
            [check_non_negative(f"default_weights[{n!r}]", default_weights[n]) for n in names]
        )
        start = raw / raw.sum()
        defaults = dict(zip(names, (float(v) for v in start), strict=True))

    weights = _fit(x, y, kind, start, bound)
    fold_ids = _fold_ids(y.size, k, groups, seed)
    oof = np.empty(y.size)
    fold_r: list[float] = []
    fold_weights: list[dict[str, float]] = []
    for fold in range(k):
        test = fold_ids == fold
        train_bound = None if bound is None else bound[~test]
        test_bound = None if bound is None else bound[test]
        w = _fit(x[~test], y[~test], kind, start, train_bound)
        oof[test] = _predict(w, x[test], test_bound)
        fold_r.append(_pearson(oof[test], y[test]))
        fold_weights.append(dict(zip(names, (float(v) for v in w), strict=True)))
    return CalibrationResult(
        metric=metric,
        weights={n: float(round(v, 12)) for n, v in zip(names, weights, strict=True)},
        default_weights=defaults,
        objective=kind,
        n=int(y.size),
        folds=k,
        in_sample_pearson=_pearson(_predict(weights, x, bound), y),
        cv_pearson=_pearson(oof, y),
        cv_fold_pearson=tuple(fold_r),
        default_pearson=None if start is None else _pearson(_predict(start, x, bound), y),
        fold_weights=tuple(fold_weights),
    )
