"""Example builders (HumanEval, MBPP) and sampling a DSPy program for pass@k."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils.dummies import DummyLM

from lift_metrics import TestPassRate
from lift_metrics.scoring import (
    humaneval_examples,
    mbpp_examples,
    sample_program,
    score_program,
)

MBPP_RECORD = {
    "task_id": 2,
    "text": "Write a function to find the shared elements from the given two lists.",
    "code": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
    "test_list": [
        "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
        "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))",
    ],
    "test_setup_code": "",
    "challenge_test_list": [],
}


def test_humaneval_examples_feed_the_metric_objects() -> None:
    examples = humaneval_examples()
    assert len(examples) == 164
    first = examples[0]
    assert first.task_id == "HumanEval/0"
    assert first.entry_point == "has_close_elements"
    assert set(first.inputs().keys()) == {"prompt"}
    metric = TestPassRate()
    body = first.expected_code[len(first.prompt) :]
    assert metric(first, dspy.Prediction(code=body)) == 1.0  # a body completes the prompt
    assert metric(first, dspy.Prediction(code="    return True\n")) < 1.0


def test_mbpp_examples_run_their_assert_lines(tmp_path: Path) -> None:
    path = tmp_path / "mbpp.jsonl"
    path.write_text(json.dumps(MBPP_RECORD) + "\n")
    (example,) = mbpp_examples(path)
    assert example.entry_point == "similar_elements"
    assert example.prompt.startswith("Write a function")
    metric = TestPassRate()
    assert metric(example, dspy.Prediction(code=MBPP_RECORD["code"])) == 1.0
    wrong = "def similar_elements(a, b):\n    return ()\n"
    assert metric(example, dspy.Prediction(code=wrong)) == 0.0


def test_mbpp_examples_name_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "mbpp.jsonl"
    path.write_text(json.dumps(MBPP_RECORD) + "\n" + json.dumps({"text": "x"}) + "\n")
    with pytest.raises(ValueError, match="line 2: an MBPP problem needs 'test_list'"):
        mbpp_examples(path)


def test_each_sample_is_a_fresh_request_past_the_cache() -> None:
    seen: list[tuple[Any, Any]] = []

    def program(prompt: str) -> dspy.Prediction:
        lm = dspy.settings.lm
        seen.append((lm.kwargs.get("rollout_id"), lm.kwargs.get("temperature")))
        return dspy.Prediction(code="def add(a, b):\n    return a + b\n")

    examples = [
        dspy.Example(
            task_id=f"t{i}", prompt="Add.", entry_point="add", tests=[({"a": 1, "b": 1}, 2)]
        ).with_inputs("prompt")
        for i in range(2)
    ]
    samples = sample_program(program, examples, n=3, temperature=0.7, lm=DummyLM([]))
    assert seen == [(0, 0.7), (1, 0.7), (2, 0.7)] * 2
    assert [s["sample_id"] for s in samples] == ["t0#0", "t0#1", "t0#2", "t1#0", "t1#1", "t1#2"]
    with pytest.raises(ValueError, match="temperature must be > 0"):
        sample_program(program, examples, n=1, temperature=0.0, lm=DummyLM([]))


def test_pass_at_k_of_a_program_with_dummy_lm() -> None:
    examples = [e for e in humaneval_examples() if e.task_id in ("HumanEval/0", "HumanEval/4")]
    answers = []
    for example in examples:  # per example: 2 right (one fenced), 1 wrong, 1 unusable
        answers += [
            {"code": example.expected_code},
            {"code": f"Here it is:\n```python\n{example.expected_code}```"},
        ]
        answers += [{"code": "    return None\n"}, {"code": "I cannot help with that."}]
    lm = DummyLM(answers)
    summary = score_program(dspy.Predict("prompt -> code"), examples, n=4, lm=lm, k=[1, 2])
    assert summary.n_samples == 8
    assert summary.pass_at_k["pass@1"] == pytest.approx(0.5)
    assert summary.pass_at_k["pass@2"] == pytest.approx(1 - 1 / 6)  # 1 - C(2,2)/C(4,2)
    assert summary.per_task["HumanEval/4"].passed == 2


def test_a_body_only_answer_is_completed_with_the_prompt() -> None:
    (example,) = [e for e in humaneval_examples() if e.task_id == "HumanEval/4"]
    body = example.expected_code[len(example.prompt) :]
    samples = sample_program(
        lambda prompt: dspy.Prediction(code=body), [example], n=1, lm=DummyLM([])
    )
    assert samples[0]["solution"].startswith(example.prompt)
    summary = score_program(
        lambda prompt: dspy.Prediction(code=body), [example], n=1, lm=DummyLM([])
    )
    assert summary.pass_at_k == {"pass@1": 1.0}


def test_a_program_that_raises_scores_zero_with_its_reason() -> None:
    def broken(prompt: str) -> dspy.Prediction:
        raise RuntimeError("the LM is down")

    example = dspy.Example(task_id="t", prompt="p", tests=[({}, 1)]).with_inputs("prompt")
    (sample,) = sample_program(broken, [example], n=1, lm=DummyLM([]))
    assert sample["solution"] == ""
    assert "the LM is down" in sample["error"]
