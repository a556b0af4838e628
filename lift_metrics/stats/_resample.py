"""Resampling kernels of the paired statistics.

Bootstrap means, their percentile interval and sign-flip p-values, the three together per
column (:func:`bootstrap_intervals`), and the check of the options they share.
They work on an ``(n, m)`` array of paired differences and resample its rows in chunks whose
size bounds memory; :func:`~lift_metrics.stats.paired_comparison` and
:func:`~lift_metrics.stats.paired_bootstrap` use them (docs/statistics.md#paired-ab).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from lift_metrics._checks import check_int
from lift_metrics.errors import InputTypeError
from lift_metrics.stats._intervals import check_confidence_level, check_seed

__all__ = [
    "MAX_RESAMPLES",
    "bootstrap_intervals",
    "bootstrap_means",
    "check_resampling",
    "percentile_interval",
    "sign_flip_p_values",
]

#: the most bootstrap resamples a statistic accepts: far past where percentile intervals stop
#: changing, and a bound on the memory that the resampled statistics themselves take
MAX_RESAMPLES = 1_000_000
# elements per resampling chunk: bounds memory (about 8 bytes x 3 per element)
_CHUNK_ELEMENTS = 4_000_000


def check_resampling(
    n_resamples: Any, confidence_level: Any, seed: Any
) -> tuple[int, float, int | None]:
    """Validate the options of a paired bootstrap: ``(n_resamples, confidence_level, seed)``.

    ``n_resamples`` is a whole number from 100 to :data:`MAX_RESAMPLES`, the level is in
    (0, 1) (:func:`~lift_metrics.stats.check_confidence_level`) and ``seed`` None or a
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


def _chunk_rows(n: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(n, 1))


def bootstrap_means(
    data: npt.NDArray[np.float64], n_resamples: int, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    """Means of every column of ``data`` (n, m) over ``n_resamples`` paired resamples.

    Rows are resampled with replacement, the same rows for every column (a paired
    bootstrap). Each chunk of resamples is a sparse 0/1 selection matrix (one row per
    resample, ``n`` drawn row indices, repeats summed by the product) multiplied by
    ``data``: one pass over the drawn indices serves all columns, so 10,000 pairs x 10,000
    resamples take about half a second.

    Parameters
    ----------
    data : numpy.ndarray of float64, shape (n, m)
        One row per pair, one column per statistic.
    n_resamples : int
        Number of bootstrap resamples, at least 1 (the callers bound it by
        :data:`MAX_RESAMPLES`).
    rng : numpy.random.Generator
        Source of the resampled row indices.

    Returns
    -------
    numpy.ndarray of float64, shape (n_resamples, m)
        The column means of each resample.

    Examples
    --------
    >>> data = np.array([[1.0, 0.0], [1.0, 2.0]])
    >>> bootstrap_means(data, 3, np.random.default_rng(0)).shape
    (3, 2)
    """
    from scipy import sparse

    if not isinstance(data, np.ndarray) or data.ndim != 2:
        shape = f"an array of shape {data.shape}" if isinstance(data, np.ndarray) else None
        raise InputTypeError(
            f"data must be a 2-D numpy array (pairs x statistics), got "
            f"{shape or type(data).__name__}"
        )
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    if not isinstance(rng, np.random.Generator):
        raise InputTypeError(
            f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got "
            f"{type(rng).__name__}"
        )
    n = data.shape[0]
    out = np.empty((n_resamples, data.shape[1]), dtype=np.float64)
    step = _chunk_rows(n)
    index_dtype = np.int64 if step * n >= 2**31 else np.int32
    ones = np.ones(min(step, n_resamples) * n, dtype=np.float64)  # the largest chunk's
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        idx = rng.integers(0, n, size=size * n, dtype=index_dtype)
        indptr = np.arange(0, size * n + 1, n, dtype=index_dtype)
        selection = sparse.csr_matrix((ones[: size * n], idx, indptr), shape=(size, n))
        out[start : start + size] = (selection @ data) / n
    return out


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
    step = _chunk_rows(n)
    n_bytes = (n + 7) // 8
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        raw = rng.integers(0, 256, size=(size, n_bytes), dtype=np.uint8)
        bits = np.unpackbits(raw, axis=1, count=n).astype(np.float64)
        flipped = np.abs(2.0 * (bits @ data) - total) / n
        hits += (flipped >= observed - tolerance).sum(axis=0)
    return np.asarray((hits + 1) / (n_resamples + 1), dtype=np.float64)


def percentile_interval(
    means: npt.NDArray[np.float64], confidence_level: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Return the percentile interval of resampled statistics, per column: ``(lows, highs)``.

    ``means`` is ``(n_resamples, m)`` (or ``(n_resamples,)``); the bounds are the
    ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of each column.
    """
    alpha = 1.0 - confidence_level
    lows, highs = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    return lows, highs


def bootstrap_intervals(
    data: npt.NDArray[np.float64],
    n_resamples: int,
    confidence_level: float,
    rng: np.random.Generator,
) -> tuple[list[tuple[float, float]], npt.NDArray[np.float64]]:
    """Return the percentile interval of each column's mean and its sign-flip p-value.

    The bootstrap means come first from ``rng``, then the signs (:func:`bootstrap_means`,
    :func:`sign_flip_p_values`, :func:`percentile_interval`). A column that is the same on
    every row has no sampling variability: its interval is zero-width at that value.

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
