"""Resampling kernels of the paired statistics.

Bootstrap means (:func:`lift_metrics._resampling.bootstrap_means`), their percentile interval
and sign-flip p-values, the three together per column (:func:`bootstrap_intervals`), and the
check of the options they share.
They work on an ``(n, m)`` array of paired differences and resample its rows in chunks whose
size bounds memory; :func:`~lift_metrics.stats.paired_comparison` and
:func:`~lift_metrics.stats.paired_bootstrap` use them (docs/statistics.md#paired-ab).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from lift_metrics._checks import check_confidence_level, check_int
from lift_metrics._resampling import bootstrap_means, chunk_rows, percentile_interval
from lift_metrics.stats._intervals import check_seed

__all__ = [
    "MAX_RESAMPLES",
    "bootstrap_intervals",
    "check_resampling",
    "sign_flip_p_values",
]

#: the most bootstrap resamples a statistic accepts: far past where percentile intervals stop
#: changing, and a bound on the memory that the resampled statistics themselves take
MAX_RESAMPLES = 1_000_000


def check_resampling(
    n_resamples: Any, confidence_level: Any, seed: Any
) -> tuple[int, float, int | None]:
    """Validate the options of a paired bootstrap: ``(n_resamples, confidence_level, seed)``.

    ``n_resamples`` is a whole number from 100 to :data:`MAX_RESAMPLES`, the level is in
    (0, 1) (:func:`lift_metrics._checks.check_confidence_level`) and ``seed`` None or a
    non-negative integer.

    Examples
    --------
    >>> check_resampling(10_000, 0.95, 0)
    (10000, 0.95, 0)
    """
    return (
        check_int("n_resamples", n_resamples, minimum=100, maximum=MAX_RESAMPLES),
        check_confidence_level(confidence_level),
        check_seed(seed),
    )


def sign_flip_p_values(
    data: npt.NDArray[np.float64], n_resamples: int, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    """Two-sided paired sign-flip permutation p-values of the mean of every column.

    ``p = (1 + #{|mean(s * d)| >= |mean(d)|}) / (1 + n_resamples)`` over random sign vectors
    ``s`` (shared by the columns); the ``+1`` keeps p above 0 (Phipson & Smyth, 2010).

    Parameters
    ----------
    data : numpy.ndarray of float64, shape (n, m)
        One row per pair, one column per statistic.
    n_resamples : int
        Number of random sign vectors.
    rng : numpy.random.Generator
        Source of the signs.

    Returns
    -------
    numpy.ndarray of float64, shape (m,)
        One p-value per column.
    """
    n, m = data.shape
    observed = np.abs(data.mean(axis=0))
    total = data.sum(axis=0)
    tolerance = 1e-12 * (np.abs(data).sum(axis=0) / n) + 1e-300
    hits = np.zeros(m, dtype=np.int64)
    step = chunk_rows(n)
    n_bytes = (n + 7) // 8
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        raw = rng.integers(0, 256, size=(size, n_bytes), dtype=np.uint8)
        bits = np.unpackbits(raw, axis=1, count=n).astype(np.float64)
        flipped = np.abs(2.0 * (bits @ data) - total) / n
        hits += (flipped >= observed - tolerance).sum(axis=0)
    return np.asarray((hits + 1) / (n_resamples + 1), dtype=np.float64)


def bootstrap_intervals(
    data: npt.NDArray[np.float64],
    n_resamples: int,
    confidence_level: float,
    rng: np.random.Generator,
) -> tuple[list[tuple[float, float]], npt.NDArray[np.float64]]:
    """Return the percentile interval of each column's mean and its sign-flip p-value.

    The bootstrap means come first from ``rng``, then the signs
    (:func:`lift_metrics._resampling.bootstrap_means`, :func:`sign_flip_p_values`,
    :func:`percentile_interval`). A column that is the same on every row has no sampling
    variability: its interval is zero-width at that value.

    Returns
    -------
    (intervals, p_values)
        ``[(low, high)]`` one per column, and the p-values, shape ``(m,)``.

    Examples
    --------
    >>> data = np.array([[1.0, 2.0], [1.0, 4.0], [1.0, 3.0]])
    >>> intervals, p_values = bootstrap_intervals(data, 200, 0.95, np.random.default_rng(0))
    >>> intervals[0]
    (1.0, 1.0)
    """
    means = bootstrap_means(data, n_resamples, rng)
    p_values = sign_flip_p_values(data, n_resamples, rng)
    lows, highs = percentile_interval(means, confidence_level)
    intervals = []
    for j in range(data.shape[1]):
        column = data[:, j]
        if np.all(column == column[0]):  # constant: no sampling variability at all
            intervals.append((float(column[0]), float(column[0])))
        else:
            intervals.append((float(lows[j]), float(highs[j])))
    return intervals, p_values
