"""Per-run and cross-tier scoring formulas (docs/statistics.md#grades)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lift_metrics._checks import (
    as_float_array,
    check_int,
    check_non_negative,
    check_real,
    check_unit_interval,
)
from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.stats._summary import check_ddof, variance_of

#: The default letter-grade scale: grade -> inclusive lower bound of the score.
DEFAULT_GRADE_SCALE: Mapping[str, float] = {"A": 0.95, "B": 0.85, "C": 0.75, "D": 0.65, "F": 0.0}


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise InputTypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
    return bool(value)


def pass_rate(passed: bool | Sequence[bool]) -> float:
    """Pass rate of one run (1.0 or 0.0) or the fraction of passing runs in a sequence.

    Parameters
    ----------
    passed : bool or sequence of bool
        Whether the run passed all its tests, or one such flag per run.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    TypeError
        If a flag is not a bool (``1``/``"yes"`` are refused rather than guessed).
    ValueError
        For an empty sequence.

    Notes
    -----
    Per run: ``1.0 if passed else 0.0``; over runs: ``sum(passed) / len(passed)``.

    Examples
    --------
    >>> pass_rate(True)
    1.0
    >>> pass_rate([True, True, False, True])
    0.75
    """
    if isinstance(passed, bool | np.bool_):
        return 1.0 if passed else 0.0
    if isinstance(passed, str | bytes | Mapping) or not isinstance(passed, Sequence | np.ndarray):
        raise InputTypeError(f"passed must be a bool or a sequence of bools, got {passed!r}")
    flags = [_check_bool(f"passed[{i}]", flag) for i, flag in enumerate(passed)]
    if not flags:
        raise InputValueError("passed must not be empty")
    return sum(flags) / len(flags)


def cost_usd(
    input_tokens: int,
    output_tokens: int,
    *,
    input_price_per_m: float,
    output_price_per_m: float,
) -> float:
    """Cost of one run in US dollars from token counts and per-million-token prices.

    Parameters
    ----------
    input_tokens, output_tokens : int
        Token counts, non-negative.
    input_price_per_m, output_price_per_m : float
        Prices in USD per 1,000,000 tokens, non-negative.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        For non-integer or negative token counts, negative or non-finite prices.

    Notes
    -----
    ``input_tokens * input_price_per_m / 1e6 + output_tokens * output_price_per_m / 1e6``.

    Examples
    --------
    >>> cost_usd(1_000_000, 200_000, input_price_per_m=3.0, output_price_per_m=15.0)
    6.0
    """
    n_in = check_int("input_tokens", input_tokens, minimum=0)
    n_out = check_int("output_tokens", output_tokens, minimum=0)
    p_in = check_non_negative("input_price_per_m", input_price_per_m)
    p_out = check_non_negative("output_price_per_m", output_price_per_m)
    return (n_in * p_in + n_out * p_out) / 1_000_000


def cost_of_pass(cost_usd: float, pass_rate: float) -> float:
    """Return the expected cost of one passing run: ``cost_usd / pass_rate``.

    Parameters
    ----------
    cost_usd : float
        Cost per run (or mean cost per run), non-negative.
    pass_rate : float
        Fraction of runs that pass, in [0, 1].

    Returns
    -------
    float
        ``inf`` when ``pass_rate == 0`` (it never passes); JSON output writes it as ``null``
        with an ``_is_infinite`` flag and reports print ``∞``.

    Raises
    ------
    ValueError
        For a negative or non-finite cost or a rate outside [0, 1].

    Examples
    --------
    >>> cost_of_pass(0.50, 1.0)
    0.5
    >>> cost_of_pass(0.30, 0.6)
    0.5
    >>> cost_of_pass(0.30, 0.0)
    inf
    """
    cost = check_non_negative("cost_usd", cost_usd)
    rate = check_unit_interval("pass_rate", pass_rate)
    if rate == 0.0:
        return math.inf
    return cost / rate


def composite_score(
    pass_rate: float,
    impl_rate: float,
    *,
    pass_weight: float = 0.5,
    impl_weight: float = 0.5,
) -> float:
    """Weighted mean of the pass rate and the implementation rate.

    Parameters
    ----------
    pass_rate, impl_rate : float
        In [0, 1].
    pass_weight, impl_weight : float, default 0.5
        Non-negative weights with a positive sum.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        For rates outside [0, 1], negative weights or weights summing to zero.

    Notes
    -----
    ``(pass_rate * pass_weight + impl_rate * impl_weight) / (pass_weight + impl_weight)``.

    Examples
    --------
    A task that passes, with an implementation rate of 0.85:

    >>> composite_score(1.0, 0.85)
    0.925
    >>> composite_score(1.0, 0.5, pass_weight=3, impl_weight=1)
    0.875
    """
    p = check_unit_interval("pass_rate", pass_rate)
    r = check_unit_interval("impl_rate", impl_rate)
    wp = check_non_negative("pass_weight", pass_weight)
    wi = check_non_negative("impl_weight", impl_weight)
    if wp + wi <= 0:
        raise InputValueError(
            f"pass_weight + impl_weight must be positive, got {pass_weight!r} + {impl_weight!r}"
        )
    return (p * wp + r * wi) / (wp + wi)


def _check_scale(scale: Mapping[str, float] | None) -> list[tuple[str, float]]:
    if scale is None:
        scale = DEFAULT_GRADE_SCALE
    if not isinstance(scale, Mapping) or not scale:
        raise InputTypeError(
            f"scale must be a non-empty mapping of grade -> lower bound, got {scale!r}"
        )
    items = []
    for grade, bound in scale.items():
        if not isinstance(grade, str):
            raise InputTypeError(f"scale keys must be grade names (str), got {grade!r}")
        items.append((grade, check_real(f"scale[{grade!r}]", bound, allow_inf=True)))
    return sorted(items, key=lambda item: item[1], reverse=True)


def letter_grade(score: float, *, scale: Mapping[str, float] | None = None) -> str:
    """Letter grade of a score: the best grade whose lower bound the score reaches.

    Parameters
    ----------
    score : float
        The score to grade (for example the median composite score of a tier).
    scale : mapping of str to float, optional
        Grade -> inclusive lower bound. Defaults to the scale
        ``{"A": 0.95, "B": 0.85, "C": 0.75, "D": 0.65, "F": 0.0}``.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the score is NaN/infinite or below every bound of the scale.

    Notes
    -----
    Bounds are inclusive (0.85 is a "B"). A score below the lowest bound is an error rather
    than a silent failing grade: the scale does not cover it.

    Examples
    --------
    >>> letter_grade(0.925)
    'B'
    >>> letter_grade(0.95), letter_grade(0.6499)
    ('A', 'F')
    >>> letter_grade(0.7, scale={"pass": 0.7, "fail": 0.0})
    'pass'
    """
    value = check_real("score", score)
    items = _check_scale(scale)
    for grade, bound in items:
        if value >= bound:
            return grade
    lowest_grade, lowest_bound = items[-1]
    raise InputValueError(
        f"score {value!r} is below the lowest bound of scale ({lowest_grade!r}: {lowest_bound!r})"
    )


def tier_uplift(tier_score: float, baseline_score: float) -> float:
    """Relative improvement of a tier's score over the baseline tier (T0).

    Parameters
    ----------
    tier_score, baseline_score : float
        Non-negative scores (for example median composite scores).

    Returns
    -------
    float
        Positive for an improvement, negative for a regression. ``nan`` with a
        ``RuntimeWarning`` when ``baseline_score == 0`` (relative change from zero is
        undefined).

    Raises
    ------
    ValueError
        For negative or non-finite scores.

    Notes
    -----
    ``(tier_score - baseline_score) / baseline_score``.

    Examples
    --------
    >>> round(tier_uplift(0.90, 0.75), 12)
    0.2
    >>> round(tier_uplift(0.80, 0.70), 3)
    0.143
    """
    tier = check_non_negative("tier_score", tier_score)
    base = check_non_negative("baseline_score", baseline_score)
    if base == 0.0:
        warnings.warn(
            "baseline_score is 0: the relative uplift is undefined; returning nan",
            RuntimeWarning,
            stacklevel=2,
        )
        return math.nan
    return (tier - base) / base


def pass_rate_variance(pass_rates: Sequence[float] | np.ndarray, *, ddof: int = 0) -> float:
    """Variance of the tiers' (median) pass rates: how prompt-sensitive the pass rate is.

    Parameters
    ----------
    pass_rates : sequence of float
        One pass rate per tier, each in [0, 1].
    ddof : int, default 0
        0 for the population variance (docs/decisions.md#population-standard-deviation).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For empty input, NaN or rates outside [0, 1].

    Notes
    -----
    ``sum((x - mean)^2) / (n - ddof)``; ``nan`` with a warning when ``n <= ddof``.

    Examples
    --------
    >>> round(pass_rate_variance([1.0, 0.5, 0.5, 0.0]), 12)
    0.125
    """
    array = as_float_array("pass_rates", pass_rates)
    if ((array < 0) | (array > 1)).any():
        raise InputValueError(f"pass_rates must be in [0, 1], got {array.tolist()!r}")
    return variance_of(array, check_ddof(ddof))


def cost_variance(costs_usd: Sequence[float] | np.ndarray, *, ddof: int = 0) -> float:
    """Variance of the tiers' (median) costs in USD².

    Parameters
    ----------
    costs_usd : sequence of float
        One cost per tier, non-negative and finite.
    ddof : int, default 0
        0 for the population variance (docs/decisions.md#population-standard-deviation).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For empty input, NaN, infinite or negative costs.

    Notes
    -----
    ``sum((x - mean)^2) / (n - ddof)``; ``nan`` with a warning when ``n <= ddof``.

    Examples
    --------
    Four tiers (the same formula applied to composite medians):

    >>> cost_variance([0.70, 0.80, 0.85, 0.90])
    0.00546875
    """
    array = _non_negative_costs(costs_usd)
    return variance_of(array, check_ddof(ddof))


def cost_delta(costs_usd: Sequence[float] | np.ndarray) -> float:
    """Difference between the most and the least expensive tier: ``max - min``.

    Parameters
    ----------
    costs_usd : sequence of float
        One cost per tier, non-negative and finite.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For empty input, NaN, infinite or negative costs.

    Examples
    --------
    >>> cost_delta([0.25, 1.0, 0.5])
    0.75
    """
    array = _non_negative_costs(costs_usd)
    return float(array.max() - array.min())


def _non_negative_costs(costs_usd: Any) -> np.ndarray:
    array = as_float_array("costs_usd", costs_usd)
    if (array < 0).any():
        raise InputValueError(f"costs_usd must be >= 0, got {array.tolist()!r}")
    return array
