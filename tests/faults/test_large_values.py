"""Fault injection: finite values near a float's limit give finite summaries.

A plain ``numpy.mean([1e308, 1e308])`` is ``inf``: numpy sums before it divides, and the sum
overflows. The property: for any finite sample, however large its values, the mean,
median and standard deviation are finite and agree with exact rational arithmetic
(``fractions.Fraction``, an independent reference).
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from lift_metrics.stats import summarize

FINITE = st.floats(allow_nan=False, allow_infinity=False)
NEAR_THE_LIMIT = st.floats(min_value=1e300, max_value=1.7976931348623157e308)


def _exact_mean(values: list[float]) -> Fraction:
    return sum(map(Fraction, values), Fraction(0)) / len(values)


def _exact_std(values: list[float], ddof: int) -> float:
    """sqrt of the exact variance, scaled by a power of two so that the float fits.

    The scale itself may be past a float's range while the result is not: it is applied as
    an exponent (``math.ldexp``), never converted.
    """
    mean = _exact_mean(values)
    variance = sum(((Fraction(v) - mean) ** 2 for v in values), Fraction(0)) / (len(values) - ddof)
    if variance == 0:
        return 0.0
    half_exponent = (variance.numerator.bit_length() - variance.denominator.bit_length()) // 2
    scale = Fraction(2) ** half_exponent  # variance / scale**2 is near 1
    try:
        return math.ldexp(math.sqrt(float(variance / scale**2)), half_exponent)
    except OverflowError:  # two values near opposite limits: the deviation itself is past them
        return math.inf


def test_the_exact_reference_reaches_a_float_s_limit() -> None:
    values = [0.0, 1.0, 1.797693134862315e308, 1.7976931348623157e308, 0.0, -1.7976931348621686e308]
    expected = summarize(values, ddof=1).std_dev
    assert math.isfinite(expected)
    assert _exact_std(values, 1) == pytest.approx(expected, rel=1e-9)


def test_two_values_near_the_limit_have_that_mean() -> None:
    stats = summarize([1e308, 1e308])
    assert (stats.mean, stats.median, stats.std_dev) == (1e308, 1e308, 0.0)
    wide = summarize([-1.7e308, 1.7e308])
    assert (wide.mean, wide.median, wide.std_dev) == (0.0, 0.0, 1.7e308)


def test_a_deviation_past_the_float_range_is_infinite_not_a_wrong_finite_value() -> None:
    values = [1.7976931348623157e308, -7.446288774449769e307]  # |a - b| / sqrt(2) > max
    assert _exact_std(values, 1) == math.inf
    stats = summarize(values, ddof=1)
    assert stats.std_dev == math.inf
    assert math.isfinite(stats.mean)
    assert math.isfinite(summarize(values, ddof=0).std_dev)


@settings(max_examples=300, deadline=None)
@given(st.lists(FINITE, min_size=2, max_size=40), st.sampled_from([0, 1]))
def test_summary_of_any_finite_sample_is_finite_and_exact(values: list[float], ddof: int) -> None:
    stats = summarize(values, ddof=ddof)
    largest = max(abs(v) for v in values)
    tolerance = 1e-12 * largest + 1e-300
    exact_std = _exact_std(values, ddof)
    for figure in (stats.mean, stats.median, stats.std_dev if math.isfinite(exact_std) else 0.0):
        assert math.isfinite(figure), (values, stats)
    assert stats.min <= stats.mean <= stats.max
    assert stats.min <= stats.median <= stats.max
    assert abs(stats.mean - float(_exact_mean(values))) <= tolerance
    ordered = sorted(values)
    middle = len(values) // 2
    median = (
        Fraction(ordered[middle])
        if len(values) % 2
        else (Fraction(ordered[middle - 1]) + Fraction(ordered[middle])) / 2
    )
    assert abs(stats.median - float(median)) <= tolerance
    assert stats.std_dev == pytest.approx(exact_std, rel=1e-9, abs=tolerance)


@settings(max_examples=100, deadline=None)
@given(st.lists(NEAR_THE_LIMIT, min_size=1, max_size=40))
def test_values_near_the_limit_keep_their_mean_between_min_and_max(values: list[float]) -> None:
    stats = summarize(values)
    assert stats.min <= stats.mean <= stats.max
    assert math.isfinite(stats.std_dev)
