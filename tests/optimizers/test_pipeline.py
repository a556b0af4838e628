"""The reference pipeline with DSPy's DummyLM answering through the JSON adapter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils import DummyLM

from lift_metrics.ir import IR
from lift_metrics.optimizers._budget import Budget, BudgetExceeded, UsageMeter, budget_callback
from lift_metrics.optimizers._pipeline import LiftPipeline, strip_code_fences
from lift_metrics.optimizers._runner import save_program

# the expected IR of task t001 in datasets/tasks/tasks.jsonl
ADD_IR: dict[str, Any] = {
    "intent": {"description": "Add two integers and return their sum."},
    "signature": {
        "name": "add",
        "parameters": [{"name": "a", "type_hint": "int"}, {"name": "b", "type_hint": "int"}],
        "return_type": "int",
    },
    "effects": [{"kind": "returns", "description": "the sum a + b"}],
    "constraints": [{"kind": "pure"}],
}
ADD_CODE = "def add(a: int, b: int) -> int:\n    return a + b"


def json_lm(ir: Any, code: Any) -> DummyLM:
    """A DummyLM answering each step by the output field its prompt asks for."""
    answers = {"order of fields: `ir`": {"ir": ir}, "order of fields: `code`": {"code": code}}
    return DummyLM(answers, adapter=dspy.JSONAdapter())


def run(lm: Any, prompt: str = "Write add(a, b).") -> dspy.Prediction:
    with dspy.context(lm=lm):
        return LiftPipeline()(prompt=prompt)


def test_good_answers_give_an_ir_and_code() -> None:
    out = run(json_lm(ADD_IR, f"```python\n{ADD_CODE}\n```"))
    assert isinstance(out.ir, IR)
    assert out.ir == IR.model_validate(ADD_IR)
    assert out.code == ADD_CODE  # Markdown fence removed
    assert out.ir_error is None and out.code_error is None
    assert json.loads(out.ir_json)["signature"]["name"] == "add"


def test_prediction_records_latency_and_usage() -> None:
    out = run(json_lm(ADD_IR, ADD_CODE))
    assert out.latency_ms > 0
    assert out.lm_calls == 2  # one call per step; DummyLM is never cached
    assert out.total_tokens == 0 and out.cost_usd == 0.0  # DummyLM reports zero tokens


def test_bad_ir_answer_is_kept_as_an_error_not_raised() -> None:
    out = run(json_lm("this is not an IR", ADD_CODE))
    assert out.ir is None
    assert out.ir_error and "\n" not in out.ir_error
    assert out.code == ADD_CODE  # the second step still runs


def test_ir_that_misses_required_fields_is_an_error() -> None:
    broken = {"intent": {"description": "x"}}  # no signature
    out = run(json_lm(broken, "def f(): pass"))
    assert out.ir is None and out.ir_error


def test_nothing_parsable_gives_empty_code() -> None:
    out = run(DummyLM([{"wrong": "x"}] * 4, adapter=dspy.JSONAdapter()))
    assert out.ir is None and out.code == "" and out.code_error


def test_end_to_end_metric_scores_the_prediction() -> None:
    from lift_metrics.dspy_metrics import IRQuality

    out = run(json_lm(ADD_IR, ADD_CODE))
    example = dspy.Example(prompt="p", expected_ir=ADD_IR).with_inputs("prompt")
    assert IRQuality()(example, out) == pytest.approx(1.0)


def test_save_and_load_round_trip_in_dspys_format(tmp_path: Path) -> None:
    program = LiftPipeline()
    program.to_ir.signature = program.to_ir.signature.with_instructions("Describe it as an IR.")
    program.to_code.demos = [
        dspy.Example(prompt="p", ir="{}", code="def f():\n    return 1").with_inputs("prompt", "ir")
    ]
    path = save_program(program, tmp_path / "program.json")
    state = json.loads(path.read_text())
    assert set(state) >= {"to_ir.predict", "to_code.predict"} or set(state) >= {"to_ir", "to_code"}
    loaded = LiftPipeline()
    loaded.load(str(path))
    assert loaded.to_ir.signature.instructions == "Describe it as an IR."
    assert loaded.to_code.demos[0]["code"] == "def f():\n    return 1"
    assert [p.name for p in tmp_path.iterdir()] == ["program.json"]  # no temp file left


def test_budget_exceeded_cuts_through_the_pipeline() -> None:
    meter = UsageMeter(Budget(max_lm_calls=1))
    lm = json_lm(ADD_IR, ADD_CODE)
    with (
        dspy.context(lm=lm, usage_tracker=meter, callbacks=[budget_callback(meter)]),
        pytest.raises(BudgetExceeded, match="1 LM calls"),
    ):
        LiftPipeline()(prompt="p")
    assert meter.totals().lm_calls == 1  # the second call was refused before it ran


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("```py\nx = 1\n```", "x = 1"),
        ("Here:\n```python\ndef f():\n    pass\n```\nDone", "def f():\n    pass"),
        ("```\nprint(1)", "print(1)"),  # unterminated fence
        ("def g():\n    return 2\n", "def g():\n    return 2"),
    ],
)
def test_strip_code_fences(text: str, expected: str) -> None:
    assert strip_code_fences(text) == expected
