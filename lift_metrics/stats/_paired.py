"""Paired bootstrap of the mean difference of two score vectors (``a - b``, per example)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from lift_metrics._checks import as_float_array
from lift_metrics._records import record_dict, short_repr
from lift_metrics.errors import InputValueError
from lift_metrics.stats._intervals import ConfidenceInterval
from lift_metrics.stats._resample import bootstrap_intervals, check_resampling, sign_flip_p_values

__all__ = ["PairedBootstrap", "paired_bootstrap"]


@dataclass(frozen=True, repr=False)
class PairedBootstrap:
    """Result of :func:`paired_bootstrap`; unpacks like ``(mean_delta, interval, p_value)``.

    Attributes
    ----------
    mean_a, mean_b : float
        Means of the two score vectors.
    mean_delta : float
        ``mean(a - b)``, the mean paired difference (as ``scipy.stats.ttest_rel(a, b)``).
    interval : ConfidenceInterval
        Paired bootstrap percentile interval of ``mean_delta``.
    p_value : float
        Two-sided sign-flip permutation p-value (H0: the differences are symmetric around 0).
    n_pairs, n_resamples : int
    seed : int or None
    """

    mean_a: float
    mean_b: float
    mean_delta: float
    interval: ConfidenceInterval
    p_value: float
    n_pairs: int
    n_resamples: int
    seed: int | None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.mean_delta, self.interval, self.p_value))

    def __repr__(self) -> str:
        return short_repr(
            self, "mean_delta:.4g interval p_value:.4g n_pairs", interval=self.interval.format()
        )

    @property
    def verdict(self) -> str:
        """Return ``"a higher"`` / ``"a lower"`` when the interval excludes 0.

        Return ``"no difference"`` when every pair is equal, else ``"inconclusive"``.
        """
        low, high = self.interval
        if low == high == 0.0:
            return "no difference"
        if low > 0:
            return "a higher"
        if high < 0:
            return "a lower"
        return "inconclusive"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return record_dict(self, method="percentile")


def paired_bootstrap(
    a: Any,
    b: Any,
    *,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
) -> PairedBootstrap:
    """Mean paired difference ``a - b`` with a bootstrap interval and a sign-flip p-value.

    Parameters
    ----------
    a, b : sequence of float
        Scores of the same examples under two conditions (e.g. optimized ``a`` and baseline
        ``b``), ``a[i]`` paired with ``b[i]``; equal lengths, at least 1, finite. The delta
        is ``a - b``, the sign of ``scipy.stats.ttest_rel(a, b)`` and of every paired
        statistic in this package (see docs/decisions.md#sign-of-a-delta).
    n_resamples : int, default 10_000
        Bootstrap resamples and random sign flips, from 100 to 1,000,000.
    confidence_level : float, default 0.95
        Level of the interval, in (0, 1).
    seed : int or None, default 0
        Seed of ``numpy.random.default_rng``; a fixed seed gives bit-identical results,
        ``None`` draws fresh entropy.

    Returns
    -------
    PairedBootstrap

    Raises
    ------
    TypeError
        For non-numeric scores or a non-integer ``n_resamples``/``seed``.
    ValueError
        For empty, NaN or infinite scores, unequal lengths, ``n_resamples < 100``, a level
        outside (0, 1) or a negative seed.

    Notes
    -----
    With ``d_i = a_i - b_i``: ``mean_delta = mean(d)``. The interval is the percentile
    interval of ``mean(d*)`` over ``n_resamples`` resamples ``d*`` of the pairs drawn with
    replacement (the same resampling as
    :func:`~lift_metrics.stats.paired_comparison`; it agrees with
    ``scipy.stats.bootstrap(..., method="percentile")`` up to Monte-Carlo error). The
    p-value is ``(1 + #{|mean(s * d)| >= |mean(d)|}) / (1 + n_resamples)`` over random
    sign vectors ``s`` (never 0).

    Edge cases: when every ``d_i`` is the same (also a single pair) there is no sampling
    variability and the interval is ``[d_1, d_1]``; all-zero differences give p = 1.
    With few pairs the percentile interval is too narrow (it under-covers below about
    10-20 pairs): read it as descriptive there.

    Examples
    --------
    >>> baseline = [0.2, 0.4, 0.5, 0.1, 0.3, 0.6, 0.2, 0.4]
    >>> optimized = [0.5, 0.6, 0.7, 0.3, 0.4, 0.9, 0.5, 0.5]
    >>> result = paired_bootstrap(optimized, baseline, n_resamples=2000, seed=1)
    >>> round(result.mean_delta, 4), result.verdict
    (0.2, 'a higher')
    >>> bool(result.interval.low > 0) and result.p_value < 0.05
    True
    >>> paired_bootstrap([1.0, 2.0], [1.0, 2.0]).interval
    ConfidenceInterval(low=0, high=0, confidence_level=0.95)
    >>> paired_bootstrap([1.0, 2.0], [1.0])
    Traceback (most recent call last):
    ...
    lift_metrics.errors.InputValueError: a and b must have the same length (paired scores), ...
    """
    x = as_float_array("a", a)
    y = as_float_array("b", b)
    if x.shape != y.shape:
        raise InputValueError(
            f"a and b must have the same length (paired scores), got {x.size} and {y.size}"
        )
    resamples, level, seed_value = check_resampling(n_resamples, confidence_level, seed)
    delta = x - y
    data = delta.reshape(-1, 1)
    rng = np.random.default_rng(seed_value)
    if np.all(delta == delta[0]):  # constant: no sampling variability, nothing to resample
        low = high = float(delta[0])
        p_value = 1.0 if delta[0] == 0 else float(sign_flip_p_values(data, resamples, rng)[0])
    else:
        ((low, high),), p_values = bootstrap_intervals(data, resamples, level, rng)
        p_value = float(p_values[0])
    return PairedBootstrap(
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        mean_delta=float(delta.mean()),
        interval=ConfidenceInterval(low, high, level),
        p_value=p_value,
        n_pairs=int(x.size),
        n_resamples=resamples,
        seed=seed_value,
    )
