"""The paired bootstrap kernel: column means over resampled rows, in bounded-memory chunks.

:func:`bootstrap_means` and :func:`percentile_interval` serve the paired statistics
(:mod:`lift_metrics.stats`), the score summaries (:mod:`lift_metrics.scoring`) and the
reference model's fit; :func:`chunk_rows` is the chunk size that the
resampling loops share (docs/statistics.md#paired-ab).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from lift_metrics._checks import check_int
from lift_metrics.errors import InputTypeError

__all__ = ["bootstrap_means", "chunk_rows", "percentile_interval"]

#: elements per resampling chunk: bounds memory (about 8 bytes x 3 per element)
CHUNK_ELEMENTS = 4_000_000


def chunk_rows(n: int) -> int:
    """Return how many resamples of ``n`` rows one chunk holds (at least 1).

    Examples
    --------
    >>> chunk_rows(1_000), chunk_rows(10**9)
    (4000, 1)
    """
    return max(1, CHUNK_ELEMENTS // max(n, 1))


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
        :data:`~lift_metrics.stats.MAX_RESAMPLES`).
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
    step = chunk_rows(n)
    index_dtype = np.int64 if step * n >= 2**31 else np.int32
    ones = np.ones(min(step, n_resamples) * n, dtype=np.float64)  # the largest chunk's
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        idx = rng.integers(0, n, size=size * n, dtype=index_dtype)
        indptr = np.arange(0, size * n + 1, n, dtype=index_dtype)
        selection = sparse.csr_matrix((ones[: size * n], idx, indptr), shape=(size, n))
        out[start : start + size] = (selection @ data) / n
    return out


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
