"""The DSPy metric protocol of the metric objects: float, bool, GEPA feedback; bad predictions."""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
from typing import Any

import dspy
import pytest
from dspy_testkit import make_task
from testkit import HashEmbedder

from lift_metrics import aggregate_metric, latency_penalty
from lift_metrics.dspy_metrics import (
    Aggregate,
    AllTestsPass,
    CodeQuality,
    EndToEnd,
    IRQuality,
    MetricBreakdown,
    TestPassRate,
    record_measurement,
)
from lift_metrics.ir import ir_quality

TASK = make_task(1)
EXAMPLE = dspy.Example(**TASK).with_inputs("prompt")
GOOD = {"ir": json.dumps(TASK["expected_ir"]), "code": TASK["expected_code"]}
BAD_CODE = TASK["expected_code"].replace("a + b", "a - b")
NO_INTENT = {"intent": 0, "signature": 0.3, "structure": 0.2, "constraints": 0.2}
NO_SEMANTIC = {"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1}


def pred(**fields: Any) -> Any:
    """A prediction whose latency and cost fields were also measured (where they are valid)."""
    values = {**GOOD, "latency_ms": 100.0, "cost_usd": 0.0, **fields}
    prediction = dspy.Prediction(**values)
    latency, cost = values["latency_ms"], values["cost_usd"]
    if all(isinstance(v, float) and v >= 0 for v in (latency, cost)):
        record_measurement(prediction, latency_ms=latency, cost_usd=cost)
    return prediction


@pytest.fixture
def e2e(hash_embedder: HashEmbedder) -> EndToEnd:
    # reads the latency field (the opt-in): the bad-latency cases below are about that field
    return EndToEnd(embedder=hash_embedder, threshold=0.9, latency_field="latency_ms")


ALL_METRICS = [IRQuality, CodeQuality, EndToEnd, Aggregate]


@pytest.mark.parametrize("cls", ALL_METRICS)
def test_gepa_can_bind_five_positional_arguments(cls: type, hash_embedder: HashEmbedder) -> None:
    # GEPA checks this at construction (dspy 3.4's GEPA.__init__)
    inspect.signature(cls(embedder=hash_embedder)).bind(None, None, None, None, None)


PROTOCOL = {"threshold", "history_size", "cache_size", "trace_returns", "reveal_expected"}
RUNS_CODE = {
    *("tests_field", "entry_point_field", "prompt_field", "code_field"),
    *("sandbox", "timeout_s", "require_all_tests"),
}


@pytest.mark.parametrize("cls", [*ALL_METRICS, TestPassRate, AllTestsPass])
def test_the_signature_lists_every_keyword_the_constructor_takes(cls: type) -> None:
    # the run configuration and help() read it: each keyword with the default it has
    params = inspect.signature(cls).parameters
    assert all(p.kind is p.KEYWORD_ONLY for p in params.values())
    assert set(params) >= PROTOCOL
    assert (set(params) >= RUNS_CODE) is (cls is not IRQuality)
    cls(**{name: p.default for name, p in params.items()})  # every one of them is accepted
    with pytest.raises(TypeError):
        cls(no_such_keyword=1)
    if cls is IRQuality:  # it runs no code: no test to require
        with pytest.raises(TypeError):
            IRQuality(require_all_tests=False)


@pytest.mark.parametrize("cls", ALL_METRICS)
def test_return_type_follows_the_calling_convention(cls: type, hash_embedder: HashEmbedder) -> None:
    metric = cls(embedder=hash_embedder, threshold=0.5)
    score = metric(EXAMPLE, pred())
    assert type(score) is float
    assert 0.9 < score <= 1.0
    assert metric(EXAMPLE, pred(), trace=[]) is True  # bootstrapping: a bool
    bad = pred(ir="nonsense", code=None, latency_ms=None, cost_usd=None)
    assert metric(EXAMPLE, bad) < 0.5
    assert metric(EXAMPLE, bad, trace=[]) is False
    result = metric(EXAMPLE, pred(), None, "gen", None)
    assert isinstance(result, dspy.Prediction)
    assert result.score == score  # GEPA compares it with the module-level score
    assert "predictor `gen`" in result.feedback


def test_threshold_decides_bootstrapping(hash_embedder: HashEmbedder) -> None:
    example, prediction = EXAMPLE, pred(code=BAD_CODE)
    score = EndToEnd(embedder=hash_embedder)(example, prediction)
    lenient = {"embedder": hash_embedder, "require_all_tests": False}  # only the threshold
    assert EndToEnd(threshold=score, **lenient)(example, prediction, []) is True
    assert EndToEnd(threshold=score + 1e-9, **lenient)(example, prediction, []) is False


def test_scores_equal_the_pure_functions(hash_embedder: HashEmbedder) -> None:
    prediction = pred(code=BAD_CODE, latency_ms=24_000.0, cost_usd=0.02)
    ir = IRQuality(embedder=hash_embedder)(EXAMPLE, prediction)
    assert ir == ir_quality(prediction.ir, TASK["expected_ir"], embedder=hash_embedder)
    code_metric = CodeQuality(embedder=hash_embedder, weights=NO_SEMANTIC)
    code = code_metric(EXAMPLE, prediction)
    from lift_metrics.code import code_quality

    tests = [(t["inputs"], t["expected"]) for t in TASK["tests"]]
    assert code == code_quality(
        BAD_CODE, TASK["expected_code"], tests, weights=NO_SEMANTIC, entry_point="add1"
    )
    e2e = EndToEnd(embedder=hash_embedder, code_weights=NO_SEMANTIC)(EXAMPLE, prediction)
    assert e2e == pytest.approx(0.4 * ir + 0.5 * code + 0.1 * latency_penalty(24_000))
    agg = Aggregate(embedder=hash_embedder, code_weights=NO_SEMANTIC)(EXAMPLE, prediction)
    assert agg == pytest.approx(aggregate_metric(ir, code, e2e, 0.02, 24_000, gated=True))


def test_feedback_names_the_failing_test_and_constraint(hash_embedder: HashEmbedder) -> None:
    bad_ir = dict(TASK["expected_ir"])
    bad_ir["effects"] = [{"kind": "returns"}, {"kind": "io"}]
    e2e = EndToEnd(embedder=hash_embedder, threshold=0.9, reveal_expected=True)
    result = e2e(EXAMPLE, pred(ir=bad_ir, code=BAD_CODE), None, "gen", None)
    feedback = result.feedback
    assert feedback.startswith("Feedback for predictor `gen`: EndToEnd score")
    # with reveal_expected: the failing test with its input, expected and actual value
    assert "add1(a=1, b=2) expected 3, returned -1" in feedback
    assert "add1(a=-1, b=1) expected 0, returned -2" in feedback
    # the violated constraint and the sub-metric that lost points
    assert "ir/constraints: violated: is pure" in feedback
    assert "ir/structure: effect kinds ['returns', 'io'], expected ['returns']" in feedback
    assert math.isclose(result.score, e2e(EXAMPLE, pred(ir=bad_ir, code=BAD_CODE)))


def test_feedback_puts_the_traced_predictors_outputs_first(e2e: EndToEnd) -> None:
    prediction = pred(ir={**TASK["expected_ir"], "effects": []}, code=BAD_CODE)
    coder_trace = [(None, {"prompt": "x"}, dspy.Prediction(code=BAD_CODE))]
    feedback = e2e(EXAMPLE, prediction, [], "coder", coder_trace).feedback
    own, _, context = feedback.partition("Also lost points (in outputs of other steps")
    assert "What lost points in your outputs:" in own
    assert "code/tests" in own
    assert "ir/" not in own
    assert "ir/structure" in context
    planner_trace = [(None, {"prompt": "x"}, {"ir": "{}"})]
    feedback = e2e(EXAMPLE, prediction, [], "planner", planner_trace).feedback
    own, _, context = feedback.partition("Also lost points")
    assert "ir/structure" in own
    assert "code/tests" in context


def test_perfect_prediction_feedback_says_so(hash_embedder: HashEmbedder) -> None:
    metric = IRQuality(embedder=hash_embedder)
    feedback = metric(EXAMPLE, pred(), None, "gen", None).feedback
    assert feedback.endswith("Nothing lost points: keep this behaviour.")


# ------------------------------------------------------------------ bad predictions never raise


BAD_PREDICTIONS: list[tuple[str, Any, dict[str, str]]] = [
    (
        "prediction is None",
        None,
        {"ir": "the prediction is None", "code": "the prediction is None"},
    ),
    (
        "missing fields",
        dspy.Prediction(answer="42"),
        {
            "ir": "the prediction has no field 'ir' (its fields: ['answer'])",
            "code": "has no field 'code'",
            "latency": "has no field 'latency_ms'",
        },
    ),
    (
        "None values",
        pred(ir=None, code=None, latency_ms=None),
        {"ir": "prediction.ir is None", "code": "prediction.code is None"},
    ),
    ("malformed IR", pred(ir="```json\n{broken\n```"), {"ir": "prediction.ir is not a valid IR"}),
    ("IR of wrong type", pred(ir=42), {"ir": "prediction.ir is a int, not an IR"}),
    ("IR missing signature", pred(ir={"intent": "x"}), {"ir": "signature: Field required"}),
    ("code not a string", pred(code=["def f(): pass"]), {"code": "prediction.code is a list"}),
    (
        "latency not a number",
        pred(latency_ms="fast"),
        {"latency": "prediction.latency_ms is 'fast'"},
    ),
    ("negative latency", pred(latency_ms=-3.0), {"latency": "not a non-negative number"}),
    ("NaN latency", pred(latency_ms=math.nan), {"latency": "prediction.latency_ms is nan"}),
    ("a plain dict", {"ir": GOOD["ir"], "code": "def broken(:", "latency_ms": 5}, {}),
]


@pytest.mark.parametrize(("label", "prediction", "reasons"), BAD_PREDICTIONS)
def test_bad_predictions_score_zero_parts_and_say_why(
    e2e: EndToEnd, label: str, prediction: Any, reasons: dict[str, str]
) -> None:
    breakdown = e2e.breakdown(EXAMPLE, prediction)
    assert isinstance(breakdown, MetricBreakdown)
    assert 0.0 <= breakdown.score < 1.0
    for part, text in reasons.items():
        assert breakdown.components[part] == 0.0, (part, breakdown)
        assert any(
            r.startswith(f"{part}: scored 0 because") and text in r for r in breakdown.reasons
        ), (
            part,
            breakdown.reasons,
        )
    # every entry point of the protocol copes as well
    assert isinstance(e2e(EXAMPLE, prediction), float)
    assert e2e(EXAMPLE, prediction, []) is (breakdown.score >= e2e.threshold)
    assert text_in(e2e(EXAMPLE, prediction, None, "gen", None).feedback, reasons.values())


def text_in(feedback: str, fragments: Any) -> bool:
    return all(fragment in feedback for fragment in fragments)


def test_untouched_parts_keep_their_score(e2e: EndToEnd) -> None:
    breakdown = e2e.breakdown(EXAMPLE, pred(ir="garbage"))
    assert breakdown.components["ir"] == 0.0
    assert breakdown.components["code"] > 0.9
    assert breakdown.components["latency"] == 1.0


class RaisingEmbedder:
    def embed(self, texts: Any) -> Any:
        raise RuntimeError("embedding service down")


def test_an_exception_inside_a_sub_metric_scores_zero(caplog: pytest.LogCaptureFixture) -> None:
    metric = EndToEnd(embedder=RaisingEmbedder(), code_weights=NO_SEMANTIC)
    prediction = pred(ir={**TASK["expected_ir"], "intent": {"description": "other"}})
    with caplog.at_level("WARNING", logger="lift_metrics.dspy_metrics"):
        breakdown = metric.breakdown(EXAMPLE, prediction)
    assert breakdown.components["ir"] == 0.0
    assert "ir: scored 0 because ir_quality raised RuntimeError: embedding service down" in (
        breakdown.reasons
    )
    assert breakdown.components["code"] > 0.9  # the code part did not need the embedder
    assert "ir_quality raised" in caplog.text


def test_code_metric_exception_is_contained(
    monkeypatch: pytest.MonkeyPatch, hash_embedder: HashEmbedder
) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError("sandbox exploded")

    monkeypatch.setattr("lift_metrics.code._quality.score_code", boom)
    metric = EndToEnd(embedder=hash_embedder)
    breakdown = metric.breakdown(EXAMPLE, pred())
    assert breakdown.components["code"] == 0.0
    assert any("code_quality raised MemoryError: sandbox exploded" in r for r in breakdown.reasons)


# ------------------------------------------------------------------ configuration


@pytest.mark.parametrize(
    ("cls", "kwargs", "error", "message"),
    [
        (IRQuality, {"ir_field": "my ir"}, ValueError, "ir_field must be a Python identifier"),
        (IRQuality, {"expected_ir_field": ""}, ValueError, "expected_ir_field must be"),
        (
            IRQuality,
            {"weights": {"intent": 1}},
            ValueError,
            "ir_weights must have exactly the keys",
        ),
        (IRQuality, {"threshold": 1.5}, ValueError, "threshold must be in \\[0, 1\\]"),
        (IRQuality, {"embedder": object()}, TypeError, "embedder must have an embed"),
        (CodeQuality, {"code_field": 3}, ValueError, "code_field must be"),
        (CodeQuality, {"weights": {"tests": 1}}, ValueError, "code_weights must have exactly"),
        (CodeQuality, {"sandbox": object()}, TypeError, "sandbox must have a run_tests method"),
        (CodeQuality, {"timeout_s": 0}, ValueError, "timeout_s must be > 0"),
        (EndToEnd, {"weights": {"ir": 1, "code": 1}}, ValueError, "weights must have exactly"),
        (EndToEnd, {"target_ms": -1}, ValueError, "target_ms must be > 0"),
        (EndToEnd, {"latency_field": "latency ms"}, ValueError, "latency_field must be"),
        (Aggregate, {"cost_field": "cost usd"}, ValueError, "cost_field must be"),
        (Aggregate, {"aggregate_weights": {"cost": 1}}, ValueError, "aggregate_weights must"),
        (Aggregate, {"cost_ceiling_usd": 0}, ValueError, "cost_ceiling_usd must be > 0"),
    ],
)
def test_misconfiguration_raises_at_construction(
    cls: type, kwargs: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        cls(**kwargs)


def test_an_example_without_the_configured_field_raises_clearly(
    hash_embedder: HashEmbedder,
) -> None:
    metric = IRQuality(expected_ir_field="gold_ir", embedder=hash_embedder)
    with pytest.raises(ValueError, match="IRQuality: the example has no field 'gold_ir'"):
        metric(EXAMPLE, pred())
    with pytest.raises(ValueError, match=r"example\.expected_ir is not a valid IR"):
        IRQuality(embedder=hash_embedder)(EXAMPLE.copy(expected_ir="nope"), pred())


def test_custom_field_names_are_used(hash_embedder: HashEmbedder) -> None:
    example = dspy.Example(gold=TASK["expected_ir"], ref=TASK["expected_code"], cases=TASK["tests"])
    metric = EndToEnd(
        expected_ir_field="gold",
        ir_field="plan",
        expected_code_field="ref",
        tests_field="cases",
        entry_point_field=None,
        code_field="program",
        latency_field=None,
        embedder=hash_embedder,
    )
    prediction = dspy.Prediction(plan=TASK["expected_ir"], program=BAD_CODE)
    breakdown = metric.breakdown(example, prediction)
    assert set(breakdown.components) == {"ir", "code"}  # latency not scored, weights rescaled
    assert breakdown.weights == pytest.approx({"ir": 0.4 / 0.9, "code": 0.5 / 0.9})
    assert breakdown.components["ir"] == 1.0
    assert breakdown.code.tests_passed == 0  # a - b fails both tests


def test_history_is_bounded_and_can_be_cleared(hash_embedder: HashEmbedder) -> None:
    metric = IRQuality(embedder=hash_embedder, history_size=3)
    for _ in range(5):
        metric(EXAMPLE, pred())
    assert len(metric.history) == 3
    metric.clear_history()
    assert metric.history == ()
    silent = IRQuality(embedder=hash_embedder, history_size=0)
    silent(EXAMPLE, pred())
    assert silent.history == ()


def test_repr_shows_the_configuration(hash_embedder: HashEmbedder) -> None:
    assert repr(IRQuality(embedder=hash_embedder)) == (
        "IRQuality(expected_ir_field='expected_ir', ir_field='ir', threshold=0.75)"
    )


# ------------------------------------------------------------------ result cache


@dataclasses.dataclass(frozen=True)
class _Execution:
    status: str
    outcomes: tuple[Any, ...] = ()


@dataclasses.dataclass(frozen=True)
class _CodeResult:
    score: float
    execution: Any = None
    reasons: tuple[str, ...] = ()


def _counting_code_metric(monkeypatch: pytest.MonkeyPatch, status: str) -> list[str]:
    calls: list[str] = []

    def fake(code: str, *args: Any, **kwargs: Any) -> _CodeResult:
        calls.append(code)
        return _CodeResult(0.5, _Execution(status))

    monkeypatch.setattr("lift_metrics.code._quality.score_code", fake)
    return calls


def test_identical_parts_are_scored_once(
    monkeypatch: pytest.MonkeyPatch, hash_embedder: HashEmbedder
) -> None:
    calls = _counting_code_metric(monkeypatch, "failed")
    metric = EndToEnd(embedder=hash_embedder)
    first = metric(EXAMPLE, pred(latency_ms=100.0))
    second = metric(EXAMPLE, pred(latency_ms=100.0))
    slow = metric(EXAMPLE, pred(latency_ms=32_000.0))  # latency is never cached
    assert calls == [GOOD["code"]]
    assert first == second
    assert slow == pytest.approx(first - 0.1 * (1 - math.exp(-2)))
    metric(EXAMPLE, pred(code=BAD_CODE))  # a different prediction is computed
    assert calls == [GOOD["code"], BAD_CODE]
    metric.clear_cache()
    metric(EXAMPLE, pred())
    assert len(calls) == 3


def test_cache_can_be_disabled_and_crashes_are_not_cached(
    monkeypatch: pytest.MonkeyPatch, hash_embedder: HashEmbedder
) -> None:
    calls = _counting_code_metric(monkeypatch, "failed")
    metric = CodeQuality(embedder=hash_embedder, cache_size=0)
    metric(EXAMPLE, pred())
    metric(EXAMPLE, pred())
    assert len(calls) == 2
    calls = _counting_code_metric(monkeypatch, "crashed")
    metric = CodeQuality(embedder=hash_embedder)
    metric(EXAMPLE, pred())
    metric(EXAMPLE, pred())
    assert len(calls) == 2  # a crashed sandbox may be the machine's fault: try again
    with pytest.raises(ValueError, match="cache_size must be >= 0"):
        CodeQuality(cache_size=-1)
