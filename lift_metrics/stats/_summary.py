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
from lift_metrics._records import PlainRecord, short_repr
from lift_metrics.errors import InputValueError


@dataclass(frozen=True, repr=False)
class Statistics(PlainRecord):
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
        return short_repr(self, "median:.4g mean:.4g mode:.4g min:.4g max:.4g std_dev:.4g count")

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


#: Below this magnitude a sum of a sample cannot overflow.
_SAFE_MAGNITUDE = 2.0**1000


def _power_of_two_scale(array: npt.NDArray[np.float64], *, always: bool = False) -> float:
    """Return a power of two ``s`` with ``max|x| / s`` in [1, 2) (1.0 for all zeros).

    Dividing by a power of two is exact short of the subnormal range, and values that fall
    into it are too small beside the largest to change a sum or a square; so sums and
    squares of ``array / s`` neither overflow nor underflow, and scale back without
    rounding. Unless ``always``, values up to 2**1000 (whose sums cannot overflow) get 1.0,
    so that subnormal values keep every bit.
    """
    largest = float(np.max(np.abs(array))) if array.size else 0.0
    if largest == 0 or (largest <= _SAFE_MAGNITUDE and not always):
        return 1.0
    return math.ldexp(1.0, math.frexp(largest)[1] - 1)


def mean_of(array: npt.NDArray[np.float64]) -> float:
    """Return the mean of a validated (finite, non-empty) array, without overflow.

    ``numpy.mean`` of ``[1e308, 1e308]`` is ``inf`` (the sum overflows). Here the sum is
    :func:`math.fsum`'s (correctly rounded) of the values scaled by a power of two
    (:func:`_power_of_two_scale`), divided by the count and scaled back; rounding never puts
    it outside ``[min, max]``.
    """
    scale = _power_of_two_scale(array)
    mean = math.fsum((array / scale).tolist()) / array.size * scale
    return min(max(mean, float(array.min())), float(array.max()))


def variance_of(array: npt.NDArray[np.float64], ddof: int) -> float:
    """``sum((x - mean)^2) / (n - ddof)`` of a validated array; warns and gives nan if n <= ddof.

    May be ``inf`` where the variance itself is beyond a float (values near 1e308 of both
    signs); :func:`std_of` is finite for every finite input.
    """
    if array.size <= ddof:
        warnings.warn(
            f"variance needs more than ddof={ddof} values, got {array.size}; returning nan",
            RuntimeWarning,
            stacklevel=3,
        )
        return math.nan
    scale = _power_of_two_scale(array, always=True)
    scaled = float(np.var(array / scale, ddof=ddof))
    with np.errstate(over="ignore"):
        return float(np.float64(scaled) * scale * scale)


def std_of(array: npt.NDArray[np.float64], ddof: int) -> float:
    """Return the standard deviation ``sqrt(variance_of(array, ddof))``, without overflow."""
    if array.size <= ddof:
        return math.sqrt(variance_of(array, ddof))  # warns, nan
    scale = _power_of_two_scale(array, always=True)
    return math.sqrt(float(np.var(array / scale, ddof=ddof))) * scale


def _median_of(array: npt.NDArray[np.float64]) -> float:
    """Return the median; two middle values (an even count) are averaged without overflow."""
    ordered = np.sort(array)
    middle = ordered.size // 2
    if ordered.size % 2:
        return float(ordered[middle])
    low, high = float(ordered[middle - 1]), float(ordered[middle])
    total = low + high
    return total / 2 if math.isfinite(total) else low / 2 + high / 2


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
    deviation is undefined: a ``RuntimeWarning`` and ``nan``. Every figure is finite for
    finite input, however large: the mean, median and standard deviation are computed on the
    values divided by a power of two (exact) and scaled back, so ``summarize([1e308, 1e308])``
    has mean ``1e308``, not the ``inf`` of an overflowing sum.

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
    return Statistics(
        median=_median_of(array),
        mean=mean_of(array),
        mode=mode,
        min=float(array.min()),
        max=float(array.max()),
        std_dev=std_of(array, ddof),
        count=int(array.size),
    )


@dataclass(frozen=True, repr=False)
class LatencyPercentiles(PlainRecord):
    """The median (p50) and 95th percentile (p95) of latencies, in the input's unit."""

    p50: float
    p95: float
    count: int

    def __repr__(self) -> str:
        return short_repr(self, "p50:.4g p95:.4g count")


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
