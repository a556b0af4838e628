"""Fault injection: every DSPy metric object scores any prediction, never raises for one.

Each hostile prediction below aims at a place a metric object could raise from (a
RecursionError in the result-cache key, an OverflowError on a huge latency, the field listing
of a prediction whose attribute access raises). The contract: score 0 on the affected part,
with the reason recorded, and the same for a failure anywhere else while scoring.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from lift_metrics.dspy_metrics import (
    Aggregate,
    AllTestsPass,
    CodeQuality,
    EndToEnd,
    IRQuality,
    TestPassRate,
    _composite,
    _derived,
)

CODE = 'def add(a: int, b: int) -> int:\n    """Add."""\n    return a + b\n'
IR = {
    "intent": {"description": "Add two integers a and b."},
    "signature": {
        "name": "add",
        "parameters": [{"name": "a", "type_hint": "int"}, {"name": "b", "type_hint": "int"}],
        "return_type": "int",
    },
    "effects": [{"kind": "returns"}],
    "constraints": [{"kind": "pure"}],
}
EXAMPLE = {
    "expected_ir": IR,
    "expected_code": CODE,
    "entry_point": "add",
    "tests": [{"inputs": {"a": 1, "b": 2}, "expected": 3}],
}
GOOD = {"ir": json.dumps(IR), "code": CODE, "latency_ms": 10.0, "cost_usd": 0.0}


class _Parallel:
    """Every text -> the same unit vector (cosine 1), so that no model is loaded."""

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 2)) / np.sqrt(2)


def _metrics(embedder: Any = None) -> dict[str, Callable[[], Any]]:
    toy = _Parallel() if embedder is None else embedder
    return {
        "IRQuality": lambda: IRQuality(embedder=toy),
        "CodeQuality": lambda: CodeQuality(embedder=toy),
        "EndToEnd": lambda: EndToEnd(embedder=toy, latency_field="latency_ms"),
        "Aggregate": lambda: Aggregate(embedder=toy),
        "TestPassRate": TestPassRate,
        "AllTestsPass": AllTestsPass,
    }


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"x": value}
    return value


class _RaisingAttributes:
    """A prediction whose every attribute access raises."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no attribute access here ({name})")


class _RaisingMapping(dict[str, Any]):
    """A mapping prediction whose reads raise."""

    def get(self, *args: Any) -> Any:
        raise RuntimeError("no reads here")

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("no reads here")


HOSTILE: dict[str, Any] = {
    "IR nested 990 deep": dict(GOOD, ir=_nested(990)),
    "latency 10**400": dict(GOOD, latency_ms=10**400, cost_usd=10**400),
    "latency inf": dict(GOOD, latency_ms=math.inf, cost_usd=math.inf),
    "__getattr__ raises": _RaisingAttributes(),
    "mapping reads raise": _RaisingMapping(GOOD),
}
# the parts of each metric a hostile prediction must zero, with a word of the reason
ZEROED = {
    "IR nested 990 deep": ("ir", "prediction.ir"),
    "latency 10**400": ("latency", "too large for a float"),
    "latency inf": ("latency", "not a finite number"),
    "__getattr__ raises": (None, "the prediction has no field"),
    "mapping reads raise": (None, "the prediction has no field"),
}


def _parts(result: Any) -> dict[str, float]:
    """The scored parts of a breakdown, the end-to-end ones included (Aggregate nests them)."""
    parts = dict(result.end_to_end.components) if result.end_to_end is not None else {}
    return {**parts, **result.components}


@pytest.fixture(autouse=True)
def _quiet_part_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.CRITICAL, logger="lift_metrics")


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("name", sorted(_metrics()))
def test_a_hostile_prediction_scores_with_a_reason(name: str, case: str) -> None:
    metric = _metrics()[name]()
    score = metric(EXAMPLE, HOSTILE[case])
    result = metric.history[-1]
    assert isinstance(score, float)
    assert 0.0 <= score <= 1.0
    part, words = ZEROED[case]
    if part is None:  # nothing can be read: every part is 0
        assert score == 0.0
        assert any(words in reason for reason in result.reasons), result.reasons
    elif part in _parts(result):
        assert _parts(result)[part] == 0.0
        assert any(words in reason for reason in result.reasons), result.reasons
    else:  # a part this metric does not score: the rest scores as for a good prediction
        assert score == metric(EXAMPLE, GOOD)
    assert isinstance(metric(EXAMPLE, HOSTILE[case], trace=object()), bool)


@pytest.mark.parametrize("name", sorted(_metrics()))
def test_lone_surrogates_score_as_replacement_characters(name: str) -> None:
    # JSON's "\ud800" in the IR text and in the code: the model's tokenizer refuses such a
    # str (TypeError), which would score the part 0 as if the metric had failed
    from testkit import TokenizingEmbedder

    text_ir = json.dumps(IR).replace("Add two", "Add \\ud800 two")
    broken = dict(GOOD, ir=text_ir, code=CODE.replace('"""Add."""', '"""Add \ud800."""'))
    clean = dict(
        GOOD,
        ir=text_ir.replace("\\ud800", "\ufffd"),
        code=broken["code"].replace("\ud800", "\ufffd"),
    )
    scores = []
    for prediction in (broken, clean):
        metric = _metrics(TokenizingEmbedder())[name]()
        scores.append(metric(EXAMPLE, prediction))
        assert not any("raised" in reason for reason in metric.history[-1].reasons)
    assert scores[0] == scores[1] > 0.5


@pytest.mark.parametrize("name", sorted(_metrics()))
def test_a_failure_outside_the_part_guards_scores_0_with_the_reason(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def overflow(*args: Any, **kwargs: Any) -> Any:
        raise OverflowError("int too large to convert to float")

    metric = _metrics()[name]()
    # the assembly of the parts' scores, outside every per-part guard
    for target in ("_code_reasons", "_number_field", "aggregate_breakdown", "_assemble"):
        monkeypatch.setattr(_composite, target, overflow, raising=False)
    monkeypatch.setattr(type(metric), "_code_reasons", staticmethod(overflow), raising=False)
    monkeypatch.setattr(type(metric), "_score_ir", overflow, raising=False)
    monkeypatch.setattr(_derived, "_tests_verdict", overflow)  # IRQuality's assembly
    assert metric(EXAMPLE, GOOD) == 0.0
    (reason,) = metric.history[-1].reasons
    assert (
        reason
        == "scored 0 because the metric raised OverflowError: int too large to convert to float"
    )
    assert "OverflowError" in metric.feedback(metric.history[-1])


@pytest.mark.parametrize("name", sorted(_metrics()))
def test_an_unusable_example_still_raises(name: str) -> None:
    metric = _metrics()[name]()
    with pytest.raises(ValueError, match="the example has no field"):
        metric({}, GOOD)
