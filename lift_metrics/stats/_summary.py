"""Summary statistics of a sample: the ``Statistics`` record and percentiles."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lift_metrics._checks import as_float_array, check_int
from lift_metrics._io import format_number
from lift_metrics.errors import InputValueError


@dataclass(frozen=True, repr=False)
class Statistics:
    """Summary statistics of one sample (docs/statistics.md#summary).

    Attributes
    ----------
    median, mean, mode, min, max : float
        ``mode`` is the smallest of the most frequent values.
    std_dev : float
        Standard deviation with the ``ddof`` given to :func:`summarize` (population, ddof=0,
        by default); ``nan`` when ``count <= ddof``.
    count : int
        Number of values.
    """

    median: float
    mean: float
    mode: float
    min: float
    max: float
    std_dev: float
    count: int

    def __repr__(self) -> str:
        return (
            f"Statistics(median={self.median:.4g}, mean={self.mean:.4g}, mode={self.mode:.4g}, "
            f"min={self.min:.4g}, max={self.max:.4g}, std_dev={self.std_dev:.4g}, "
            f"count={self.count})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return {
            "median": self.median,
            "mean": self.mean,
            "mode": self.mode,
            "min": self.min,
            "max": self.max,
            "std_dev": self.std_dev,
            "count": self.count,
        }

    def format(self, *, digits: int = 4) -> str:
        """One-line human-readable form (``∞`` for infinities)."""
        return (
            f"median {format_number(self.median, digits=digits)}, "
            f"mean {format_number(self.mean, digits=digits)} "
            f"± {format_number(self.std_dev, digits=digits)} (n={self.count})"
        )


def check_ddof(ddof: Any) -> int:
    """Validate the delta degrees of freedom (a non-negative integer)."""
    return check_int("ddof", ddof, minimum=0)


def variance_of(array: npt.NDArray[np.float64], ddof: int) -> float:
    """``sum((x - mean)^2) / (n - ddof)`` of a validated array; warns and gives nan if n <= ddof."""
    if array.size <= ddof:
        warnings.warn(
            f"variance needs more than ddof={ddof} values, got {array.size}; returning nan",
            RuntimeWarning,
            stacklevel=3,
        )
        return math.nan
    return float(np.var(array, ddof=ddof))


def summarize(values: Sequence[float] | np.ndarray, *, ddof: int = 0) -> Statistics:
    r"""Median, mean, mode, min, max, standard deviation and count of ``values``.

    Parameters
    ----------
    values : sequence of float
        The sample; finite, not empty.
    ddof : int, default 0
        Delta degrees of freedom of the standard deviation: 0 is the population standard
        deviation (all runs are observed,
        docs/decisions.md#population-standard-deviation), 1 the sample standard deviation.

    Returns
    -------
    Statistics

    Raises
    ------
    ValueError
        For empty input, NaN or infinite values, or a negative ``ddof``.
    TypeError
        For non-numeric values (bools included) or a non-integer ``ddof``.

    Notes
    -----
    ``median`` averages the two middle values when the count is even; ``mode`` is the
    smallest of the most frequent values; ``std_dev`` is
    :math:`\sqrt{\sum (x - \bar x)^2 / (n - \text{ddof})}`. With ``n <= ddof`` the standard
    deviation is undefined: a ``RuntimeWarning`` and ``nan``.

    Examples
    --------
    Ten runs, eight passing:

    >>> s = summarize([1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0])
    >>> s.median, s.mean, s.mode, s.min, s.max, round(s.std_dev, 12), s.count
    (1.0, 0.8, 1.0, 0.0, 1.0, 0.4, 10)
    >>> summarize([3, 1, 3, 1, 2]).mode
    1.0
    """
    array = as_float_array("values", values)
    ddof = check_ddof(ddof)
    uniques, counts = np.unique(array, return_counts=True)
    mode = float(uniques[int(np.argmax(counts))])  # np.unique sorts: the first max is smallest
    variance = variance_of(array, ddof)
    return Statistics(
        median=float(np.median(array)),
        mean=float(array.mean()),
        mode=mode,
        min=float(array.min()),
        max=float(array.max()),
        std_dev=math.sqrt(variance) if not math.isnan(variance) else math.nan,
        count=int(array.size),
    )


@dataclass(frozen=True, repr=False)
class LatencyPercentiles:
    """The median (p50) and 95th percentile (p95) of latencies, in the input's unit."""

    p50: float
    p95: float
    count: int

    def __repr__(self) -> str:
        return f"LatencyPercentiles(p50={self.p50:.4g}, p95={self.p95:.4g}, count={self.count})"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return {"p50": self.p50, "p95": self.p95, "count": self.count}


def latency_percentiles(latencies: Sequence[float] | np.ndarray) -> LatencyPercentiles:
    """p50 and p95 of a set of latencies (docs/statistics.md#summary).

    Parameters
    ----------
    latencies : sequence of float
        Non-negative, finite latencies in any one unit (for example seconds).

    Returns
    -------
    LatencyPercentiles

    Raises
    ------
    ValueError
        For empty input, NaN, infinite or negative latencies.

    Notes
    -----
    Linear interpolation between order statistics (``numpy.percentile``'s default, the
    same as ``statistics.quantiles(method="inclusive")``).

    Examples
    --------
    >>> latency_percentiles([1.0, 2.0, 3.0, 4.0, 5.0])
    LatencyPercentiles(p50=3, p95=4.8, count=5)
    """
    array = as_float_array("latencies", latencies)
    if (array < 0).any():
        raise InputValueError(
            f"latencies must be >= 0, got {array[array < 0][0]!r} "
            f"at index {int(np.argmax(array < 0))}"
        )
    p50, p95 = np.percentile(array, [50.0, 95.0])
    return LatencyPercentiles(p50=float(p50), p95=float(p95), count=int(array.size))
