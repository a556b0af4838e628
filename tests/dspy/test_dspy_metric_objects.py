"""What DSPy users expect of the metric objects: a program without an IR, every weight of
the pure functions, example ids in breakdowns and history."""

from __future__ import annotations

import json
from typing import Any

import dspy
import pytest
from dspy_testkit import make_task

from lift_metrics.aggregate import aggregate_metric
from lift_metrics.dspy_metrics import Aggregate, CodeQuality, EndToEnd
from lift_metrics.end_to_end import latency_penalty

STRUCTURAL = {"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1, "structural": 0.3}
NO_IR = {"ir": 0, "code": 0.8, "latency": 0.2}


def _single_step_example(i: int) -> Any:
    """A code-only task: no ``expected_ir`` field at all."""
    task = make_task(i)
    del task["expected_ir"]
    return dspy.Example(**task).with_inputs("prompt")


def _code_only(code: str, **fields: Any) -> Any:
    return dspy.Prediction(code=code, latency_ms=4_000.0, cost_usd=0.01, **fields)


@pytest.mark.parametrize("cls", [EndToEnd, Aggregate])
def test_an_ir_weight_of_zero_needs_no_ir_anywhere(cls: type) -> None:
    example = _single_step_example(2)
    wrong = example.expected_code.replace("a + b", "a - b")
    metric = cls(weights=NO_IR, code_profile="seed", code_weights=STRUCTURAL)
    assert metric.scores_ir is False
    code = CodeQuality(profile="seed", weights=STRUCTURAL)
    for answer in (example.expected_code, wrong):
        breakdown = metric.breakdown(example, _code_only(answer))
        assert breakdown.ir is None
        assert "ir" not in breakdown.components and "ir" not in breakdown.end_to_end.components
        assert not any(reason.startswith("ir") for reason in breakdown.reasons)
        code_score = code(example, _code_only(answer))
        e2e = 0.8 * code_score + 0.2 * latency_penalty(4_000.0)
        assert breakdown.end_to_end.score == pytest.approx(e2e)
        if cls is Aggregate:  # quality: the mean of code and end-to-end, not a third of 0
            expected = aggregate_metric(None, code_score, e2e, 0.01, 4_000.0)
            assert breakdown.components["quality"] == pytest.approx((code_score + e2e) / 2)
        else:
            expected = e2e
        assert metric(example, _code_only(answer)) == pytest.approx(expected)
    assert metric(example, _code_only(example.expected_code)) > metric(example, _code_only(wrong))
    # the IR field of a prediction is not read either: a broken one changes nothing
    broken = _code_only(example.expected_code, ir="not json")
    assert metric(example, broken) == metric(example, _code_only(example.expected_code))


def test_with_an_ir_weight_the_expected_ir_is_still_required() -> None:
    with pytest.raises(ValueError, match="expected_ir"):
        EndToEnd(code_profile="seed", code_weights=STRUCTURAL)(
            _single_step_example(1), _code_only("def add1(a, b):\n    return a + b\n")
        )


def test_aggregate_without_ir_has_its_own_default_threshold() -> None:
    # code failing every test: code <= 1 - 0.4 = 0.6 (seed weights, structural), e2e 0.8 *
    # 0.6 + 0.2 = 0.68, quality (0.6 + 0.68) / 2 = 0.64, aggregate 0.7 * 0.64 + 0.3 = 0.748
    metric = Aggregate(weights=NO_IR, code_profile="seed", code_weights=STRUCTURAL)
    assert metric.threshold == pytest.approx(0.798)


def test_the_ir_part_is_still_scored_by_default() -> None:
    task = make_task(1)
    example = dspy.Example(**task).with_inputs("prompt")
    prediction = _code_only(task["expected_code"], ir=json.dumps(task["expected_ir"]))
    metric = EndToEnd(
        ir_weights={"intent": 0, "signature": 1, "structure": 1, "constraints": 1},
        code_profile="seed",
        code_weights=STRUCTURAL,
    )
    assert metric.scores_ir is True
    assert metric.breakdown(example, prediction).components["ir"] == 1.0
