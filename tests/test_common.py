"""Checks common to every public scorer and metric object (as scikit-learn's
``metrics/tests/test_common.py``).

``SCORERS`` registers each function that returns a score in [0, 1] (the names exported by
``lift_metrics``, and the scorers of ``lift_metrics.stats``) with a few valid calls, the call
that must give the top score (where that is its contract), and a call with a wrong type;
``METRIC_OBJECTS`` registers the DSPy metric objects. Every entry gets the same checks:

* the score is a float in [0, 1] on every valid input;
* identity: the prediction equal to the reference gives 1.0, where the contract says so;
* determinism: the same call twice gives the same score;
* argument validation: a wrong type raises ``TypeError``/``ValueError`` naming the parameter;
* the docstring has numpydoc ``Parameters`` and ``Returns`` sections (classes: ``Parameters``);

and the registry covers every public name (a new scorer must be registered here). The
import-cost checks (no torch or dspy on ``import lift_metrics``) are here too. Embeddings come
from ``testkit.HashEmbedder`` and test runs from ``code_testkit.FakeSandbox``, so nothing here
loads a model or starts a sandbox; the specific behaviour of each metric is tested next to it.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import math
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from testkit import HashEmbedder, load_module

import lift_metrics
import lift_metrics.stats as stats

TESTS_DIR = Path(__file__).resolve().parent
FakeSandbox = load_module(TESTS_DIR / "code" / "code_testkit.py").FakeSandbox

EMBEDDER = HashEmbedder()
SANDBOX = FakeSandbox()

FIB: dict[str, Any] = {
    "intent": {"description": "Return the n-th Fibonacci number, starting from fib(0) = 0."},
    "signature": {
        "name": "fibonacci",
        "parameters": [{"name": "n", "type_hint": "int"}],
        "return_type": "int",
    },
    "effects": [{"kind": "returns", "description": "the n-th Fibonacci number"}],
    "constraints": [{"kind": "return_type", "type_hint": "int"}, {"kind": "pure"}],
}
OTHER_IR: dict[str, Any] = {
    "intent": {"description": "Print every line of a file."},
    "signature": {"name": "show", "parameters": [{"name": "path"}], "return_type": "None"},
    "effects": [{"kind": "io"}],
    "constraints": [],
}
CODE = 'def add(a: int, b: int) -> int:\n    """Add a and b."""\n    return a + b\n'
WRONG = CODE.replace("a + b", "a - b")
BROKEN = "def add(a, b) return a +"
TESTS: list[tuple[dict[str, Any], Any]] = [({"a": 1, "b": 2}, 3), ({"a": -1, "b": 1}, 0)]
CODES = [CODE, WRONG, BROKEN, "", "x = 1\n"]
IRS: list[Any] = [FIB, OTHER_IR, json.dumps(FIB)]

ROUTE_METRICS = {"ir_quality": 0.8, "code_quality": 0.6, "test_pass_rate": 0.5}

Call = tuple[tuple[Any, ...], dict[str, Any]]


def call(*args: Any, **kwargs: Any) -> Call:
    return args, kwargs


@dataclass(frozen=True)
class Scorer:
    """One registered scorer: how to call it, and what its contract promises."""

    name: str
    function: Callable[..., Any]
    valid: list[Call]
    identity: Call | None  # the call that must score 1.0; None where that is no contract
    wrong_type: tuple[Call, str]  # a call with a wrongly typed argument, and its name

    def __str__(self) -> str:
        return self.name


def cases(scorers: list[Scorer] | None = None) -> list[Any]:
    """``scorers`` (all by default) as test parameters, each named after its scorer."""
    return [pytest.param(scorer, id=scorer.name) for scorer in scorers or SCORERS]


def _ir_scorer(name: str, **options: Any) -> Scorer:
    function = getattr(lift_metrics, name)
    return Scorer(
        name,
        function,
        valid=[call(p, e, **options) for p in IRS for e in (FIB, OTHER_IR)],
        identity=call(copy.deepcopy(FIB), FIB, **options),
        wrong_type=(call(42, FIB, **options), "predicted"),
    )


def _code_scorer(name: str, *extra: Any, **options: Any) -> Scorer:
    function = getattr(lift_metrics, name)
    return Scorer(
        name,
        function,
        valid=[call(p, CODE, *extra, **options) for p in CODES],
        identity=call(CODE, CODE, *extra, **options),
        wrong_type=(call(42, CODE, *extra, **options), "predicted"),
    )


def _end_to_end(predicted_ir: Any, predicted_code: Any, latency_ms: float | None = 10.0) -> Call:
    return call(
        predicted_ir=predicted_ir,
        expected_ir=FIB,
        predicted_code=predicted_code,
        expected_code=CODE,
        tests=TESTS,
        latency_ms=latency_ms,
        embedder=EMBEDDER,
        sandbox=SANDBOX,
    )


SCORERS: list[Scorer] = [
    _ir_scorer("intent_match", embedder=EMBEDDER),
    _ir_scorer("signature_match"),
    _ir_scorer("structure_match"),
    _ir_scorer("constraint_match"),
    _ir_scorer("ir_quality", embedder=EMBEDDER),
    _code_scorer("structural_similarity"),
    _code_scorer("style_conformance"),
    _code_scorer("semantic_similarity", embedder=EMBEDDER),
    _code_scorer("reference_score", embedder=EMBEDDER),
    _code_scorer("code_quality", TESTS, embedder=EMBEDDER, sandbox=SANDBOX, entry_point="add"),
    Scorer(
        "syntax_correctness",
        lift_metrics.syntax_correctness,
        valid=[call(code) for code in CODES],
        identity=call(CODE),  # code that parses is the top score
        wrong_type=(call(42), "code"),
    ),
    Scorer(
        "test_pass_rate",
        lift_metrics.test_pass_rate,
        valid=[call(code, TESTS, sandbox=SANDBOX, entry_point="add") for code in CODES[:2]],
        identity=call(CODE, TESTS, sandbox=SANDBOX, entry_point="add"),
        wrong_type=(call(42, TESTS, sandbox=SANDBOX), "code"),
    ),
    Scorer(
        "end_to_end",
        lift_metrics.end_to_end,
        valid=[
            _end_to_end(FIB, CODE),
            _end_to_end(OTHER_IR, WRONG, 60_000.0),
            _end_to_end(json.dumps(FIB), BROKEN, None),
        ],
        identity=_end_to_end(FIB, CODE, 0.0),
        wrong_type=(_end_to_end(42, CODE), "predicted_ir"),
    ),
    Scorer(
        "latency_penalty",
        lift_metrics.latency_penalty,
        valid=[call(ms) for ms in (0.0, 100.0, 16_000.0, 1e9)],
        identity=call(0.0),  # no latency, no penalty: 1.0 is the best
        wrong_type=(call("fast"), "latency_ms"),
    ),
    Scorer(
        "aggregate_metric",
        lift_metrics.aggregate_metric,
        valid=[
            call(None, 0.5, 0.5, 0.01, 100.0),
            call(0.0, 0.0, 0.0, 1.0, 1e6),
            call(1.0, 1.0, 1.0, 0.0, 0.0),
        ],
        identity=call(1.0, 1.0, 1.0, 0.0, 0.0),
        wrong_type=(call("high", 0.5, 0.5, 0.01, 100.0), "ir_score"),
    ),
    Scorer(
        "route_quality",
        lift_metrics.route_quality,
        valid=[
            call("best_available", "code", dict(ROUTE_METRICS)),
            call("modal_inference", "code", {**ROUTE_METRICS, "test_pass_rate": 0.0}),
        ],
        identity=None,  # a quality estimate of a route, not a comparison
        wrong_type=(call(42, "code", dict(ROUTE_METRICS)), "route"),
    ),
    Scorer(
        "stats.retrieval_precision",
        stats.retrieval_precision,
        valid=[call(["a", "b"], ["a"]), call(["c"], ["a", "b"]), call(["a"], ["a", "b"])],
        identity=call(["a", "b"], ["a", "b"]),
        wrong_type=(call(42, ["a"]), "retrieved"),
    ),
    Scorer(
        "stats.retrieval_recall",
        stats.retrieval_recall,
        valid=[call(["a", "b"], ["a"]), call(["c"], ["a", "b"]), call(["a"], ["a", "b"])],
        identity=call(["a", "b"], ["a", "b"]),
        wrong_type=(call(42, ["a"]), "retrieved"),
    ),
    Scorer(
        "stats.pass_rate",
        stats.pass_rate,
        valid=[call([True, False]), call([False]), call(True)],
        identity=call([True, True]),
        wrong_type=(call(object()), "passed"),
    ),
    Scorer(
        "stats.pass_at_k",
        stats.pass_at_k,
        valid=[call(10, 3, 1), call(10, 0, 5), call(5, 5, 5)],
        identity=call(10, 10, 1),
        wrong_type=(call("ten", 3, 1), "n"),
    ),
    Scorer(
        "stats.pass_hat_k",
        stats.pass_hat_k,
        valid=[call(10, 3, 1), call(10, 0, 5), call(5, 5, 5)],
        identity=call(10, 10, 1),
        wrong_type=(call("ten", 3, 1), "n"),
    ),
    Scorer(
        "stats.composite_score",
        stats.composite_score,
        valid=[call(0.5, 0.25), call(0.0, 1.0, pass_weight=0.9, impl_weight=0.1)],
        identity=call(1.0, 1.0),
        wrong_type=(call("high", 0.5), "pass_rate"),
    ),
    Scorer(
        "stats.forge_score",
        stats.forge_score,
        valid=[call(True, 3, 1, 2), call(False, 0, 0, 0), call(True, 0, 4, 10)],
        identity=call(True, 4, 0, 0),
        wrong_type=(call("yes", 1, 0, 0), "compiled"),
    ),
]
SCORER_IDS = [scorer.name for scorer in SCORERS]

# Public names that are not scores in [0, 1] (breakdowns, parsers, costs, types), each with
# why; together with SCORERS and METRIC_OBJECTS they must cover lift_metrics.__all__.
NOT_SCORERS = {
    "CodeQualityOptions": "options",
    "IR": "data model",
    "IRParseError": "exception",
    "InputTypeError": "exception",
    "InputValueError": "exception",
    "LiftMetricsError": "exception",
    "ProviderRoute": "enum",
    "code_quality_breakdown": "breakdown of code_quality (its .score is code_quality)",
    "constraint_satisfied": "bool",
    "cost_usd_for_model": "cost in USD",
    "degenerate_kind": "label",
    "end_to_end_breakdown": "breakdown of end_to_end",
    "extract_code": "text",
    "ir_quality_breakdown": "breakdown of ir_quality",
    "parse_ir": "parser",
    "reference_score_breakdown": "breakdown of reference_score",
    "reference_scores": "list of reference_score values",
    "route_cost": "cost in USD",
    "suggest_route_migration": "suggestion",
}
METRIC_OBJECT_NAMES = ("IRQuality", "CodeQuality", "EndToEnd", "Aggregate", "TestPassRate")
METRIC_OBJECT_NAMES += ("AllTestsPass",)


def _score(scorer: Scorer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> float:
    value = scorer.function(*args, **kwargs)
    assert isinstance(value, float), f"{scorer.name} returned {type(value).__name__}"
    return value


@pytest.mark.parametrize(
    "name",
    [name for name in sorted(lift_metrics._EXPORTS)],
)
def test_every_export_is_the_object_its_module_defines(name: str) -> None:
    """Also after every defining module is imported: a submodule of the same name as an
    export would replace it as the package's attribute."""
    for module_name in sorted(set(lift_metrics._EXPORTS.values())):
        importlib.import_module(module_name)
    module = importlib.import_module(lift_metrics._EXPORTS[name])
    assert getattr(lift_metrics, name) is getattr(module, name)
    namespace: dict[str, Any] = {}
    exec(f"from lift_metrics import {name}", namespace)
    assert namespace[name] is getattr(module, name)


def test_the_registry_covers_every_public_name() -> None:
    registered = {s.name for s in SCORERS} | set(NOT_SCORERS) | set(METRIC_OBJECT_NAMES)
    missing = sorted(set(lift_metrics.__all__) - registered)
    assert missing == [], f"register these public names in tests/test_common.py: {missing}"
    for name in stats.__all__:
        if name.endswith("_score") and inspect.isfunction(getattr(stats, name)):
            assert f"stats.{name}" in SCORER_IDS, f"register stats.{name}"


@pytest.mark.parametrize("scorer", cases())
def test_scores_are_floats_in_the_unit_interval(scorer: Scorer) -> None:
    for args, kwargs in scorer.valid:
        value = _score(scorer, args, kwargs)
        assert 0.0 <= value <= 1.0, (scorer.name, args, value)
        assert not math.isnan(value), (scorer.name, args, value)


@pytest.mark.parametrize("scorer", cases([s for s in SCORERS if s.identity]))
def test_the_reference_itself_gets_the_top_score(scorer: Scorer) -> None:
    assert scorer.identity is not None
    args, kwargs = scorer.identity
    assert _score(scorer, args, kwargs) == 1.0


@pytest.mark.parametrize("scorer", cases())
def test_scores_are_deterministic(scorer: Scorer) -> None:
    for args, kwargs in scorer.valid:
        assert _score(scorer, args, kwargs) == _score(scorer, args, kwargs)


@pytest.mark.parametrize("scorer", cases())
def test_a_wrong_type_names_the_parameter(scorer: Scorer) -> None:
    (args, kwargs), parameter = scorer.wrong_type
    with pytest.raises((TypeError, ValueError)) as info:
        scorer.function(*args, **kwargs)
    message = str(info.value)
    assert message.startswith(parameter + " ") or f" {parameter} " in f" {message}", (
        f"{scorer.name}: {message!r} does not name {parameter!r}"
    )


def _documented() -> list[Any]:
    return cases() + [pytest.param(name, id=name) for name in METRIC_OBJECT_NAMES]


@pytest.mark.parametrize("entry", _documented())
def test_numpydoc_sections_are_present(entry: Scorer | str) -> None:
    if isinstance(entry, Scorer):
        name, obj = entry.name, entry.function
    else:
        name, obj = entry, getattr(lift_metrics, entry)
    doc = inspect.getdoc(obj) or ""
    sections = ("Parameters",) if inspect.isclass(obj) else ("Parameters", "Returns")
    for section in sections:
        assert f"\n{section}\n{'-' * len(section)}\n" in doc, f"{name} lacks {section}"


# --- the DSPy metric objects ----------------------------------------------------------------


@pytest.fixture(scope="module")
def dspy_case() -> tuple[Any, Any, Any]:
    """(example, the reference as a prediction, a wrong prediction) of one task."""
    dspy = pytest.importorskip("dspy")
    kit = load_module(TESTS_DIR / "dspy" / "dspy_testkit.py")
    task = kit.make_task(1)
    example = dspy.Example(**task).with_inputs("prompt")
    good = dspy.Prediction(**kit.make_answer(task, True), latency_ms=0.0, cost_usd=0.0)
    bad = dspy.Prediction(**kit.make_answer(task, False), latency_ms=30_000.0, cost_usd=0.05)
    return example, good, bad


def _metric_object(name: str) -> Any:
    cls = getattr(lift_metrics, name)
    params = inspect.signature(cls).parameters
    options: dict[str, Any] = {"sandbox": SANDBOX} if "sandbox" in params else {}
    if "embedder" in params:
        options["embedder"] = HashEmbedder()
    return cls(**options)


@pytest.mark.parametrize("name", METRIC_OBJECT_NAMES)
def test_metric_objects_score_in_the_unit_interval_and_deterministically(
    name: str, dspy_case: tuple[Any, Any, Any]
) -> None:
    example, good, bad = dspy_case
    metric = _metric_object(name)
    for prediction in (good, bad):
        score = metric(example, prediction)
        assert type(score) is float
        assert 0.0 <= score <= 1.0
        assert _metric_object(name)(example, prediction) == score  # a fresh object agrees
    # the reference itself: the top score of every part; EndToEnd and Aggregate also weigh
    # latency and cost, which the good prediction has at 0 (Aggregate's weighted sum of
    # ones is 1.0 up to rounding)
    assert metric(example, good) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("name", METRIC_OBJECT_NAMES)
def test_metric_objects_name_a_wrongly_typed_option(name: str) -> None:
    with pytest.raises((TypeError, ValueError), match="threshold"):
        getattr(lift_metrics, name)(threshold="high")
    with pytest.raises((TypeError, ValueError), match="history_size"):
        getattr(lift_metrics, name)(history_size="many")


# --- import cost ------------------------------------------------------------------------------

HEAVY_MODULES = (
    "torch",
    "sentence_transformers",
    "dspy",
    "litellm",
    "transformers",
    "onnxruntime",
    "onnx",
    "ray",
)


IMPORT_STATEMENTS = (
    "import lift_metrics",
    "import lift_metrics.stats",
    "import lift_metrics.sandbox",
    "import lift_metrics.code",
    "import lift_metrics.ir",
    "import lift_metrics.validation",
    "import lift_metrics.optimizers",
    "import lift_metrics.scoring",
    "import lift_metrics.lm",
    "import lift_metrics.judge",
    "from lift_metrics import ir_quality, code_quality, end_to_end, aggregate_metric",
    "import lift_metrics.cli",
    "import lift_metrics.dspy_metrics, lift_metrics.composite, lift_metrics.similarity, "
    "lift_metrics.pricing",
)


def test_import_does_not_load_heavy_dependencies() -> None:
    """Each statement in a fresh interpreter (all at once: an interpreter start-up each)."""
    program = "import sys, json; {}; print(json.dumps(sorted(sys.modules)))"
    children = {
        statement: subprocess.Popen(
            [sys.executable, "-c", program.format(statement)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for statement in IMPORT_STATEMENTS
    }
    heavy_imports = {}
    for statement, child in children.items():
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, f"{statement!r} failed: {err}"
        loaded = set(json.loads(out))
        if heavy := sorted(name for name in HEAVY_MODULES if name in loaded):
            heavy_imports[statement] = heavy
    assert heavy_imports == {}
