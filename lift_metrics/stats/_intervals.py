"""Confidence intervals: Wilson score intervals for rates and t intervals for means."""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lift_metrics._checks import as_float_array, check_confidence_level, check_int
from lift_metrics._io import format_number
from lift_metrics._records import PlainRecord, short_repr
from lift_metrics.errors import InputValueError


@dataclass(frozen=True, repr=False)
class ConfidenceInterval(PlainRecord):
    """A two-sided confidence interval ``[low, high]``; unpacks like ``(low, high)``.

    Attributes
    ----------
    low, high : float
        The interval's bounds (``nan`` when the data cannot give an interval).
    confidence_level : float
        The nominal coverage, e.g. 0.95.
    """

    low: float
    high: float
    confidence_level: float

    def __iter__(self) -> Iterator[float]:
        return iter((self.low, self.high))

    def __repr__(self) -> str:
        return short_repr(self, "low:.4g high:.4g confidence_level:g")

    def contains(self, value: float) -> bool:
        """Whether ``low <= value <= high`` (False for a ``nan`` interval)."""
        return bool(self.low <= value <= self.high)

    def format(self, *, digits: int = 4) -> str:
        """``[low, high]`` with :func:`lift_metrics._io.format_number`."""
        low = format_number(self.low, digits=digits)
        high = format_number(self.high, digits=digits)
        return f"[{low}, {high}]"


def _z(confidence_level: float) -> float:
    return statistics.NormalDist().inv_cdf(0.5 + confidence_level / 2.0)


def wilson_interval(
    successes: int, trials: int, *, confidence_level: float = 0.95
) -> ConfidenceInterval:
    r"""Wilson score interval for a binomial proportion ``successes / trials``.

    Parameters
    ----------
    successes : int
        Number of successes, ``0 <= successes <= trials``.
    trials : int
        Number of trials, at least 1.
    confidence_level : float, default 0.95
        Nominal coverage in (0, 1).

    Returns
    -------
    ConfidenceInterval
        Bounds clipped to [0, 1].

    Raises
    ------
    TypeError
        If a count is not an integer.
    ValueError
        If ``trials < 1``, ``successes`` is outside ``[0, trials]`` or the level is outside (0, 1).

    Notes
    -----
    With :math:`\hat p = s/n` and :math:`z` the standard normal quantile at
    :math:`(1 + \text{level})/2`:

    .. math::

        \frac{\hat p + z^2/(2n) \pm z \sqrt{\hat p (1-\hat p)/n + z^2/(4n^2)}}{1 + z^2/n}

    Unlike the normal (Wald) interval it stays inside [0, 1] and is not degenerate at
    0 or n successes, which makes it the better choice for small run counts.

    Examples
    --------
    >>> ci = wilson_interval(8, 10)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.4902, 0.9433)
    >>> low, high = wilson_interval(0, 10)
    >>> low, round(high, 4)
    (0.0, 0.2775)
    """
    trials = check_int("trials", trials, minimum=1)
    successes = check_int("successes", successes, minimum=0)
    if successes > trials:
        raise InputValueError(f"successes must be <= trials ({trials}), got {successes}")
    level = check_confidence_level(confidence_level)
    z = _z(level)
    p = successes / trials
    z2 = z * z
    denom = 1.0 + z2 / trials
    centre = (p + z2 / (2.0 * trials)) / denom
    half = z * math.sqrt(p * (1.0 - p) / trials + z2 / (4.0 * trials * trials)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return ConfidenceInterval(low, high, level)


def mean_interval(
    values: Sequence[float] | np.ndarray, *, confidence_level: float = 0.95
) -> ConfidenceInterval:
    r"""Student-t confidence interval for the mean of ``values``.

    Parameters
    ----------
    values : sequence of float
        The sample; finite, not empty.
    confidence_level : float, default 0.95
        Nominal coverage in (0, 1).

    Returns
    -------
    ConfidenceInterval
        ``nan`` bounds (with a ``RuntimeWarning``) for a single value.

    Raises
    ------
    ValueError
        For empty input, NaN or infinite values, or a level outside (0, 1).

    Notes
    -----
    :math:`\bar x \pm t_{(1+\text{level})/2,\,n-1}\, s/\sqrt{n}` with the sample
    standard deviation :math:`s` (ddof=1). Constant data gives the zero-width interval
    ``[mean, mean]``.

    Examples
    --------
    >>> ci = mean_interval([1.0, 2.0, 3.0, 4.0])
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.4457, 4.5543)
    """
    array = as_float_array("values", values)
    level = check_confidence_level(confidence_level)
    mean = float(array.mean())
    if array.size < 2:
        warnings.warn(
            "mean_interval needs at least 2 values; returning nan bounds",
            RuntimeWarning,
            stacklevel=2,
        )
        return ConfidenceInterval(math.nan, math.nan, level)
    from scipy import stats as scipy_stats

    sem = float(array.std(ddof=1)) / math.sqrt(array.size)
    if sem == 0.0:
        return ConfidenceInterval(mean, mean, level)
    t = float(scipy_stats.t.ppf(0.5 + level / 2.0, array.size - 1))
    return ConfidenceInterval(mean - t * sem, mean + t * sem, level)


def check_seed(seed: Any) -> int | None:
    """Validate a random seed: ``None`` or a non-negative integer."""
    if seed is None:
        return None
    return check_int("seed", seed, minimum=0)
