"""What an optimizer can reach without solving the task: feedback, claimed latency, cut-offs.

Over the 64 project tasks (``datasets/tasks/tasks.jsonl``): GEPA feedback that is no answer
key, latency and cost from a measurement rather than the prediction's claims, and
demonstration cut-offs that never take code failing a test.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import dspy
import pytest
from testkit import HashEmbedder

from lift_metrics._tasks import load_tasks
from lift_metrics.dspy_metrics import (
    Aggregate,
    AllTestsPass,
    CodeQuality,
    EndToEnd,
    IRQuality,
    TestPassRate,
    measured,
    measurement_of,
    record_measurement,
)

TASKS = load_tasks()
WRONG_IR = {
    "intent": {"description": "Do something with the input."},
    # names no task uses: the parameter score is position by position, so a shared name (t004
    # has ``x``) would score differently against the disguised task
    "signature": {"name": "solve", "parameters": [{"name": "qq_arg"}], "return_type": "None"},
    "effects": [{"kind": "io"}],
}
METRICS: list[tuple[type, dict[str, Any]]] = [
    (IRQuality, {}),
    (CodeQuality, {}),
    (EndToEnd, {}),
    (Aggregate, {}),
    (TestPassRate, {}),
    (AllTestsPass, {}),
]


def _wrong_code(example: Any) -> str:
    """Code defining the entry point that fails every test (returns a marker string)."""
    return f"def {example.entry_point}(*args, **kwargs):\n    return '__wrong__'\n"


def _wrong_prediction(example: Any) -> Any:
    prediction = dspy.Prediction(ir=WRONG_IR, code=_wrong_code(example))
    record_measurement(prediction, latency_ms=1_000.0, cost_usd=0.001)
    return prediction


def _disguised(example: Any) -> Any:
    """The example with other expected values and other names in its expected IR.

    Intent, effect kinds and constraint kinds stay as they are; every expected test value,
    the function's name, its parameters' names and type hints, the return type and the
    effects' descriptions and targets change. Feedback that does not quote the reference
    is the same for both.
    """
    ir = copy.deepcopy(example.expected_ir)
    names = {p["name"]: f"zz_param{i}" for i, p in enumerate(ir["signature"]["parameters"])}
    ir["signature"]["name"] = "zz_function"
    ir["signature"]["return_type"] = "ZzType"
    for param in ir["signature"]["parameters"]:
        param["name"], param["type_hint"] = names[param["name"]], "ZzHint"
    for effect in ir.get("effects", []):
        effect["description"] = "zz effect"
        if effect.get("target"):
            effect["target"] = "zz target"
    for constraint in ir.get("constraints", []):
        if constraint["kind"] == "has_parameter":
            constraint["name"] = names.get(constraint["name"], "zz_other")
            if constraint.get("type_hint"):
                constraint["type_hint"] = "ZzHint"
        if constraint["kind"] == "return_type":
            constraint["type_hint"] = "ZzType"
    tests = [(inputs, ["zz expected", i]) for i, (inputs, _) in enumerate(example.tests)]
    return example.copy(expected_ir=ir, tests=tests)


@pytest.fixture(scope="module")
def sandbox() -> Any:
    from lift_metrics.sandbox import Sandbox

    with Sandbox(workers=1, timeout_s=5.0) as box:
        yield box


@pytest.fixture(scope="module")
def feedback(sandbox: Any) -> dict[str, list[tuple[str, str, str, str]]]:
    """Per metric: (default, default on the disguised task, opt-in, opt-in disguised)."""
    embedder = HashEmbedder()
    out: dict[str, list[tuple[str, str, str, str]]] = {}
    for cls, options in METRICS:
        kwargs = (
            {**options, "embedder": embedder} if cls not in (TestPassRate, AllTestsPass) else {}
        )
        if cls is not IRQuality:
            kwargs["sandbox"] = sandbox
        metric, reveal = cls(**kwargs), cls(reveal_expected=True, **kwargs)
        rows = []
        for example in TASKS:
            prediction = _wrong_prediction(example)
            texts = []
            for ex in (example, _disguised(example)):
                result = metric.breakdown(ex, prediction)
                texts.append(
                    (
                        metric.feedback(result, pred_name="gen"),
                        reveal.feedback(result, pred_name="gen"),
                    )
                )
            rows.append((texts[0][0], texts[1][0], texts[0][1], texts[1][1]))
        out[cls.__name__] = rows
    return out


def _expected_ir_texts(example: Any) -> list[str]:
    ir = example.expected_ir
    texts = [ir["intent"]["description"]]
    for effect in ir.get("effects", []):
        texts += [effect[key] for key in ("description", "target") if effect.get(key)]
    return texts


@pytest.mark.slow  # the feedback fixture scores 6 metrics on 2 x 64 tasks (about 20 s)
@pytest.mark.parametrize(("cls", "options"), METRICS, ids=[m.__name__ for m, _ in METRICS])
def test_default_feedback_quotes_no_expected_value_and_no_expected_ir(
    feedback: dict[str, list[tuple[str, str, str, str]]], cls: type, options: dict[str, Any]
) -> None:
    for example, (plain, disguised, _, _) in zip(TASKS, feedback[cls.__name__], strict=True):
        # the same text whatever the expected values and the expected IR's names: it cannot
        # quote them
        assert plain == disguised, (example.task_id, plain, disguised)
        arguments = {name for inputs, _ in example.tests for name in inputs}
        for text in _expected_ir_texts(example):
            if text not in arguments:  # a failing call shows its argument names
                assert text not in plain, (example.task_id, text)
        assert not re.search(r"expected [\['\"\d]", plain), (example.task_id, plain)
        own = repr(WRONG_IR) + _wrong_code(example) + repr([i for i, _ in example.tests])
        for _, expected in example.tests:
            shown = repr(expected)
            if len(shown) >= 4 and shown not in own:  # a value the feedback may show anyway
                assert shown not in plain, (example.task_id, shown)


@pytest.mark.slow  # the feedback fixture scores 6 metrics on 2 x 64 tasks (about 20 s)
@pytest.mark.parametrize(("cls", "options"), METRICS, ids=[m.__name__ for m, _ in METRICS])
def test_reveal_expected_restores_the_full_feedback(
    feedback: dict[str, list[tuple[str, str, str, str]]], cls: type, options: dict[str, Any]
) -> None:
    rows = list(zip(TASKS, feedback[cls.__name__], strict=True))
    for example, (_, _, full, full_disguised) in rows:
        assert full != full_disguised, example.task_id
        if cls in (IRQuality, EndToEnd, Aggregate):
            assert example.expected_ir["intent"]["description"] in full
            assert f"expected {example.expected_ir['signature']['name']!r}" in full
        if cls is not IRQuality:
            first_failing = repr(example.tests[0][1])
            assert f"expected {first_failing}" in full, (example.task_id, full)


def _reflect(text: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A 'reflection' that only parses feedback: the IR and the test answers it can rebuild."""
    ir: dict[str, Any] = {}
    if m := re.search(
        r"ir/intent: similarity [\d.]+ between .* and expected (['\"])(.*)\1$", text, re.M
    ):
        ir["intent"] = m.group(2)
    if m := re.search(r"function name '.*?', expected '(\w+)'", text):
        ir["name"] = m.group(1)
    if m := re.search(r"parameters \(ordered match [\d.]+\): missing ([^;\n]*)", text):
        ir["parameters"] = sorted(re.findall(r"(?:^|, )(\w+)(?=:|,|$)", m.group(1).strip()))
    if m := re.search(r"return type \S+, expected (\S+)", text):
        ir["return_type"] = m.group(1)
    if m := re.search(r"effect kinds \[.*?\], expected (\[.*?\])", text):
        ir["effects"] = m.group(1)
    answers = dict(
        re.findall(r"tests: test \d+: (\w+\(.*?\)) expected (.*?), (?:returned|raised)", text)
    )
    return ir, answers


@pytest.mark.slow  # the feedback fixture
def test_a_reflection_that_parses_the_feedback_cannot_rebuild_the_answers(
    feedback: dict[str, list[tuple[str, str, str, str]]],
) -> None:
    rebuilt = {"default": 0, "reveal": 0}
    for example, (plain, _, full, _) in zip(TASKS, feedback["EndToEnd"], strict=True):
        signature = example.expected_ir["signature"]
        names = sorted(p["name"] for p in signature["parameters"])
        for mode, text in (("default", plain), ("reveal", full)):
            ir, answers = _reflect(text)
            got = (
                ir.get("intent") == example.expected_ir["intent"]["description"]
                and ir.get("name") == signature["name"]
                and ir.get("parameters") == names
                and len(answers) == min(5, len(example.tests))
            )
            rebuilt[mode] += got
            if mode == "default":
                assert ir == {}, (example.task_id, ir)
                assert answers == {}, (example.task_id, answers)
    # the opt-in reveals the answer key on every task; the default gives none of it
    assert rebuilt == {"default": 0, "reveal": len(TASKS)}


def test_check_script_feedback_shows_the_exception_not_the_assertion(sandbox: Any) -> None:
    example = dspy.Example(
        expected_code="def double(x):\n    return 2 * x\n",
        entry_point="double",
        tests="def check(candidate):\n    assert candidate(21) == 42\n",
    )
    prediction = {"code": "def double(x):\n    return x + 1\n"}
    for cls in (CodeQuality, TestPassRate):
        kwargs: dict[str, Any] = {"sandbox": sandbox}
        if cls is CodeQuality:
            kwargs["embedder"] = HashEmbedder()
        text = cls(**kwargs)(example, prediction, None, "gen", None).feedback
        assert "the check script failed: AssertionError" in text
        assert "42" not in text
        full = cls(reveal_expected=True, **kwargs)(example, prediction, None, "gen", None)
        assert "== 42" in full.feedback


# ------------------------------------------------------- latency and cost: measured, not claimed


def _pair(example: Any) -> tuple[Any, Any]:
    """Failing code that claims 0 ms and $0; correct code measured at 60 s and $0.10."""
    claims = dspy.Prediction(
        ir=example.expected_ir, code=_wrong_code(example), latency_ms=0.0, cost_usd=0.0
    )
    correct = dspy.Prediction(ir=example.expected_ir, code=example.expected_code)
    record_measurement(correct, latency_ms=60_000.0, cost_usd=0.10)
    return claims, correct


def test_claimed_speed_and_price_never_beat_correct_code_measured_at_60_s(sandbox: Any) -> None:
    for cls in (EndToEnd, Aggregate):
        metric = cls(embedder=HashEmbedder(), sandbox=sandbox)
        for example in TASKS[:16]:
            claims, correct = _pair(example)
            assert metric(example, claims) < metric(example, correct), (cls, example.task_id)


def test_measured_speed_and_price_never_lift_failing_code_above_correct_code(
    sandbox: Any,
) -> None:
    """Failing code really measured free and instant against correct code at both ceilings."""
    gated = Aggregate(embedder=HashEmbedder(), sandbox=sandbox)
    for example in TASKS[:16]:
        fast = dspy.Prediction(ir=example.expected_ir, code=_wrong_code(example))
        record_measurement(fast, latency_ms=0.0, cost_usd=0.0)
        _, correct = _pair(example)
        assert gated(example, fast) < gated(example, correct), example.task_id
        parts = gated.breakdown(example, fast)
        assert parts.aggregate is not None
        assert parts.aggregate.gate <= 0.2
        assert any("counted at" in reason for reason in parts.reasons)


def test_a_prediction_field_is_read_only_when_named(sandbox: Any) -> None:
    example = TASKS[0]
    kwargs = {"embedder": HashEmbedder(), "sandbox": sandbox}

    def claiming(latency_ms: float) -> Any:
        return dspy.Prediction(
            ir=example.expected_ir, code=example.expected_code, latency_ms=latency_ms, cost_usd=0.0
        )

    for cls in (EndToEnd, Aggregate):
        metric = cls(**kwargs)
        instant, slow = (
            metric.breakdown(example, claiming(0.0)),
            metric.breakdown(example, claiming(60_000.0)),
        )
        assert instant.score == slow.score
        assert "latency" not in instant.components  # unknown: left out, not 1.0
        assert any("latency: not scored" in r for r in instant.reasons)
        trusting = cls(latency_field="latency_ms", **kwargs)
        assert trusting(example, claiming(0.0)) > trusting(example, claiming(60_000.0))
    cost = Aggregate(**kwargs).breakdown(example, claiming(0.0))
    assert "cost" not in cost.components
    trusting_cost = Aggregate(cost_field="cost_usd", **kwargs).breakdown(example, claiming(0.0))
    assert trusting_cost.components["cost"] == 1.0


def test_measured_records_latency_and_cost_of_any_program() -> None:
    from dspy.utils import DummyLM

    class Claims(dspy.Signature):  # type: ignore[misc]
        """Answer."""

        question: str = dspy.InputField()
        answer: str = dspy.OutputField()
        latency_ms: float = dspy.OutputField()

    program = measured(dspy.Predict(Claims))
    with dspy.context(lm=DummyLM([{"answer": "4", "latency_ms": "0"}])):
        out = program(question="2+2?")
    assert out.latency_ms == 0.0  # what the LM wrote
    measurement = measurement_of(out)
    assert measurement is not None
    assert measurement.latency_ms > 0.0
    assert measurement.lm_calls == 1
    assert measurement_of(copy.copy(out)) is None  # only the object itself
    assert [name for name, _ in program.named_predictors()] == ["program"]


# ------------------------------------------------------------ bootstrapping: no failing code


def _almost_right(example: Any) -> str:
    """The reference solution, wrong on the last test's input only: passes all tests but one."""
    inputs, _ = example.tests[-1]
    entry = example.entry_point
    return (
        f"{example.expected_code}\n\n_right = {entry}\n\n\n"
        f"def {entry}(*args, **kwargs):\n"
        f"    if not args and kwargs == {inputs!r}:\n"
        "        return '__wrong__'\n"
        "    return _right(*args, **kwargs)\n"
    )


@pytest.mark.slow  # every project task, buggy and right, through three metrics in the sandbox
def test_bootstrapping_accepts_no_code_that_fails_a_test(sandbox: Any) -> None:
    embedder = HashEmbedder()
    metrics = [
        cls(embedder=embedder, sandbox=sandbox) for cls in (CodeQuality, EndToEnd, Aggregate)
    ]
    lenient = [
        cls(embedder=embedder, sandbox=sandbox, require_all_tests=False)
        for cls in (CodeQuality, EndToEnd, Aggregate)
    ]
    accepted_before = 0
    for example in TASKS:
        buggy = dspy.Prediction(ir=example.expected_ir, code=_almost_right(example))
        right = dspy.Prediction(ir=example.expected_ir, code=example.expected_code)
        for prediction in (buggy, right):
            record_measurement(prediction, latency_ms=100.0, cost_usd=0.0)
        for metric, old in zip(metrics, lenient, strict=True):
            # BootstrapFewShot's call: metric(example, prediction, trace)
            assert metric(example, buggy, []) is False, (type(metric).__name__, example.task_id)
            assert metric(example, right, []) is True, (type(metric).__name__, example.task_id)
            floats = type(metric)(embedder=embedder, sandbox=sandbox, trace_returns="float")
            assert floats(example, buggy, []) == 0.0
            accepted_before += old(example, buggy, []) is True
    # the threshold alone lets most of them in: what require_all_tests stops
    assert accepted_before > len(TASKS)


def test_bootstrap_few_shot_keeps_only_code_that_passes_every_test(sandbox: Any) -> None:
    from dspy.utils import DummyLM

    examples = [e.copy(ir=e.expected_ir) for e in TASKS[:6]]
    answers = {
        e.prompt: {"code": _almost_right(e) if i % 2 else e.expected_code}
        for i, e in enumerate(examples)
    }

    class Gen(dspy.Signature):  # type: ignore[misc]
        """Write the code."""

        prompt: str = dspy.InputField()
        code: str = dspy.OutputField()

    class Program(dspy.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.gen = dspy.Predict(Gen)

        def forward(self, prompt: str) -> Any:
            out = self.gen(prompt=prompt)
            return dspy.Prediction(ir=examples[0].expected_ir, code=out.code)

    lm = DummyLM({p: a for p, a in answers.items()})
    metric = CodeQuality(embedder=HashEmbedder(), sandbox=sandbox)
    optimizer = dspy.BootstrapFewShot(
        metric=metric, max_bootstrapped_demos=6, max_labeled_demos=0, max_rounds=1
    )
    with dspy.context(lm=lm):
        compiled = optimizer.compile(Program(), trainset=examples)
    kept = {demo.prompt for demo in compiled.gen.demos}
    assert kept == {e.prompt for i, e in enumerate(examples) if i % 2 == 0}


def test_gepa_warns_when_its_validation_set_is_its_training_set() -> None:
    import warnings

    from lift_metrics.optimizers._setup import warn_if_val_is_train

    train, dev = load_tasks("train"), load_tasks("dev")
    with pytest.warns(UserWarning, match="GEPA's validation set is its training set"):
        assert warn_if_val_is_train(train, train[:8]) == 8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_if_val_is_train(train, dev) == 0


@pytest.mark.slow  # a few project tasks through two metrics in the sandbox
def test_bootstrapping_accepts_no_unusable_ir_next_to_passing_code(sandbox: Any) -> None:
    from lift_metrics.ir import ir_mutations

    embedder = HashEmbedder()
    metrics = [cls(embedder=embedder, sandbox=sandbox) for cls in (EndToEnd, Aggregate)]
    lenient = [
        cls(embedder=embedder, sandbox=sandbox, require_usable_ir=False)
        for cls in (EndToEnd, Aggregate)
    ]
    accepted_before = 0
    for example in TASKS[:4]:
        right = dspy.Prediction(ir=example.expected_ir, code=example.expected_code)
        record_measurement(right, latency_ms=100.0, cost_usd=0.0)
        unusable = [m for m in ir_mutations(example.expected_ir) if not m.usable]
        assert unusable
        for metric, old in zip(metrics, lenient, strict=True):
            assert metric(example, right, []) is True, (type(metric).__name__, example.task_id)
            assert metric.breakdown(example, right).ir_usable is True
            for mutation in unusable:
                bad = dspy.Prediction(ir=mutation.ir, code=example.expected_code)
                record_measurement(bad, latency_ms=100.0, cost_usd=0.0)
                assert metric(example, bad, []) is False, (mutation.name, example.task_id)
                accepted_before += old(example, bad, []) is True
    assert accepted_before > 0  # the totals alone let them in: what require_usable_ir stops
    with pytest.raises(TypeError, match="require_usable_ir"):
        EndToEnd(require_usable_ir="yes")  # type: ignore[arg-type]
