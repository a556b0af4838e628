"""What DSPy users expect of the metric objects: a program without an IR, every weight of
the pure functions, example ids in breakdowns and history."""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from typing import Any

import dspy
import pytest
from dspy_testkit import Program, is_good, make_answer, make_examples, make_lm, make_task

from lift_metrics.code import code_quality
from lift_metrics.composite import (
    aggregate_metric,
    end_to_end,
    latency_penalty,
)
from lift_metrics.dspy_metrics import (
    Aggregate,
    CodeQuality,
    EndToEnd,
    IRQuality,
    record_measurement,
)
from lift_metrics.ir import ir_quality

STRUCTURAL = {"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1, "structural": 0.3}
NO_IR = {"ir": 0, "code": 0.8, "latency": 0.2}


def _single_step_example(i: int) -> Any:
    """A code-only task: no ``expected_ir`` field at all."""
    task = make_task(i)
    del task["expected_ir"]
    return dspy.Example(**task).with_inputs("prompt")


def _code_only(code: str, **fields: Any) -> Any:
    prediction = dspy.Prediction(code=code, **fields)
    record_measurement(prediction, latency_ms=4_000.0, cost_usd=0.01)
    return prediction


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
        assert "ir" not in breakdown.components
        assert "ir" not in breakdown.end_to_end.components
        assert not any(reason.startswith("ir") for reason in breakdown.reasons)
        code_score = code(example, _code_only(answer))
        e2e = 0.8 * code_score + 0.2 * latency_penalty(4_000.0)
        assert breakdown.end_to_end.score == pytest.approx(e2e)
        if cls is Aggregate:  # quality: the mean of code and end-to-end, not a third of 0
            expected = aggregate_metric(None, code_score, e2e, 0.01, 4_000.0, gated=True)
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
    # code failing every test: code <= 1 - 0.4 = 0.6 (profile="seed" weights, structural), e2e 0.8 *
    # 0.6 + 0.2 = 0.68, quality (0.6 + 0.68) / 2 = 0.64, aggregate 0.7 * 0.64 + 0.6 * 0.3 = 0.628
    # (cost and latency gated by the code score; 0.7 * 0.64 + 0.3 = 0.748 ungated)
    metric = Aggregate(weights=NO_IR, code_profile="seed", code_weights=STRUCTURAL)
    assert metric.threshold == pytest.approx(0.678)
    ungated = Aggregate(weights=NO_IR, code_profile="seed", code_weights=STRUCTURAL, gated=False)
    assert ungated.threshold == pytest.approx(0.798)


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


def _documented_keys(function: Any, parameter: str) -> list[str]:
    """The ``key`` names in the numpydoc entry of ``parameter`` (``semantic=0`` is no key)."""
    doc = inspect.getdoc(function) or ""
    entry = re.search(rf"^{parameter} : .*\n((?:    .*\n)+)", doc + "\n", re.M)
    assert entry is not None, f"{function.__name__} does not document {parameter}"
    return sorted(set(re.findall(r"``([a-z_]+)``", entry.group(1))))


IR_KEYS = _documented_keys(ir_quality, "weights")
CODE_KEYS = _documented_keys(code_quality, "weights")
E2E_KEYS = _documented_keys(end_to_end, "weights")
AGGREGATE_KEYS = _documented_keys(aggregate_metric, "weights")

#: (pure function, its weights parameter, its documented keys) -> (metric, its parameter,
#: the attribute holding the normalised weights)
WEIGHTS = [
    (ir_quality, "weights", IR_KEYS, IRQuality, "weights", "ir_weights"),
    (code_quality, "weights", CODE_KEYS, CodeQuality, "weights", "code_weights"),
    (end_to_end, "weights", E2E_KEYS, EndToEnd, "weights", "weights"),
    (end_to_end, "ir_weights", IR_KEYS, EndToEnd, "ir_weights", "ir_weights"),
    (end_to_end, "code_weights", CODE_KEYS, EndToEnd, "code_weights", "code_weights"),
    (end_to_end, "weights", E2E_KEYS, Aggregate, "weights", "weights"),
    (end_to_end, "ir_weights", IR_KEYS, Aggregate, "ir_weights", "ir_weights"),
    (end_to_end, "code_weights", CODE_KEYS, Aggregate, "code_weights", "code_weights"),
    (
        aggregate_metric,
        "weights",
        AGGREGATE_KEYS,
        Aggregate,
        "aggregate_weights",
        "aggregate_weights",
    ),
]


def test_the_documented_keys_are_found() -> None:
    assert IR_KEYS == ["constraints", "intent", "signature", "structure"]
    assert CODE_KEYS == ["semantic", "structural", "style", "syntax", "tests"]
    assert E2E_KEYS == ["code", "ir", "latency"]
    assert AGGREGATE_KEYS == ["cost", "latency", "quality"]


@pytest.mark.parametrize(
    ("pure", "metric"),
    [
        (ir_quality, IRQuality),
        (code_quality, CodeQuality),
        (end_to_end, EndToEnd),
        (end_to_end, Aggregate),
        (aggregate_metric, Aggregate),
    ],
)
def test_every_weights_parameter_of_the_pure_function_has_a_counterpart(
    pure: Any, metric: type
) -> None:
    in_pure = {name for name in inspect.signature(pure).parameters if name.endswith("weights")}
    in_table = {row[1] for row in WEIGHTS if row[0] is pure and row[3] is metric}
    assert in_pure == in_table
    accepted = set(inspect.signature(metric).parameters)
    assert {row[4] for row in WEIGHTS if row[0] is pure and row[3] is metric} <= accepted


@pytest.mark.parametrize(
    ("pure", "parameter", "keys", "metric", "argument", "attribute"),
    WEIGHTS,
    ids=[f"{row[3].__name__}.{row[4]}" for row in WEIGHTS],
)
def test_every_documented_weight_is_accepted_by_the_metric_object(
    pure: Any, parameter: str, keys: list[str], metric: type, argument: str, attribute: str
) -> None:
    weights = {key: 1.0 for key in keys}  # all of them at once, the optional ones included
    obj = metric(**{argument: weights})
    assert getattr(obj, attribute) == pytest.approx({key: 1 / len(keys) for key in keys})


def test_the_example_id_is_the_id_field_or_a_stable_hash_of_the_inputs() -> None:
    task = make_task(4)
    example = dspy.Example(**task).with_inputs("prompt")
    same_inputs = dspy.Example(**{**task, "expected_code": "other"}).with_inputs("prompt")
    other_inputs = dspy.Example(**{**task, "prompt": "another"}).with_inputs("prompt")
    digest = hashlib.sha256(json.dumps({"prompt": task["prompt"]}).encode()).hexdigest()
    assert EndToEnd.example_id(example) == f"sha256:{digest[:16]}"  # not hash(): per process
    assert EndToEnd.example_id(same_inputs) == EndToEnd.example_id(example)
    assert EndToEnd.example_id(other_inputs) != EndToEnd.example_id(example)
    assert EndToEnd.example_id(dspy.Example(**task, task_id="HumanEval/4")) == "HumanEval/4"
    assert EndToEnd.example_id({**task, "id": 17, "task_id": "t"}) == "17"
    assert EndToEnd.example_id(dspy.Example()) is None


def test_breakdowns_and_history_carry_the_example_id(hash_embedder: Any) -> None:
    example = dspy.Example(**make_task(1), task_id="t-1").with_inputs("prompt")
    metric = EndToEnd(embedder=hash_embedder)
    bad = dspy.Prediction(ir=None, code=None)
    assert metric.breakdown(example, bad).example_id == "t-1"
    metric(example, bad)
    assert metric.history[-1].example_id == "t-1"
    assert metric.history[-1].to_dict()["example_id"] == "t-1"


def test_threaded_evaluate_results_match_history_by_example_id(hash_embedder: Any) -> None:
    n = 12
    examples = make_examples(n)
    for i in range(0, n, 2):  # half carry their own id, half are told apart by their inputs
        examples[i] = dspy.Example(**make_task(i), task_id=f"task-{i}").with_inputs("prompt")
    metric = EndToEnd(embedder=hash_embedder)
    with dspy.context(lm=make_lm(n)):
        result = dspy.Evaluate(
            devset=examples, metric=metric, num_threads=4, display_progress=False
        )(Program())
    by_id = {b.example_id: b for b in metric.history}
    assert len(by_id) == n
    assert {f"task-{i}" for i in range(0, n, 2)} <= set(by_id)
    for example, _, score in result.results:
        breakdown = by_id[EndToEnd.example_id(example)]
        assert breakdown.score == score
        # the breakdown is this example's: its code part ran this example's entry point
        assert example.entry_point in breakdown.code.code
    assert len({b.score for b in by_id.values()}) > 1


def make_answer_prediction(i: int) -> Any:
    """The answer the scripted LM gives to task ``i`` (wrong code for i = 0, 3, 6)."""
    prediction = dspy.Prediction(**make_answer(make_task(i), is_good(i)))
    record_measurement(prediction, latency_ms=1.0)
    return prediction


def _bootstrapped(metric: Any, metric_threshold: float | None) -> set[str]:
    n = 9
    optimizer = dspy.BootstrapFewShot(
        metric=metric,
        metric_threshold=metric_threshold,
        max_bootstrapped_demos=n,
        max_labeled_demos=0,
        max_rounds=1,
    )
    with dspy.context(lm=make_lm(n)):
        compiled = optimizer.compile(Program(), trainset=make_examples(n))
    return {demo.prompt for demo in compiled.gen.demos}


def test_trace_returns_float_lets_bootstrap_few_shot_apply_its_metric_threshold(
    hash_embedder: Any,
) -> None:
    good = {make_task(i)["prompt"] for i in range(9) if is_good(i)}
    everything = {make_task(i)["prompt"] for i in range(9)}
    # require_all_tests=False: the threshold alone decides, as with a metric of one's own
    lenient = EndToEnd(embedder=hash_embedder, threshold=0.5, require_all_tests=False)
    wrong_code = [lenient(ex, make_answer_prediction(i)) for i, ex in enumerate(make_examples(9))]
    assert all(0.5 <= s < 0.9 for i, s in enumerate(wrong_code) if not is_good(i))
    # a bool under a trace: metric_threshold=0.9 compares True >= 0.9, the metric's 0.5 decides
    assert _bootstrapped(lenient, 0.9) == everything
    floats = EndToEnd(
        embedder=hash_embedder, threshold=0.5, trace_returns="float", require_all_tests=False
    )
    assert floats(make_examples(1)[0], make_answer_prediction(0), trace=[]) == wrong_code[0]
    assert _bootstrapped(floats, 0.9) == good  # the score is compared with 0.9
    assert _bootstrapped(floats, None) == everything  # without one, any score > 0 passes


def test_trace_returns_is_validated() -> None:
    with pytest.raises(ValueError, match="trace_returns"):
        EndToEnd(trace_returns="int")  # type: ignore[arg-type]
