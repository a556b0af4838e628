"""Choosing among sampled code answers without tests, and the pipeline's ``code_samples``."""

from __future__ import annotations

from typing import Any

import dspy
import pytest
from dspy.utils import DummyLM
from optimizers_testkit import AnswerFormat

from lift_metrics.code import extract_code
from lift_metrics.errors import InputValueError
from lift_metrics.optimizers._functions import assemble_function
from lift_metrics.optimizers._pipeline import LiftPipeline
from lift_metrics.optimizers._select import PROBE_VALUES, choose_code, probe_inputs

HEADER = "def add(a: int, b: int):"
RIGHT = "def add(a: int, b: int):\n    return a + b\n"
RIGHT_TOO = "def add(a: int, b: int):\n    return b + a\n"
WRONG = "def add(a: int, b: int):\n    return a - b\n"
CRASH = "def add(a: int, b: int):\n    return a / 0\n"
LOOP = "def add(a: int, b: int):\n    while True:\n        pass\n"


def fake_runner(code: str, name: str, probes: list[dict[str, Any]]) -> list[str | None]:
    """Evaluate the answers above without a sandbox (only the test's own strings)."""
    if code in (CRASH, LOOP):
        return [None] * len(probes)
    sign = -1 if code == WRONG else 1
    return ["=" + repr(p["a"] + sign * p["b"]) for p in probes]


def test_probe_inputs_vary_each_parameter_over_its_hint_values() -> None:
    probes = probe_inputs("def f(n: int, words: list[str], flag: bool):", 6)
    assert probes is not None
    assert len(probes) == 6
    assert {p["n"] for p in probes} == set(PROBE_VALUES["int"])
    assert all(p["words"] in PROBE_VALUES["list[str]"] for p in probes)
    assert {p["flag"] for p in probes} == {True, False}
    assert probes == probe_inputs("def f(n: int, words: list[str], flag: bool):", 6)


@pytest.mark.parametrize(
    "header",
    ["def f(x):", "def f(x: Decimal):", "def f(*args: int):", "def f(x: int", "x = 1"],
)
def test_no_probes_without_a_known_hint_for_every_parameter(header: str) -> None:
    assert probe_inputs(header) is None


def test_a_function_without_parameters_gets_one_empty_probe() -> None:
    assert probe_inputs("def answer():") == [{}]


def test_the_answer_most_others_agree_with_is_chosen() -> None:
    choice = choose_code(HEADER, [WRONG, RIGHT, RIGHT_TOO], entry_point="add", run=fake_runner)
    assert choice.index == 1
    assert choice.code == RIGHT
    assert "3 of 3 answers are code" in choice.reason


def test_crashes_never_count_as_agreement_and_rank_last() -> None:
    choice = choose_code(HEADER, [CRASH, LOOP, WRONG], entry_point="add", run=fake_runner)
    assert choice.index == 2  # the only answer that returns values


def test_ties_go_to_the_first_answer() -> None:
    choice = choose_code(HEADER, [WRONG, RIGHT], entry_point="add", run=fake_runner)
    assert choice.index == 0


def test_non_code_answers_are_dropped_before_running() -> None:
    ran: list[str] = []

    def runner(code: str, name: str, probes: list[dict[str, Any]]) -> list[str | None]:
        ran.append(code)
        return fake_runner(code, name, probes)

    candidates = ["", "{code}", "def add(a, b) return", "This adds the numbers.", WRONG]
    choice = choose_code(HEADER, candidates, entry_point="add", run=runner)
    assert choice.index == 4
    assert ran == [WRONG]
    assert choice.reason.startswith("1 of 5 answers are code")


def test_without_code_or_probes_the_first_usable_answer_is_kept() -> None:
    assert choose_code(HEADER, ["{code}", "prose only."], entry_point="add").index == 0
    untyped = ["def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n"]
    choice = choose_code("def add(a, b):", ["", *untyped], entry_point="add")
    assert choice.index == 1
    assert "no probes" in choice.reason
    assert choose_code(HEADER, [], entry_point="add").code == ""


def test_the_real_sandbox_runs_the_probes() -> None:
    candidates = [LOOP, WRONG, RIGHT, RIGHT_TOO, CRASH]
    choice = choose_code(HEADER, candidates, entry_point="add")
    assert choice.index == 2
    raising = "def half(n: int):\n    if n < 0:\n        raise ValueError(n)\n    return n // 2\n"
    same = "def half(n: int):\n    if n < 0:\n        raise ValueError('neg')\n    return n >> 1\n"
    other = "def half(n: int):\n    return n // 2\n"
    choice = choose_code("def half(n: int):", [other, raising, same], entry_point="half")
    assert choice.index == 1  # agreeing on the ValueError for -3 counts


IR = {
    "intent": {"description": "Add two integers."},
    "signature": {
        "name": "add",
        "parameters": [{"name": "a", "type_hint": "int"}, {"name": "b", "type_hint": "int"}],
        "return_type": "int",
    },
}


def sampling_lm(*bodies: str) -> DummyLM:
    return DummyLM([{"ir": IR}, *({"body": body} for body in bodies)], adapter=AnswerFormat())


def test_the_pipeline_samples_and_keeps_the_agreed_answer() -> None:
    lm = sampling_lm("return a - b", "return a + b", "return b + a")
    program = LiftPipeline(code_samples=3, sample_temperature=0.5)
    with dspy.context(lm=lm, trace=[]):
        out = program(prompt="Write add(a, b).")
        trace = list(dspy.settings.trace)
    assert out.code == RIGHT
    assert out.body.strip() == "return a + b"
    assert "kept answer 1" in out.code_choice
    assert out.lm_calls == 4
    calls = [entry["kwargs"] for entry in lm.history[1:]]
    assert [c.get("temperature") for c in calls[1:]] == [0.5, 0.5]
    assert [c.get("rollout_id") for c in calls[1:]] == [1, 2]
    assert [c.get("seed") for c in calls[1:]] == [1, 2]
    code_entries = [entry for entry in trace if entry[0] is program.to_code]
    assert len(code_entries) == 1  # only the kept answer, as a bootstrap should see it
    assert code_entries[0][2].body.strip() == "return a + b"


def test_one_sample_is_the_plain_pipeline() -> None:
    lm = sampling_lm("return a + b")
    with dspy.context(lm=lm):
        out = LiftPipeline()(prompt="Write add(a, b).")
    assert out.code == RIGHT
    assert out.code_choice is None
    assert out.lm_calls == 2


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"code_samples": 0}, "code_samples"),
        ({"code_samples": 2.5}, "code_samples"),
        ({"sample_temperature": 0.0}, "sample_temperature"),
        ({"sample_temperature": 2.5}, "sample_temperature"),
    ],
)
def test_bad_sampling_settings_name_the_parameter(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises((InputValueError, TypeError), match=name):
        LiftPipeline(**kwargs)


@pytest.mark.slow
def test_real_samples_from_the_bundled_model_are_distinct_and_one_is_kept() -> None:
    """The real local LM and sandbox: sampled answers differ (own seeds), the choice is recorded."""
    pytest.importorskip("xllamacpp", reason="the local LM needs xllamacpp (lift-metrics[local])")
    from lift_metrics.lm import local_lm

    lm = local_lm(temperature=0.0, max_tokens=320, cache=False)
    program = LiftPipeline(code_samples=4, code_max_tokens=96)
    prompt = "Write a function `sum_list(numbers)` that returns the sum of a list of integers."
    with dspy.context(lm=lm):
        out = program(prompt=prompt)
    # the 135M model may repeat a parameter (the IR is then refused, the header still written)
    assert out.header.startswith("def "), (out.ir_error, out.code_error)
    bodies = [entry["outputs"][0] for entry in lm.history[1:]]
    assert len(bodies) == 4
    assert len(set(map(str, bodies))) > 1  # temperature 0.8 with four seeds
    assert out.code_choice.startswith(("0 of 4", "1 of 4", "2 of 4", "3 of 4", "4 of 4"))
    assembled = [assemble_function(out.header, extract_code(str(body))) for body in bodies]
    assert out.code in assembled  # the kept answer is one of the four
