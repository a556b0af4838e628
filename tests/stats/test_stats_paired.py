"""paired_bootstrap: mean paired delta, percentile interval, sign-flip p-value."""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lift_metrics._io import dumps_json
from lift_metrics.stats._paired import PairedBootstrap, paired_bootstrap


def scores(n: int, *, seed: int, effect: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 1, n)
    return a, np.clip(a + effect + rng.normal(0, 0.2, n), 0, 1)


@pytest.mark.parametrize(("n", "level"), [(12, 0.95), (60, 0.95), (200, 0.9)])
def test_interval_agrees_with_scipy_percentile_bootstrap(n: int, level: float) -> None:
    """Reference: scipy.stats.bootstrap(method="percentile") on the paired differences; two
    independent 20,000-resample estimates of the same quantile differ by Monte-Carlo error
    only (a few percent of the interval width)."""
    from scipy import stats

    a, b = scores(n, seed=n, effect=0.05)
    got = paired_bootstrap(a, b, n_resamples=20_000, confidence_level=level, seed=0)
    ref = stats.bootstrap(
        (a - b,),
        np.mean,
        n_resamples=20_000,
        confidence_level=level,
        method="percentile",
        random_state=np.random.default_rng(9),
        vectorized=True,
    ).confidence_interval
    width = ref.high - ref.low
    assert got.interval.low == pytest.approx(ref.low, abs=0.04 * width)
    assert got.interval.high == pytest.approx(ref.high, abs=0.04 * width)
    assert got.interval.confidence_level == level


def test_p_value_matches_exact_sign_flip_enumeration() -> None:
    """Reference: all 2**10 sign vectors enumerated with itertools.product."""
    deltas = np.array([1.5, -0.5, 2.0, 0.7, 1.1, -0.2, 0.9, 1.3, 0.4, -1.0])
    a = np.full(deltas.size, 3.0)
    signs = np.array(list(itertools.product((-1, 1), repeat=deltas.size)))
    exact = float(np.mean(np.abs((signs * deltas).mean(axis=1)) >= abs(deltas.mean()) - 1e-12))
    result = paired_bootstrap(a + deltas, a, n_resamples=40_000, seed=3)
    assert result.p_value == pytest.approx(exact, abs=0.01)


def test_same_resampling_as_paired_comparison() -> None:
    """One implementation: the interval equals paired_comparison's for the same deltas/seed."""
    from lift_metrics.stats import paired_comparison

    a, b = scores(30, seed=4, effect=0.1)

    def runs(arm: str, durations: np.ndarray) -> list[dict[str, Any]]:
        return [
            {
                "task_id": f"t{i:02d}",
                "arm": arm,
                "repeat": 0,
                "success": True,
                "duration_seconds": float(x),
                "total_cost_usd": 0.0,
                "input_tokens": 1,
                "output_tokens": 1,
                "cache_read_tokens": 0,
                "cache_write_tokens": 0,
            }
            for i, x in enumerate(durations)
        ]

    ab = paired_comparison(runs("new", b), runs("old", a), n_resamples=1000, seed=2)
    mine = paired_bootstrap(b, a, n_resamples=1000, seed=2)
    other = ab.deltas["duration_delta_seconds"]
    assert mine.mean_delta == pytest.approx(other.mean)
    # paired_comparison resamples five deltas at once with the same row draws
    assert mine.interval.low == pytest.approx(other.interval.low, rel=1e-9)
    assert mine.interval.high == pytest.approx(other.interval.high, rel=1e-9)


def test_direction_is_a_minus_b_as_scipy_ttest_rel_and_swapping_negates() -> None:
    """One sign for every paired statistic: a - b, as scipy.stats.ttest_rel(a, b) and
    paired_comparison(a, b)."""
    from scipy import stats

    b, a = scores(25, seed=1, effect=0.3)  # a is the higher one
    up = paired_bootstrap(a, b, seed=5)
    down = paired_bootstrap(b, a, seed=5)
    assert up.mean_delta == pytest.approx(float(np.mean(a - b)))
    assert np.sign(up.mean_delta) == np.sign(stats.ttest_rel(a, b).statistic) == 1.0
    assert up.mean_a == pytest.approx(float(a.mean()))
    assert up.mean_b == pytest.approx(b.mean())
    assert up.verdict == "a higher"
    assert down.verdict == "a lower"
    assert down.interval.low == pytest.approx(-up.interval.high)
    assert down.interval.high == pytest.approx(-up.interval.low)
    assert up.p_value == pytest.approx(down.p_value)


def test_no_effect_is_inconclusive_with_a_large_p_value() -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, 40)
    b = a.copy()
    b[::2] += 0.1  # half the pairs up, half down by the same amount: zero mean difference
    b[1::2] -= 0.1
    result = paired_bootstrap(a, b, seed=0)
    assert result.mean_delta == pytest.approx(0.0, abs=1e-12)
    assert result.verdict == "inconclusive"
    assert result.p_value > 0.5


def test_constant_differences_give_a_zero_width_interval() -> None:
    same = paired_bootstrap([0.1, 0.5, 0.9], [0.1, 0.5, 0.9])
    assert tuple(same.interval) == (0.0, 0.0)
    assert same.p_value == 1.0
    assert same.verdict == "no difference"
    shifted = paired_bootstrap([0.3, 0.7, 1.1, 0.5], [0.1, 0.5, 0.9, 0.3])
    assert shifted.interval.low == pytest.approx(0.2) == shifted.interval.high
    # 16 sign vectors, 2 reach |mean| = 0.2: p ~= 2/16 (Monte-Carlo, 10,000 flips)
    assert shifted.p_value == pytest.approx(2 / 16, abs=0.02)
    single = paired_bootstrap([0.75], [0.25])
    assert tuple(single.interval) == (0.5, 0.5)
    assert single.n_pairs == 1


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1), st.floats(0, 1)),
        min_size=2,
        max_size=40,
    ),
    st.integers(0, 2**31),
)
def test_interval_holds_the_bootstrap_range_and_p_is_a_probability(
    pairs: list[tuple[float, float]], seed: int
) -> None:
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    result = paired_bootstrap(a, b, n_resamples=200, seed=seed)
    d = a - b
    assert d.min() - 1e-12 <= result.interval.low <= result.interval.high <= d.max() + 1e-12
    assert 0.0 < result.p_value <= 1.0
    assert result.mean_delta == pytest.approx(float(d.mean()))


def test_a_fixed_seed_is_reproducible_and_none_is_fresh() -> None:
    a, b = scores(20, seed=2, effect=0.05)
    assert paired_bootstrap(a, b, seed=11) == paired_bootstrap(a, b, seed=11)
    assert paired_bootstrap(a, b, seed=None).seed is None


def test_result_unpacks_reprs_and_serializes() -> None:
    result = paired_bootstrap([0.5, 0.5, 1.0], [0.0, 0.5, 1.0], n_resamples=100, seed=0)
    delta, interval, p = result
    assert delta == pytest.approx(1 / 6)
    assert interval is result.interval
    assert p == result.p_value
    assert repr(result).startswith("PairedBootstrap(mean_delta=0.1667")
    data = json.loads(dumps_json(result.to_dict()))
    assert data["n_pairs"] == 3
    assert data["n_resamples"] == 100
    assert data["method"] == "percentile"
    assert isinstance(result, PairedBootstrap)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (([1.0, 2.0], [1.0]), {}, ValueError, "same length"),
        (([], []), {}, ValueError, "a"),
        (([1.0, float("nan")], [1.0, 2.0]), {}, ValueError, "a"),
        (([1.0], [float("inf")]), {}, ValueError, "b"),
        ((["x"], [1.0]), {}, TypeError, "a must"),
        (("ab", [1.0]), {}, TypeError, "a must"),
        (([1.0], [1.0]), {"n_resamples": 99}, ValueError, "n_resamples must be >= 100"),
        (([1.0], [1.0]), {"n_resamples": 1e4}, TypeError, "n_resamples must be an integer"),
        (([1.0], [1.0]), {"confidence_level": 1.0}, ValueError, "confidence_level"),
        (([1.0], [1.0]), {"seed": -1}, ValueError, "seed must be >= 0"),
    ],
)
def test_invalid_arguments_name_the_parameter(
    args: tuple[Any, Any], kwargs: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        paired_bootstrap(*args, **kwargs)


def test_resamples_and_huge_numbers_are_bounded_with_named_errors() -> None:
    from lift_metrics.stats import compare_reports, paired_bootstrap

    with pytest.raises(ValueError, match=r"n_resamples must be <= 1,000,000, got 1,000,000,0"):
        paired_bootstrap([0.1, 0.5, 0.7], [0.2, 0.4, 0.9], n_resamples=10**12)
    with pytest.raises(ValueError, match=r"baseline\['a'\] must be finite, got an integer too"):
        compare_reports({"a": 10**400}, {"a": 0.5})
