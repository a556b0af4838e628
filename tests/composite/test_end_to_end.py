"""latency_penalty and end_to_end: the formula, the weights, and the real code metric."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from hypothesis import given, strategies as st

from lift_metrics.composite import end_to_end, end_to_end_breakdown, latency_penalty

IR_A: dict[str, Any] = {
    "intent": {"description": "Add two integers."},
    "signature": {
        "name": "add",
        "parameters": [{"name": "a", "type_hint": "int"}, {"name": "b", "type_hint": "int"}],
        "return_type": "int",
    },
    "effects": [{"kind": "returns"}],
    "constraints": [{"kind": "pure"}, {"kind": "param_count", "count": 2}],
}
CODE = "def add(a: int, b: int) -> int:\n    return a + b\n"
TESTS = [({"a": 1, "b": 2}, 3), ({"a": -1, "b": 1}, 0)]
NO_INTENT = {"intent": 0, "signature": 0.3, "structure": 0.2, "constraints": 0.2}


# ------------------------------------------------------------------ latency_penalty


def test_latency_penalty_reference_values() -> None:
    assert latency_penalty(0) == 1.0
    assert latency_penalty(16_000) == 1.0  # at the target: no penalty
    # exp(-2 (L/T - 1)) (docs/composite.md): e^-2 at 2x, not 50%
    assert latency_penalty(32_000) == pytest.approx(math.exp(-2))
    assert latency_penalty(32_000) == pytest.approx(0.1353352832)
    assert latency_penalty(24_000) == pytest.approx(math.exp(-1))
    assert latency_penalty(2_000, target_ms=1_000) == pytest.approx(math.exp(-2))
    assert latency_penalty(math.inf) == 0.0


@given(st.floats(0, 1e7), st.floats(0, 1e7))
def test_latency_penalty_is_monotone_and_bounded(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert 0.0 <= latency_penalty(high) <= latency_penalty(low) <= 1.0


@pytest.mark.parametrize(
    ("latency", "target", "error", "message"),
    [
        (-1, 16_000, ValueError, "latency_ms must be >= 0"),
        (math.nan, 16_000, ValueError, "latency_ms must not be NaN"),
        ("fast", 16_000, TypeError, "latency_ms must be a real number"),
        (10, 0, ValueError, "target_ms must be > 0"),
    ],
)
def test_latency_penalty_validates(latency: Any, target: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        latency_penalty(latency, target_ms=target)


# ------------------------------------------- end_to_end with a fake code metric


@dataclasses.dataclass(frozen=True)
class FakeCodeBreakdown:
    score: float
    reasons: tuple[str, ...] = ()


@pytest.fixture
def fake_code(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []

    def fake(predicted: str, expected: str, tests: Any, **kwargs: Any) -> FakeCodeBreakdown:
        calls.append((predicted, expected, tests, kwargs))
        return FakeCodeBreakdown(0.6, ("tests: 1 of 2 failed",))

    import lift_metrics.code as code_module

    monkeypatch.setattr(code_module, "code_quality_breakdown", fake)
    return calls


def _kwargs(**overrides: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "predicted_ir": IR_A,
        "expected_ir": IR_A,
        "predicted_code": CODE,
        "expected_code": CODE,
        "tests": TESTS,
        "latency_ms": 32_000.0,
        "ir_weights": NO_INTENT,
    }
    values.update(overrides)
    return values


def test_end_to_end_is_the_seed_weighted_sum(fake_code: list[tuple[Any, ...]]) -> None:
    result = end_to_end_breakdown(**_kwargs())
    # IR identical (1.0), code 0.6 (fake), latency e^-2 at 2x target
    expected = 0.4 * 1.0 + 0.5 * 0.6 + 0.1 * math.exp(-2)
    assert result.score == pytest.approx(expected)
    assert end_to_end(**_kwargs()) == pytest.approx(expected)
    assert result.components == pytest.approx({"ir": 1.0, "code": 0.6, "latency": math.exp(-2)})
    assert "code/tests: 1 of 2 failed" in result.reasons
    assert any(r.startswith("latency: 32000 ms over the 16000 ms target") for r in result.reasons)
    predicted, expected_code, tests, kwargs = fake_code[0]
    assert (predicted, expected_code, tests) == (CODE, CODE, TESTS)
    assert kwargs["profile"].profile == "validated"
    assert kwargs["sandbox"] is None


def test_end_to_end_without_latency_rescales_ir_and_code(fake_code: Any) -> None:
    result = end_to_end_breakdown(**_kwargs(latency_ms=None))
    assert result.weights == pytest.approx({"ir": 0.4 / 0.9, "code": 0.5 / 0.9})
    assert result.score == pytest.approx((0.4 * 1.0 + 0.5 * 0.6) / 0.9)
    assert "latency" not in result.components


def test_end_to_end_custom_weights_and_validation(fake_code: Any) -> None:
    only_code = {"ir": 0, "code": 1, "latency": 0}
    assert end_to_end(**_kwargs(weights=only_code)) == pytest.approx(0.6)
    with pytest.raises(ValueError, match="weights must have exactly the keys"):
        end_to_end(**_kwargs(weights={"ir": 1}))
    with pytest.raises(ValueError, match="latency_ms must be >= 0"):
        end_to_end(**_kwargs(latency_ms=-5))
    assert len(fake_code) == 1  # only the first call ran the code metric: validation comes first
    with pytest.raises(TypeError):
        end_to_end(IR_A, IR_A, CODE, CODE, TESTS, 0.0)  # type: ignore[misc]


def test_end_to_end_with_the_real_code_metric_and_sandbox() -> None:
    code_module = pytest.importorskip("lift_metrics.code")
    if not hasattr(code_module, "code_quality_breakdown"):
        pytest.skip("lift_metrics.code.code_quality_breakdown is not available yet")
    from lift_metrics.code import code_quality_breakdown

    weights = {"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1}
    broken = "def add(a, b):\n    return abs(a) + b\n"
    result = end_to_end_breakdown(
        **_kwargs(predicted_code=broken, latency_ms=1_000.0, code_weights=weights)
    )
    code = code_quality_breakdown(broken, CODE, TESTS, weights=weights)
    assert result.components["code"] == pytest.approx(code.score)
    assert result.score == pytest.approx(0.4 * 1.0 + 0.5 * code.score + 0.1 * 1.0)
    assert result.code.tests_passed == 1
    assert result.code.tests_total == 2
