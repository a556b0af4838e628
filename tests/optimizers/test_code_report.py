"""The code figures of a run: the tests metric, degenerate outputs, files, predictors."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import dspy
import pytest
from dspy.utils import DummyLM

from lift_metrics.optimizers._code_report import (
    PassRateMetric,
    code_summary,
    degenerate_kind,
    predictor_summary,
    save_generated_code,
)
from lift_metrics.optimizers._evaluate import evaluate_program
from lift_metrics.optimizers._pipeline import LiftPipeline
from lift_metrics.optimizers._setup import _candidate_instructions_mipro
from lift_metrics.optimizers._signatures import CANDIDATE_INSTRUCTIONS

ADD_TESTS = [({"a": 1, "b": 2}, 3), ({"a": -1, "b": 1}, 0)]
ADD = "def add(a, b):\n    return a + b\n"
BODY = "    return a + b"


def example(task_id: str = "t1", tests: list | None = None) -> dspy.Example:
    return dspy.Example(
        prompt="p", task_id=task_id, entry_point="add", tests=tests or ADD_TESTS
    ).with_inputs("prompt")


@pytest.mark.parametrize(
    ("code", "share", "solved"),
    [
        (ADD, 1.0, 1.0),
        ("def add(a, b):\n    return 3\n", 0.5, 0.0),
        ("def add(a, b) return", 0.0, 0.0),  # does not parse
        ("", 0.0, 0.0),
        (None, 0.0, 0.0),
    ],
)
def test_tests_metric_runs_the_tests_in_the_sandbox(code: str | None, share: float, solved: float):
    prediction = SimpleNamespace(code=code)
    assert PassRateMetric()(example(), prediction) == share
    assert PassRateMetric(all_or_nothing=True)(example(), prediction) == solved
    assert PassRateMetric()(example(), prediction, trace=[]) is (share > 0)


def test_tests_metric_validates_its_option() -> None:
    with pytest.raises(TypeError, match="all_or_nothing must be True or False"):
        PassRateMetric(all_or_nothing=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("outputs", "kind"),
    [
        ({"code": "", "body": ""}, "empty"),
        ({"code": None}, "empty"),
        ({"code": "", "body": "{body}"}, "placeholder"),
        ({"code": "{code}"}, "placeholder"),
        ({"code": "def other():\n    return 1\n"}, "no_function"),
        ({"code": "def add(a, b) return"}, "no_function"),
        ({"code": ADD}, None),
    ],
)
def test_degenerate_kinds(outputs: dict, kind: str | None) -> None:
    assert degenerate_kind(outputs, "add") == kind


def test_code_summary_and_files(tmp_path: Path) -> None:
    answers = {"t1": ADD, "t2": "{code}", "t3": "def add(a, b):\n    return 0\n"}

    def program(prompt: str, task: str) -> dspy.Prediction:
        return dspy.Prediction(code=answers[task])

    examples = [
        dspy.Example(prompt="p", task=t, task_id=t, entry_point="add", tests=ADD_TESTS).with_inputs(
            "prompt", "task"
        )
        for t in answers
    ]
    metrics = {
        "tests_passed": PassRateMetric(),
        "tasks_solved": PassRateMetric(all_or_nothing=True),
    }
    evaluation = evaluate_program(program, examples, metrics=metrics)
    summary = code_summary(evaluation, examples)
    assert summary["n_tasks"] == 3
    assert summary["tasks_solved"] == 1.0
    assert summary["solved_share"] == pytest.approx(1 / 3)
    assert summary["mean_tests_passed"] == pytest.approx((1.0 + 0.0 + 0.5) / 3)  # t3 passes 1/2
    assert summary["degenerate"] == {"empty": 0, "placeholder": 1, "no_function": 0}
    assert summary["degenerate_tasks"]["placeholder"] == ["t2"]
    paths = save_generated_code(evaluation, tmp_path / "code")
    assert sorted(p.name for p in paths) == ["t1.py", "t2.py", "t3.py"]
    assert (tmp_path / "code" / "t1.py").read_text() == ADD
    assert not [p for p in (tmp_path / "code").iterdir() if p.name.startswith(".")]


def test_predictor_summary_lists_instructions_and_demos() -> None:
    program = LiftPipeline()
    program.to_code.demos = [
        dspy.Example(
            task_id="t001", prompt="Add.", header="def add(a, b):", body="    return a + b"
        )
    ]
    summary = predictor_summary(program)
    assert set(summary) == {"to_ir", "to_code"}
    assert summary["to_code"]["demos"] == [
        {
            "task_id": "t001",
            "prompt": "Add.",
            "header": "def add(a, b):",
            "body": "    return a + b",
        }
    ]
    assert summary["to_ir"]["demos"] == []


def test_candidate_instructions_replace_the_proposer() -> None:
    cls = _candidate_instructions_mipro()
    lm = DummyLM([])  # never called: no instruction is proposed
    optimizer = cls(
        metric=lambda e, p, t=None: 1.0, auto=None, num_candidates=2, prompt_model=lm, task_model=lm
    )
    program = LiftPipeline()
    out = optimizer._propose_instructions(
        program, [], None, 10, True, True, True, True, num_instruct_candidates=2
    )
    assert out[0][0] == program.to_ir.signature.instructions  # the own instruction first
    assert out[0][1] == CANDIDATE_INSTRUCTIONS["to_ir"][1]
    assert out[1][1] == CANDIDATE_INSTRUCTIONS["to_code"][1]
    assert all(len(candidates) == 2 for candidates in out.values())
