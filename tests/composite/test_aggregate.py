"""aggregate_metric: the normalisation (docs/composite.md) of quality, cost and latency."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, strategies as st

from lift_metrics.composite import aggregate_breakdown, aggregate_metric

unit = st.floats(0, 1)


def seed_reference(ir: float, code: float, e2e: float, cost: float, latency_ms: float) -> float:
    """The formula of docs/composite.md, written out independently (default weights)."""
    quality = (ir + code + e2e) / 3
    cost_normalized = 1.0 - min(cost / 0.10, 1.0)
    latency_normalized = 1.0 - min(latency_ms / 60000, 1.0)
    return 0.7 * quality + 0.2 * cost_normalized + 0.1 * latency_normalized


@given(unit, unit, unit, st.floats(0, 1), st.floats(0, 200_000))
def test_matches_the_seed_code(ir: float, code: float, e2e: float, cost: float, lat: float) -> None:
    assert aggregate_metric(ir, code, e2e, cost, lat) == pytest.approx(
        seed_reference(ir, code, e2e, cost, lat)
    )


def test_hand_computed_values() -> None:
    # quality 0.7, cost 0.05 -> 0.5, latency 30 s -> 0.5: 0.49 + 0.1 + 0.05
    assert aggregate_metric(0.9, 0.6, 0.6, 0.05, 30_000) == pytest.approx(0.64)
    assert aggregate_metric(1, 1, 1, 0, 0) == pytest.approx(1.0)
    # at or beyond the ceilings cost and latency score 0
    assert aggregate_metric(1, 1, 1, 0.5, 120_000) == pytest.approx(0.7)
    assert aggregate_metric(1, 1, 1, math.inf, math.inf) == pytest.approx(0.7)


def test_without_an_ir_score_quality_is_the_mean_of_code_and_end_to_end() -> None:
    # quality (0.6 + 0.5) / 2 = 0.55, cost 0.05 -> 0.5, latency 30 s -> 0.5: 0.385 + 0.15
    assert aggregate_metric(None, 0.6, 0.5, 0.05, 30_000) == pytest.approx(0.535)
    with pytest.raises(TypeError, match="code_score"):
        aggregate_metric(None, None, 0.5, 0.05, 30_000)  # type: ignore[arg-type]


@given(unit, unit, unit, st.floats(0, 1), st.floats(0, 200_000))
def test_gated_cost_and_latency_count_in_proportion_to_the_code_score(
    ir: float, code: float, e2e: float, cost: float, lat: float
) -> None:
    quality = (ir + code + e2e) / 3
    efficiency = aggregate_metric(ir, code, e2e, cost, lat) - 0.7 * quality
    gated = aggregate_breakdown(ir, code, e2e, cost, lat, gated=True)
    assert gated.score == pytest.approx(0.7 * quality + code * efficiency, abs=1e-12)
    assert gated.gate == code
    assert aggregate_breakdown(ir, code, e2e, cost, lat).gate == 1.0


def test_the_gate_keeps_free_instant_failing_code_below_correct_code_at_the_ceilings() -> None:
    # failing every test (code score 0.2), perfect IR, e2e 0.6, free and instant, against
    # correct code (e2e 0.9) at $0.10 and 60 s
    failing, correct = (1.0, 0.2, 0.6, 0.0, 0.0), (1.0, 1.0, 0.9, 0.10, 60_000)
    assert aggregate_metric(*failing) == pytest.approx(0.72)  # the sum pays for speed alone
    assert aggregate_metric(*correct) == pytest.approx(0.7 * 2.9 / 3)
    assert aggregate_metric(*failing) > aggregate_metric(*correct)
    assert aggregate_metric(*failing, gated=True) == pytest.approx(0.42 + 0.2 * 0.3)
    assert aggregate_metric(*failing, gated=True) < aggregate_metric(*correct, gated=True)


def test_weights_and_ceilings_are_configurable() -> None:
    only_cost = {"quality": 0, "cost": 1, "latency": 0}
    assert aggregate_metric(0, 0, 0, 0.25, 0, weights=only_cost, cost_ceiling_usd=1.0) == 0.75
    b = aggregate_breakdown(0.3, 0.6, 0.9, 0.02, 6_000, latency_ceiling_ms=12_000)
    assert b.components == pytest.approx({"quality": 0.6, "cost": 0.8, "latency": 0.5})
    assert b.weights == pytest.approx({"quality": 0.7, "cost": 0.2, "latency": 0.1})
    assert b.to_dict()["score"] == b.score


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((1.2, 1, 1, 0, 0), {}, "ir_score must be in \\[0, 1\\]"),
        ((1, 1, -0.1, 0, 0), {}, "e2e_score must be in \\[0, 1\\]"),
        ((1, 1, 1, -1, 0), {}, "cost_usd must be >= 0"),
        ((1, 1, 1, math.nan, 0), {}, "cost_usd must not be NaN"),
        ((1, 1, 1, 0, -1), {}, "latency_ms must be >= 0"),
        ((1, 1, 1, 0, 0), {"weights": {"quality": 1}}, "weights must have exactly the keys"),
        ((1, 1, 1, 0, 0), {"cost_ceiling_usd": 0}, "cost_ceiling_usd must be > 0"),
    ],
)
def test_validation_names_the_parameter(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        aggregate_metric(*args, **kwargs)


def test_gated_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="gated must be True or False, got 1"):
        aggregate_metric(1, 1, 1, 0, 0, gated=1)  # type: ignore[arg-type]
