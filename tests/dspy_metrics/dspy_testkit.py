"""Shared pieces for the DSPy adapter tests (imported as ``dspy_testkit``).

Tasks, a small program, a scripted DummyLM.

The program is one ``dspy.Predict`` producing ``ir`` and ``code``; ``DummyLM`` (dict mode,
keyed by substrings of the last message) answers each task prompt, and the optimizers'
instruction proposers by their output field names. Tasks 0, 3, 6, ... get wrong code
(``a - b``) so that scores differ between examples.
"""

from __future__ import annotations

import json
import time
from typing import Any

import dspy

from lift_metrics.dspy_metrics import record_measurement


def make_task(i: int) -> dict[str, Any]:
    name = f"add{i}"
    return {
        "prompt": f"Write function number {i} that adds a and b.",
        "expected_ir": {
            "intent": {"description": f"Add two integers a and b (variant {i})."},
            "signature": {
                "name": name,
                "parameters": [
                    {"name": "a", "type_hint": "int"},
                    {"name": "b", "type_hint": "int"},
                ],
                "return_type": "int",
            },
            "effects": [{"kind": "returns"}],
            "constraints": [{"kind": "pure"}, {"kind": "param_count", "count": 2}],
        },
        "expected_code": f'def {name}(a: int, b: int) -> int:\n    """Add."""\n    return a + b\n',
        "entry_point": name,
        "tests": [
            {"inputs": {"a": 1, "b": 2}, "expected": 3},
            {"inputs": {"a": -1, "b": 1}, "expected": 0},
        ],
    }


def is_good(i: int) -> bool:
    return i % 3 != 0


def make_answer(task: dict[str, Any], good: bool) -> dict[str, str]:
    code = task["expected_code"] if good else task["expected_code"].replace("a + b", "a - b")
    return {"ir": json.dumps(task["expected_ir"]), "code": code}


def make_examples(n: int) -> list[Any]:
    return [dspy.Example(**make_task(i)).with_inputs("prompt") for i in range(n)]


def make_lm(n: int) -> Any:
    from dspy.utils import DummyLM

    answers: dict[str, dict[str, str]] = {
        # instruction proposers of MIPROv2 and COPRO, matched by their output field name
        "proposed_instruction": {
            "proposed_instruction": "Write the IR as JSON, then the Python function.",
            "proposed_prefix_for_output_field": "Code:",
        },
    }
    for i in range(n):
        task = make_task(i)
        answers[task["prompt"]] = make_answer(task, is_good(i))
    return DummyLM(answers)


class Gen(dspy.Signature):  # type: ignore[misc,name-defined]
    """Write the IR and the Python code for the request."""

    prompt: str = dspy.InputField()
    ir: str = dspy.OutputField()
    code: str = dspy.OutputField()


class Program(dspy.Module):  # type: ignore[misc,name-defined]
    def __init__(self) -> None:
        super().__init__()
        self.gen = dspy.Predict(Gen)

    def forward(self, prompt: str) -> Any:
        start = time.perf_counter()
        out = self.gen(prompt=prompt)
        latency_ms = (time.perf_counter() - start) * 1000
        prediction = dspy.Prediction(ir=out.ir, code=out.code)
        record_measurement(prediction, latency_ms=latency_ms, cost_usd=0.001)  # as a runner does
        return prediction
