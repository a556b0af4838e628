"""Every registered metric as a DSPy metric object: one adapter, :class:`DSPyMetric`.

The registry's metrics are checked in both forms: the item scorer that validation uses and
the DSPy object made from it score the same pairs alike, and the built-in metrics score as
their dedicated DSPy objects do. A metric registered here (a token overlap) gets both forms
without any code of its own.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from testkit import HashEmbedder

from lift_metrics.dspy_metrics import Aggregate, CodeQuality, DSPyMetric, EndToEnd, IRQuality
from lift_metrics.validation import (
    AggregateScorer,
    CodePairScorer,
    EndToEndScorer,
    IRPairScorer,
    ItemField,
    MetricScorer,
    MetricSpec,
    metric_names,
    register_metric,
    registered_metric,
    unregister_metric,
)

LABELS = Path(__file__).resolve().parents[2] / "datasets" / "labels"


def _rows(name: str, count: int) -> list[dict[str, Any]]:
    with (LABELS / name).open(encoding="utf-8") as handle:
        return [json.loads(line) for line, _ in zip(handle, range(count), strict=False)]


def _end_to_end_items(count: int) -> list[dict[str, Any]]:
    """IR pairs and code pairs of the same function joined into end-to-end items."""
    irs = {row["expected"]["signature"]["name"]: row for row in _rows("ir_pairs.jsonl", 200)}
    items = []
    for row in _rows("code_pairs.jsonl", 200):
        ir = irs.get(row.get("entry_point"))
        if ir is not None and row.get("tests"):
            items.append(
                {
                    "predicted_ir": ir["predicted"],
                    "expected_ir": ir["expected"],
                    **{k: row[k] for k in ("predicted_code", "expected_code", "tests")},
                    "entry_point": row["entry_point"],
                }
            )
    return items[:count]


def _items(name: str, count: int) -> list[dict[str, Any]]:
    if name == "ir_quality":
        return _rows("ir_pairs.jsonl", count)
    if name in ("end_to_end", "aggregate"):  # no latency or cost: a DSPy object never reads one
        return _end_to_end_items(count)
    return _rows("code_pairs.jsonl", count)


def _pair(metric: DSPyMetric, item: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The (example, prediction) that hold the item's fields where ``metric`` reads them."""
    sides: dict[str, dict[str, Any]] = {"example": {}, "prediction": {}}
    for key, where in metric.fields.items():
        if where is not None and key in item:
            side, name = where.split(".")
            sides[side][name] = item[key]
    return sides["example"], sides["prediction"]


@pytest.fixture(scope="module")
def box() -> Iterator[Any]:
    from lift_metrics.sandbox import Sandbox

    with Sandbox(workers=1, timeout_s=5.0) as sandbox:
        yield sandbox


def _scorer(name: str, box: Any) -> MetricScorer:
    spec = registered_metric(name)
    given = {"embedder": HashEmbedder(), "sandbox": box}
    return spec.make(**{k: v for k, v in given.items() if k in spec.options})


# -- every registered metric -------------------------------------------------------------------
@pytest.mark.parametrize("name", [*metric_names(), *metric_names(baseline=True)])
def test_every_registered_metric_scores_alike_as_scorer_and_dspy_object(
    name: str, box: Any
) -> None:
    scorer = _scorer(name, box)
    metric = DSPyMetric(scorer)
    assert isinstance(metric, DSPyMetric)
    items = _items(name, 3)
    assert items
    for item in items:
        example, prediction = _pair(metric, item)
        assert metric(example, prediction) == pytest.approx(scorer(item), abs=1e-9)
        result = metric.history[-1]
        assert result.metric == name
        assert result.reasons == () or not result.reasons[0].startswith(f"{name}: scored 0")
    # a bad prediction scores 0 with the reason; an example without its reference raises
    assert metric(example, {}) == 0.0
    assert "the prediction has no field" in metric.history[-1].reasons[0]
    read = [metric.fields[f.key] for f in registered_metric(name).fields if f.required]
    reference = next(where for where in read if where and where.startswith("example."))
    with pytest.raises(ValueError, match=f"no field '{reference.split('.')[1]}'"):
        metric({}, prediction)


def test_the_built_in_metrics_score_as_their_dedicated_objects(box: Any) -> None:
    embedder = HashEmbedder()
    ir_pairs = [(DSPyMetric(IRPairScorer(embedder=embedder)), IRQuality(embedder=embedder))]
    code = (
        DSPyMetric(CodePairScorer(embedder=embedder, sandbox=box)),
        CodeQuality(embedder=embedder, sandbox=box),
    )
    end = (
        DSPyMetric(EndToEndScorer(embedder=embedder, sandbox=box)),
        EndToEnd(embedder=embedder, sandbox=box),
    )
    aggregate = (
        DSPyMetric(AggregateScorer(embedder=embedder, sandbox=box)),
        Aggregate(embedder=embedder, sandbox=box),
    )
    cases = [
        *((pair, item) for pair in ir_pairs for item in _items("ir_quality", 8)),
        *((code, item) for item in _items("code_quality", 6)),
        *((end, item) for item in _items("end_to_end", 3)),
        *((aggregate, item) for item in _items("end_to_end", 3)),  # neither reads a cost
    ]
    scores = []
    for (generic, dedicated), item in cases:
        example, prediction = _pair(generic, item)
        ours, theirs = generic(example, prediction), dedicated(example, prediction)
        assert ours == pytest.approx(theirs, abs=1e-9), (generic.name, item.get("id"))
        verdicts = (generic.history[-1].all_tests_passed, dedicated.history[-1].all_tests_passed)
        assert verdicts[0] == verdicts[1]
        scores.append(ours)
    assert len(set(scores)) > 3  # the items differ: not one constant score


def test_the_aggregate_scorer_reads_an_items_cost_and_latency_and_a_dspy_object_never(
    box: Any,
) -> None:
    scorer = _scorer("aggregate", box)
    [item] = _items("aggregate", 1)
    plain = scorer.breakdown(item)
    assert set(plain.components) == {"quality"}  # neither known: both left out
    costly = scorer.breakdown({**item, "cost_usd": 0.05, "latency_ms": 30_000})
    assert costly.components["cost"] == pytest.approx(0.5)
    assert costly.components["latency"] == pytest.approx(0.5)
    assert costly.gate == pytest.approx(costly.code.score)  # gated, as Aggregate is
    assert costly.end_to_end.latency_ms == 30_000
    metric = DSPyMetric(scorer)
    assert metric.fields["cost_usd"] is None
    assert metric.fields["latency_ms"] is None
    example, prediction = _pair(metric, item)
    told = {**prediction, "cost_usd": 0.0, "latency_ms": 0.0}  # a program's own claim
    assert metric(example, told) == pytest.approx(plain.score, abs=1e-9)
    with pytest.raises(ValueError, match="cost_usd"):
        scorer({**item, "cost_usd": -1.0})


# -- a metric registered by a user -------------------------------------------------------------
@dataclass(frozen=True)
class Overlap:
    score: float
    components: dict[str, float]
    reasons: tuple[str, ...] = ()
    tests_passed: int = 0
    tests_total: int = 0
    weights: dict[str, float] = field(default_factory=dict)


def token_overlap(predicted: str, expected: str, tests: Any = None) -> Overlap:
    """Jaccard overlap of the tokens; its reason quotes the reference (as reasons may)."""
    ours, theirs = set(predicted.split()), set(expected.split())
    score = len(ours & theirs) / len(ours | theirs) if ours | theirs else 1.0
    reasons = () if score == 1.0 else (f"tokens: expected {expected!r}",)
    total = len(tests or ())
    passed = sum(1 for case in tests or () if case in predicted)
    return Overlap(score, {"tokens": score}, reasons, passed, total, {"tokens": 1.0})


def _strict_text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"not text: {type(value).__name__}")
    return value


@pytest.fixture
def overlap() -> Iterator[MetricSpec]:
    spec = register_metric(
        MetricSpec(
            name="token_overlap",
            core=token_overlap,
            fields=(
                ItemField(
                    "predicted_code", "predicted", parse=_strict_text, source="prediction.code"
                ),
                ItemField("expected_code", "expected"),
                ItemField("tests", required=False),
            ),
        )
    )
    yield spec
    unregister_metric("token_overlap")


EXAMPLE = {"expected_code": "return a + b"}


def test_a_registered_metric_gets_a_scorer_and_a_dspy_object(overlap: MetricSpec) -> None:
    import dspy

    scorer = MetricScorer("token_overlap")
    metric = DSPyMetric(scorer, threshold=0.7)
    item = {"predicted_code": "return a - b", "expected_code": "return a + b"}
    assert metric(EXAMPLE, {"code": "return a - b"}) == scorer(item) == pytest.approx(0.6)
    assert metric(EXAMPLE, {"code": "return a - b"}, trace=[]) is False
    assert metric(EXAMPLE, {"code": "return a + b"}, trace=[]) is True
    floats = DSPyMetric(scorer, trace_returns="float")
    assert floats(EXAMPLE, {"code": "return a - b"}, trace=[]) == pytest.approx(0.6)

    class Echo(dspy.Module):
        def forward(self, text: str) -> dspy.Prediction:
            return dspy.Prediction(code=text)

    devset = [
        dspy.Example(text=text, expected_code="return a + b").with_inputs("text")
        for text in ("return a + b", "return a - b", "pass")
    ]
    evaluation = dspy.Evaluate(devset=devset, metric=metric, num_threads=1)(Echo())
    assert evaluation.score == pytest.approx(100 * (1.0 + 0.6 + 0.0) / 3, abs=0.01)
    assert [round(r.score, 3) for r in metric.history[-3:]] == [1.0, 0.6, 0.0]
    assert all(r.example_id and r.example_id.startswith("sha256:") for r in metric.history)


def test_bad_predictions_score_0_and_bad_examples_raise(overlap: MetricSpec) -> None:
    metric = DSPyMetric("token_overlap")
    for prediction, reason in (
        (None, "the prediction is None"),
        ({}, "the prediction has no field 'code'"),
        ({"code": None}, "prediction.code is None"),
        ({"code": 42}, "prediction.code cannot be read: TypeError: not text: int"),
    ):
        assert metric(EXAMPLE, prediction) == 0.0
        (line,) = metric.history[-1].reasons
        assert line.startswith(f"token_overlap: scored 0 because {reason}")
    with pytest.raises(ValueError, match=r"no field 'expected_code'.*fields="):
        metric({"reference": "x"}, {"code": "x"})
    with pytest.raises(ValueError, match=r"example.expected_code is None"):
        metric({"expected_code": None}, {"code": "x"})
    assert metric({**EXAMPLE, "tests": None}, {"code": "return a + b"}) == 1.0  # optional


def test_fields_say_where_each_value_is_read(overlap: MetricSpec) -> None:
    scorer = MetricScorer("token_overlap")
    metric = DSPyMetric(
        scorer, fields={"predicted_code": "prediction.answer", "expected_code": "example.gold"}
    )
    assert metric.fields["tests"] == "example.tests"
    assert metric({"gold": "a b"}, {"answer": "a b"}) == 1.0
    for fields, message in (
        ({"code": "prediction.x"}, r"has the fields \['predicted_code'"),
        ({"predicted_code": "output.code"}, "must be 'prediction.<field>'"),
        ({"predicted_code": "prediction.not a name"}, "must be 'prediction.<field>'"),
        ({"expected_code": None}, "cannot be None"),
    ):
        with pytest.raises(ValueError, match=message):
            DSPyMetric(scorer, fields=fields)
    assert DSPyMetric(scorer, fields={"tests": None}).fields["tests"] is None
    with pytest.raises(ValueError, match=r"scorer: name must be one of \(.*'token_overlap'"):
        DSPyMetric("token_overlaps")
    with pytest.raises(TypeError, match="scorer must be a MetricScorer"):
        DSPyMetric(token_overlap)


def test_feedback_hides_the_reference_unless_asked(overlap: MetricSpec) -> None:
    scorer = MetricScorer("token_overlap")
    wrong = {"code": "return a - b"}
    hidden = DSPyMetric(scorer)(EXAMPLE, wrong, None, "generate", None)
    assert "return a + b" not in hidden.feedback
    assert "token_overlap score 0.600" in hidden.feedback
    assert "token_overlap/tokens: 0.60" in hidden.feedback
    shown = DSPyMetric(scorer, reveal_expected=True)(EXAMPLE, wrong, None, "generate", None)
    assert "expected 'return a + b'" in shown.feedback
    # the predictor that wrote prediction.code is told the points are its own; one that wrote
    # none of the metric's fields is not (the parts are then unknown, as for every metric)
    metric = DSPyMetric(scorer)
    own = metric(EXAMPLE, wrong, None, "generate", [(None, {}, {"code": "return a - b"})])
    assert "What lost points in your outputs:" in own.feedback
    other = metric(EXAMPLE, wrong, None, "plan", [(None, {}, {"ir": "{}"})])
    assert "What lost points in the outputs:" in other.feedback


def test_code_failing_a_test_is_never_a_demonstration(overlap: MetricSpec) -> None:
    metric = DSPyMetric("token_overlap", threshold=0.1)
    example = {**EXAMPLE, "tests": ["a", "zzz"]}  # a "test" passes when its token is there
    assert metric(example, {"code": "return a + b"}, trace=[]) is False
    assert metric.history[-1].all_tests_passed is False
    assert metric.history[-1].score == 1.0
    lenient = DSPyMetric("token_overlap", threshold=0.1, require_all_tests=False)
    assert lenient(example, {"code": "return a + b"}, trace=[]) is True
    assert metric(EXAMPLE, {"code": "return a + b"}, trace=[]) is True  # no tests: no verdict


def test_a_core_without_a_score_in_the_unit_interval_raises() -> None:
    spec = MetricSpec(
        name="broken",
        core=lambda predicted: Overlap(math.nan, {}),
        fields=(ItemField("predicted_code", "predicted", source="prediction.code"),),
    )
    metric = DSPyMetric(MetricScorer(spec))
    with pytest.raises(ValueError, match=r"broken's core returned score nan"):
        metric({}, {"code": "x"})
    raising = MetricSpec(
        name="raising",
        core=lambda predicted: 1 / 0,
        fields=(ItemField("predicted_code", "predicted", source="prediction.code"),),
    )
    metric = DSPyMetric(MetricScorer(raising))
    assert metric({}, {"code": "x"}) == 0.0  # what the core does with a prediction: a score
    assert "raising raised ZeroDivisionError" in metric.history[-1].reasons[0]


def test_results_are_cached_except_a_crashed_run() -> None:
    calls: list[str] = []

    @dataclass(frozen=True)
    class Execution:
        status: str

    @dataclass(frozen=True)
    class Ran:
        score: float
        execution: Execution

    def core(predicted: str) -> Ran:
        calls.append(predicted)
        return Ran(0.5, Execution("crashed" if predicted == "boom" else "passed"))

    spec = MetricSpec(
        name="runs_code",
        core=core,
        fields=(ItemField("predicted_code", "predicted", source="prediction.code"),),
    )
    metric = DSPyMetric(MetricScorer(spec))
    for code in ("ok", "ok", "boom", "boom"):
        assert metric({}, {"code": code}) == 0.5
    assert calls == ["ok", "boom", "boom"]  # a crash may be the machine's: run it again
    assert DSPyMetric(MetricScorer(spec), cache_size=0)({}, {"code": "ok"}) == 0.5
    assert calls[-1] == "ok"


def test_copies_keep_the_options_and_share_the_scorer(overlap: MetricSpec) -> None:
    metric = DSPyMetric("token_overlap", threshold=0.7, fields={"expected_code": "example.gold"})
    metric({"gold": "a"}, {"code": "a"})
    for clone in (copy.deepcopy(metric), pickle.loads(pickle.dumps(metric))):
        assert (clone.threshold, clone.fields, clone.history) == (0.7, metric.fields, ())
        assert clone({"gold": "a b"}, {"code": "a"}) == 0.5
    assert copy.deepcopy(metric).scorer is metric.scorer
    assert copy.deepcopy(metric)._cache is not metric._cache
