"""Route cost, route quality and route migration (docs/composite.md)."""

from __future__ import annotations

from typing import Any

import pytest

from lift_metrics.composite import (
    ProviderRoute,
    RouteSuggestion,
    route_cost,
    route_quality,
    suggest_route_migration,
)

BEST, MODAL = ProviderRoute.BEST_AVAILABLE, ProviderRoute.MODAL_INFERENCE


def test_route_cost_seed_prices() -> None:
    # seed: (3 + 15) / 2 per million tokens, 50/50 split
    assert route_cost(BEST, 1_000_000, 0) == pytest.approx(9.0)
    assert route_cost("best_available", 2_000, 99_999) == pytest.approx(0.018)  # duration unused
    # seed GPU prices per second: L40S 0.001, A100 0.002, H100 0.003
    assert route_cost(MODAL, 0, 10_000) == pytest.approx(0.01)
    assert route_cost(MODAL, 10**9, 10_000, gpu_type="A100") == pytest.approx(0.02)  # tokens unused
    assert route_cost(MODAL, 0, 10_000, gpu_type="H100") == pytest.approx(0.03)


def test_route_cost_configurable_prices() -> None:
    assert route_cost(
        BEST, 1_000_000, 0, input_price_per_m=1, output_price_per_m=3, input_share=0.75
    ) == (pytest.approx(1.5))
    assert route_cost(MODAL, 0, 1_000, gpu_type="T4", gpu_prices_per_second={"T4": 0.0002}) == (
        pytest.approx(0.0002)
    )


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (("taxi", 1, 1), {}, ValueError,
         "route must be one of \\('best_available', 'modal_inference'\\)"),
        ((MODAL, 0, 1), {"gpu_type": "TPU"}, ValueError,
         "gpu_type must be one of \\['A100', 'H100', 'L40S'\\]"),
        ((BEST, -1, 0), {}, ValueError, "tokens must be >= 0"),
        ((BEST, 1.5, 0), {}, TypeError, "tokens must be an integer"),
        ((MODAL, 0, -1), {}, ValueError, "duration_ms must be >= 0"),
        ((BEST, 1, 0), {"input_share": 2}, ValueError, "input_share must be in \\[0, 1\\]"),
    ],
)  # fmt: skip
def test_route_cost_validation(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        route_cost(*args, **kwargs)


METRICS = {"ir_quality": 0.8, "code_quality": 0.6, "test_pass_rate": 0.5}


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("reasoning", 0.5 * 0.8 + 0.3 * 0.6 + 0.2 * 0.5),
        ("constrained_gen", 0.3 * 0.8 + 0.2 * 0.6 + 0.5 * 0.5),
        ("classification", 0.4 * 0.8 + 0.4 * 0.6 + 0.2 * 0.5),
        ("summarization", 0.4 * 0.8 + 0.4 * 0.6 + 0.2 * 0.5),  # unknown task: the default weights
    ],
)
def test_route_quality_task_weights(task: str, expected: float) -> None:
    assert route_quality(BEST, task, METRICS) == pytest.approx(expected)


def test_route_quality_custom_table_and_validation() -> None:
    table = {"reasoning": {"ir_quality": 1, "code_quality": 0, "test_pass_rate": 0}}
    assert route_quality(MODAL, "reasoning", METRICS, task_weights=table) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="metrics must have exactly the keys"):
        route_quality(
            BEST, "reasoning", {"ir_quality": 1.0}
        )  # missing metrics are refused, not counted as 0
    with pytest.raises(ValueError, match="metrics\\['code_quality'\\] must be in \\[0, 1\\]"):
        route_quality(BEST, "reasoning", {**METRICS, "code_quality": 7})
    with pytest.raises(ValueError, match="route must be one of"):
        route_quality("cloud", "reasoning", METRICS)


def observed(**overrides: Any) -> dict[str, Any]:
    return {"quality": 0.9, "cost_usd": 0.01, "latency_ms": 5_000, **overrides}


@pytest.mark.parametrize(
    ("current", "metrics", "route", "rule"),
    [
        (MODAL, observed(quality=0.5), BEST, 1),
        (MODAL, observed(latency_ms=31_000), BEST, 3),
        (MODAL, observed(quality=0.5, latency_ms=31_000), BEST, 1),  # rule 1 before rule 3
        (BEST, observed(cost_usd=0.06), MODAL, 2),
        (BEST, observed(cost_usd=0.06, requires_schema=True), MODAL, 4),
        (MODAL, observed(quality=0.1, requires_schema=True), None, 4),  # rule 4 first: stay
        (BEST, observed(quality=0.1, latency_ms=99_000), None, None),  # rules 1/3 are Modal-only
        (MODAL, observed(cost_usd=9.0), None, None),  # rule 2 is best-available-only
        (MODAL, observed(quality=0.6, latency_ms=30_000), None, None),  # strict comparisons
        (BEST, observed(cost_usd=0.05), None, None),
    ],
)
def test_migration_rules_in_the_seeds_order(
    current: ProviderRoute, metrics: dict[str, Any], route: ProviderRoute | None, rule: int | None
) -> None:
    suggestion = suggest_route_migration(current, metrics)
    assert isinstance(suggestion, RouteSuggestion)
    assert (suggestion.route, suggestion.rule) == (route, rule)
    assert suggestion.migrate is (route is not None)
    assert suggestion.reason


def test_migration_reason_states_value_and_threshold() -> None:
    s = suggest_route_migration("modal_inference", observed(quality=0.42), quality_floor=0.5)
    assert (
        s.reason == "quality 0.420 is below 0.500 on modal_inference: try the stronger API models"
    )


@pytest.mark.parametrize(
    ("metrics", "error", "message"),
    [
        ({"quality": 0.9, "cost_usd": 0.01}, ValueError, "task_metrics must have the keys"),
        ({**observed(), "cost": 1.0}, ValueError, "task_metrics must have the keys"),
        (observed(quality=1.5), ValueError, "task_metrics\\['quality'\\] must be in \\[0, 1\\]"),
        (observed(requires_schema="yes"), TypeError, "requires_schema'\\] must be a bool"),
    ],
)
def test_migration_validation(metrics: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        suggest_route_migration(BEST, metrics)
