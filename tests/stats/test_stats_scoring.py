"""Per-run and cross-tier formulas (docs/statistics.md)."""

from __future__ import annotations

import math

import pytest

from lift_metrics.stats import (
    composite_score,
    cost_delta,
    cost_of_pass,
    cost_usd,
    cost_variance,
    letter_grade,
    pass_rate,
    pass_rate_variance,
    tier_uplift,
)


def test_hand_computed_example_1_single_run_is_grade_b() -> None:
    # hand-computed: passed, weighted_score 0.85, cost 0.50 -> CoP 0.50, composite 0.925, B
    rate = pass_rate(True)
    assert rate == 1.0
    assert cost_of_pass(0.50, rate) == 0.50
    composite = composite_score(rate, 0.85)
    assert composite == pytest.approx(0.925)
    assert letter_grade(composite) == "B"


def test_hand_computed_example_3_cross_tier_uplift_and_variance() -> None:
    # hand-computed: uplifts 0.143 / 0.214 / 0.286 and variance 0.00547
    t0 = 0.70
    uplifts = [tier_uplift(score, t0) for score in (0.80, 0.85, 0.90)]
    assert [round(u, 3) for u in uplifts] == [0.143, 0.214, 0.286]
    assert cost_variance([0.70, 0.80, 0.85, 0.90]) == pytest.approx(0.00546875)
    assert round(pass_rate_variance([0.70, 0.80, 0.85, 0.90]), 5) == 0.00547


@pytest.mark.parametrize(
    ("score", "grade"),
    [(1.0, "A"), (0.95, "A"), (0.9499, "B"), (0.85, "B"), (0.75, "C"), (0.65, "D"), (0.6499, "F")],
)
def test_letter_grade_thresholds_inclusive(score: float, grade: str) -> None:
    assert letter_grade(score) == grade


def test_letter_grade_custom_scale_and_uncovered_score() -> None:
    scale = {"gold": 0.9, "silver": 0.5, "bronze": 0.1}
    assert letter_grade(0.95, scale=scale) == "gold"
    assert letter_grade(0.5, scale=scale) == "silver"
    with pytest.raises(ValueError, match="below the lowest bound"):
        letter_grade(0.05, scale=scale)
    with pytest.raises(ValueError, match="score must not be NaN"):
        letter_grade(float("nan"))


def test_pass_rate_of_sequence_and_bad_flags() -> None:
    assert pass_rate([True, False, False, False]) == 0.25
    with pytest.raises(ValueError, match="passed must not be empty"):
        pass_rate([])
    with pytest.raises(TypeError, match=r"passed\[1\] must be a bool"):
        pass_rate([True, 1])  # type: ignore[list-item]


def test_cost_usd_per_million_prices() -> None:
    # Claude Sonnet 4 prices from lift_metrics.pricing's table: $3 / $15 per 1M tokens
    assert cost_usd(2_000, 500, input_price_per_m=3.0, output_price_per_m=15.0) == pytest.approx(
        0.0135
    )
    with pytest.raises(ValueError, match="input_tokens must be >= 0"):
        cost_usd(-1, 0, input_price_per_m=1.0, output_price_per_m=1.0)
    with pytest.raises(ValueError, match="output_price_per_m must be >= 0"):
        cost_usd(1, 1, input_price_per_m=1.0, output_price_per_m=-2.0)


def test_cost_of_pass_is_inf_when_nothing_passes() -> None:
    assert cost_of_pass(1.25, 0.0) == math.inf
    assert cost_of_pass(1.0, 0.25) == 4.0
    with pytest.raises(ValueError, match="cost_usd must be >= 0"):
        cost_of_pass(-0.1, 0.5)
    with pytest.raises(ValueError, match=r"pass_rate must be in \[0, 1\]"):
        cost_of_pass(0.1, 1.5)


def test_composite_weights() -> None:
    assert composite_score(0.0, 1.0, pass_weight=1.0, impl_weight=3.0) == 0.75
    assert composite_score(0.4, 0.9, pass_weight=2.0, impl_weight=0.0) == 0.4
    with pytest.raises(ValueError, match="must be positive"):
        composite_score(0.5, 0.5, pass_weight=0, impl_weight=0)
    with pytest.raises(ValueError, match="impl_weight must be >= 0"):
        composite_score(0.5, 0.5, impl_weight=-1)


def test_tier_uplift_negative_and_zero_baseline() -> None:
    assert tier_uplift(0.6, 0.8) == pytest.approx(-0.25)
    with pytest.warns(RuntimeWarning, match="baseline_score is 0"):
        assert math.isnan(tier_uplift(0.5, 0.0))


def test_cost_delta_and_variance_errors() -> None:
    assert cost_delta([0.4, 0.1, 0.9]) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="costs_usd must be >= 0"):
        cost_delta([0.1, -0.2])
    with pytest.raises(ValueError, match="costs_usd must not be empty"):
        cost_variance([])
    with pytest.raises(ValueError, match=r"pass_rates must be in \[0, 1\]"):
        pass_rate_variance([0.5, 1.5])
