"""Summary statistics, percentiles and intervals (docs/statistics.md)."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lift_metrics.stats import (
    Statistics,
    latency_percentiles,
    mean_interval,
    summarize,
    wilson_interval,
)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_hand_computed_example_2_ten_run_aggregation() -> None:
    # hand-computed: median 1.0, mean 0.8, mode 1.0, min 0, max 1, std 0.4
    s = summarize([1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0])
    assert s == Statistics(
        median=1.0, mean=0.8, mode=1.0, min=0.0, max=1.0, std_dev=pytest.approx(0.4), count=10
    )


def test_even_count_median_averages_middle_values() -> None:
    assert summarize([4.0, 1.0, 3.0, 2.0]).median == 2.5


def test_mode_is_smallest_of_tied_values() -> None:
    assert summarize([5, 3, 5, 3, 9]).mode == 3.0
    assert summarize([2.5, 0.5]).mode == 0.5


def test_ddof_one_gives_sample_std() -> None:
    values = [1.0, 2.0, 4.0, 7.0]
    assert summarize(values, ddof=1).std_dev == pytest.approx(statistics.stdev(values))
    assert summarize(values).std_dev == pytest.approx(statistics.pstdev(values))


def test_single_value_with_ddof_one_warns_and_gives_nan() -> None:
    with pytest.warns(RuntimeWarning, match="ddof"):
        s = summarize([3.0], ddof=1)
    assert math.isnan(s.std_dev)
    assert s.mean == 3.0


@pytest.mark.parametrize(
    ("values", "error", "match"),
    [
        ([], ValueError, "values must not be empty"),
        ([1.0, float("nan")], ValueError, "NaN"),
        ([1.0, float("inf")], ValueError, "finite"),
        ([True, False], TypeError, "real numbers"),
        ("123", TypeError, "sequence"),
    ],
)
def test_bad_values_are_rejected(values: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        summarize(values)  # type: ignore[arg-type]


def test_negative_ddof_is_rejected() -> None:
    with pytest.raises(ValueError, match="ddof must be >= 0"):
        summarize([1.0, 2.0], ddof=-1)


@settings(deadline=None)  # timing-independent: the machine may be busy
@given(st.lists(finite, min_size=1, max_size=40))
def test_summarize_matches_statistics_module(values: list[float]) -> None:
    s = summarize(values)
    assert s.mean == pytest.approx(statistics.fmean(values), rel=1e-9, abs=1e-6)
    assert s.median == pytest.approx(statistics.median(values), rel=1e-12, abs=1e-9)
    assert s.std_dev == pytest.approx(statistics.pstdev(values), rel=1e-7, abs=1e-6)
    assert s.mode == min(statistics.multimode(values))
    assert (s.min, s.max, s.count) == (min(values), max(values), len(values))


def test_latency_percentiles_match_statistics_quantiles() -> None:
    data = [0.8, 1.2, 0.5, 3.9, 2.2, 1.1, 0.9, 7.5, 1.4, 1.0, 2.0]
    p = latency_percentiles(data)
    cuts = statistics.quantiles(data, n=100, method="inclusive")
    assert p.p50 == pytest.approx(statistics.median(data))
    assert p.p95 == pytest.approx(cuts[94])
    assert p.count == len(data)


def test_latency_percentiles_reject_negative() -> None:
    with pytest.raises(ValueError, match="latencies must be >= 0"):
        latency_percentiles([1.0, -0.5])


@pytest.mark.parametrize(("successes", "trials"), [(0, 10), (8, 10), (10, 10), (1, 1), (37, 120)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_wilson_interval_matches_scipy(successes: int, trials: int, level: float) -> None:
    from scipy.stats import binomtest

    expected = binomtest(successes, trials).proportion_ci(level, method="wilson")
    got = wilson_interval(successes, trials, confidence_level=level)
    assert got.low == pytest.approx(expected.low, abs=1e-12)
    assert got.high == pytest.approx(expected.high, abs=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"successes": 11, "trials": 10}, ValueError, "successes must be <= trials"),
        ({"successes": 0, "trials": 0}, ValueError, "trials must be >= 1"),
        ({"successes": 1.0, "trials": 2}, TypeError, "successes must be an integer"),
        ({"successes": 1, "trials": 2, "confidence_level": 1.0}, ValueError, "in \\(0, 1\\)"),
    ],
)
def test_wilson_interval_bad_input(kwargs: dict[str, object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        wilson_interval(**kwargs)  # type: ignore[arg-type]


def test_mean_interval_matches_scipy_t_interval() -> None:
    from scipy import stats

    data = np.array([2.1, 3.4, 1.9, 5.6, 4.4, 3.3, 2.8])
    expected = stats.t.interval(0.9, len(data) - 1, loc=data.mean(), scale=stats.sem(data))
    got = mean_interval(data, confidence_level=0.9)
    assert (got.low, got.high) == pytest.approx(expected, rel=1e-12)
    low, high = got  # unpacks like a tuple
    assert low < data.mean() < high


def test_mean_interval_constant_and_single_value() -> None:
    assert tuple(mean_interval([2.0, 2.0, 2.0])) == (2.0, 2.0)
    with pytest.warns(RuntimeWarning, match="at least 2 values"):
        ci = mean_interval([1.0])
    assert math.isnan(ci.low)
    assert math.isnan(ci.high)
    assert not ci.contains(1.0)
