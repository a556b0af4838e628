"""Pass/fail metric objects, bootstrapping thresholds and test feedback, on the real sandbox."""

from __future__ import annotations

import json
from typing import Any

import dspy
import pytest
from dspy_testkit import make_task
from testkit import HashEmbedder

from lift_metrics.dspy_metrics import (
    Aggregate,
    AllTestsPass,
    CodeQuality,
    EndToEnd,
    TestPassRate,
    record_measurement,
)

TASK = make_task(1)
EXAMPLE = dspy.Example(**TASK).with_inputs("prompt")
GOOD_CODE = TASK["expected_code"]
BAD_CODE = GOOD_CODE.replace("a + b", "a - b")  # fails both tests
HALF_CODE = GOOD_CODE.replace("a + b", "a + b if a > 0 else 1")  # passes (1, 2) only
PERFECT_IR = json.dumps(TASK["expected_ir"])


def pred(code: Any, **fields: Any) -> Any:
    prediction = dspy.Prediction(ir=PERFECT_IR, code=code, **fields)
    record_measurement(prediction, latency_ms=0.0, cost_usd=0.0)  # instant and free
    return prediction


@pytest.fixture(scope="module")
def sandbox() -> Any:
    from lift_metrics.sandbox import Sandbox

    with Sandbox(workers=1, timeout_s=5.0) as box:
        yield box


def test_the_pass_rate_and_the_strict_variant(sandbox: Any) -> None:
    rate, strict = TestPassRate(sandbox=sandbox), AllTestsPass(sandbox=sandbox)
    assert rate(EXAMPLE, pred(GOOD_CODE)) == 1.0
    assert strict(EXAMPLE, pred(GOOD_CODE)) == 1.0
    assert rate(EXAMPLE, pred(HALF_CODE)) == 0.5
    assert strict(EXAMPLE, pred(HALF_CODE)) == 0.0
    assert rate(EXAMPLE, pred(BAD_CODE)) == 0.0
    assert rate(EXAMPLE, pred("```python\n" + GOOD_CODE + "```")) == 1.0
    assert rate(EXAMPLE, pred("{code}")) == 0.0
    assert rate(EXAMPLE, pred(None)) == 0.0
    assert rate(EXAMPLE, pred(HALF_CODE), trace=[]) is False  # default threshold 1.0
    assert rate(EXAMPLE, pred(GOOD_CODE), trace=[]) is True
    assert "not run: degenerate" in rate.history[-4].reasons[0]


def test_one_core_scores_the_plain_function_the_item_scorer_and_the_object_alike(
    sandbox: Any,
) -> None:
    from lift_metrics.code import test_pass_rate, test_pass_rate_breakdown
    from lift_metrics.validation import PassRateScorer

    # a stub "passes" a test that expects None: no form pays it, since it computes nothing
    returns_none = [{"inputs": {"a": 1, "b": 2}, "expected": None}]
    stub = "def add1(a, b):\n    pass\n"
    none_task = {**TASK, "tests": returns_none}
    scorer, metric = PassRateScorer(sandbox=sandbox), TestPassRate(sandbox=sandbox)
    for task, code in [(TASK, GOOD_CODE), (TASK, HALF_CODE), (TASK, "{code}"), (none_task, stub)]:
        cases = [(case["inputs"], case["expected"]) for case in task["tests"]]
        plain = test_pass_rate(code, cases, sandbox=sandbox)
        item = {"predicted_code": code, "tests": task["tests"]}
        example = dspy.Example(**task).with_inputs("prompt")
        assert plain == scorer(item) == metric(example, pred(code))
    assert test_pass_rate(stub, [({"a": 1, "b": 2}, None)], sandbox=sandbox) == 0.0
    breakdown = test_pass_rate_breakdown(stub, [({"a": 1, "b": 2}, None)], sandbox=sandbox)
    assert breakdown.degenerate == "the entry function has no body (pass)"
    assert breakdown.execution is None  # not run
    assert metric.history[-1].code.degenerate == breakdown.degenerate
    # the same function, a body that computes: it runs and passes
    computes = stub.replace("pass", "return None")
    assert test_pass_rate(computes, [({"a": 1, "b": 2}, None)], sandbox=sandbox) == 1.0


def test_a_table_of_the_tests_answers_is_never_a_demonstration(sandbox: Any) -> None:
    # passes both given tests, computes nothing: the generated inputs count as tests under a
    # trace, for the code metric and for the composites whose perfect IR would carry it
    table = "def add1(a, b):\n    return {(1, 2): 3, (-1, 1): 0}.get((a, b))\n"
    rewrite = "def add1(a, b):\n    return sum((a, b))\n"
    embedder = HashEmbedder()
    for metric in (
        CodeQuality(embedder=embedder, sandbox=sandbox),
        EndToEnd(embedder=embedder, sandbox=sandbox),
        Aggregate(embedder=embedder, sandbox=sandbox),
    ):
        assert metric(EXAMPLE, pred(table), trace=[]) is False, metric
        code = metric.history[-1].code
        assert (code.tests_passed, code.tests_total) == (2, 2)
        assert code.behaviour_total > 0
        assert code.behaviour_agreed < code.behaviour_total
        assert metric.history[-1].all_tests_passed is False
        assert metric(EXAMPLE, pred(rewrite), trace=[]) is True, metric
        assert metric.history[-1].all_tests_passed is True
    # without tests, the generated inputs alone decide
    untested = dspy.Example(**{**TASK, "tests": []}).with_inputs("prompt")
    metric = CodeQuality(embedder=embedder, sandbox=sandbox, threshold=0.0)
    assert metric(untested, pred(table), trace=[]) is False
    assert metric(untested, pred(rewrite), trace=[]) is True
    assert (
        CodeQuality(embedder=embedder, sandbox=sandbox, tests_field=None, threshold=0.0)(
            EXAMPLE, pred(table), trace=[]
        )
        is False
    )


def test_pass_rate_needs_tests(sandbox: Any) -> None:
    without = dspy.Example(**{**TASK, "tests": []}).with_inputs("prompt")
    with pytest.raises(ValueError, match="holds no tests"):
        TestPassRate(sandbox=sandbox)(without, pred(GOOD_CODE))


def test_the_feedback_names_the_failing_inputs_and_values(sandbox: Any) -> None:
    result = TestPassRate(sandbox=sandbox)(EXAMPLE, pred(HALF_CODE), None, "gen", None)
    assert isinstance(result, dspy.Prediction)
    assert result.score == 0.5
    assert "add1(a=-1, b=1) returned 1" in result.feedback
    assert "expected 0" not in result.feedback
    reveal = TestPassRate(sandbox=sandbox, reveal_expected=True)
    assert (
        "add1(a=-1, b=1) expected 0, returned 1"
        in reveal(EXAMPLE, pred(HALF_CODE), None, "g").feedback
    )


def test_check_script_feedback_shows_the_failing_check(sandbox: Any) -> None:
    script = (
        "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"
    )
    example = dspy.Example(**{**TASK, "tests": script}).with_inputs("prompt")
    result = AllTestsPass(sandbox=sandbox)(example, pred(HALF_CODE), None, "gen", None)
    assert result.score == 0.0
    assert "the check script failed: AssertionError" in result.feedback


def test_humaneval_prompt_completion(sandbox: Any) -> None:
    prompt = 'def add1(a: int, b: int) -> int:\n    """Add."""\n'
    example = dspy.Example(**{**TASK, "prompt": prompt}).with_inputs("prompt")
    assert TestPassRate(sandbox=sandbox)(example, pred("    return a + b\n")) == 1.0
    assert CodeQuality(sandbox=sandbox, embedder=HashEmbedder())(
        example, pred("    return a + b\n")
    ) == pytest.approx(1.0)
    no_prompt = TestPassRate(sandbox=sandbox, prompt_field=None)
    assert no_prompt(example, pred("    return a + b\n")) == 0.0


# --- bootstrapping never accepts code that fails every test ----------------------------------


def test_default_thresholds_reject_failing_code_even_with_a_perfect_rest(sandbox: Any) -> None:
    embedder = HashEmbedder()
    for cls in (CodeQuality, EndToEnd, Aggregate):
        metric = cls(sandbox=sandbox, embedder=embedder)
        assert metric(EXAMPLE, pred(BAD_CODE), trace=[]) is False, cls.__name__
        assert metric(EXAMPLE, pred("{code}"), trace=[]) is False, cls.__name__
        assert metric(EXAMPLE, pred(GOOD_CODE), trace=[]) is True, cls.__name__
    assert (CodeQuality().threshold, EndToEnd().threshold, Aggregate().threshold) == (
        0.5,
        0.65,
        0.53,
    )
    assert Aggregate(gated=False).threshold == 0.77


def test_the_end_to_end_threshold_follows_its_weights() -> None:
    no_latency = EndToEnd(weights={"ir": 0.4, "code": 0.5, "latency": 0})
    assert no_latency.threshold == pytest.approx(0.4 / 0.9 + 0.5 / 0.9 * 0.2 + 0.05, abs=1e-4)
    assert EndToEnd(threshold=0.3).threshold == 0.3
    seed = EndToEnd(code_profile="seed")
    assert seed.threshold == pytest.approx(0.4 + 0.1 + 0.5 * 0.6 + 0.05)


def test_a_broken_sandbox_raises_instead_of_scoring_0() -> None:
    from lift_metrics.sandbox import SandboxUnavailableError

    class Broken:
        def run_tests(self, *args: Any, **kwargs: Any) -> Any:
            raise SandboxUnavailableError("bwrap and fork both failed")

    for metric in (
        CodeQuality(sandbox=Broken(), embedder=HashEmbedder()),
        TestPassRate(sandbox=Broken()),
    ):
        with pytest.raises(SandboxUnavailableError):
            metric(EXAMPLE, pred(GOOD_CODE.replace("a + b", "b + a")))
