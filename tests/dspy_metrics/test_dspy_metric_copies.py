"""The metric objects survive pickle, copy.deepcopy and a spawn process pool.

The metrics here need no neural model: the IR metric gives intent similarity weight 0 and
the code metric scores ``structural`` (AST) instead of ``semantic``, so that a copy in a
fresh process scores exactly what the original scores.
"""

from __future__ import annotations

import copy
import json
import multiprocessing
import pickle
from typing import Any

import pytest
from dspy_testkit import make_task

from lift_metrics.dspy_metrics import (
    Aggregate,
    AllTestsPass,
    CodeQuality,
    EndToEnd,
    IRQuality,
    TestPassRate,
)
from lift_metrics.sandbox import Sandbox
from lift_metrics.similarity import SentenceTransformerEmbedder, get_default_embedder

NO_INTENT = {"intent": 0, "signature": 0.3, "structure": 0.2, "constraints": 0.2}
STRUCTURAL = {"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1, "structural": 0.3}
TASKS = [make_task(i) for i in range(3)]


def _pairs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Three tasks, each with a right, a wrong and a broken answer (plain dicts: picklable)."""
    pairs = []
    for task in TASKS:
        wrong = task["expected_code"].replace("a + b", "a - b")
        ir = json.loads(json.dumps(task["expected_ir"]))
        ir["signature"]["name"] = "other"
        for answer in (
            {"ir": json.dumps(task["expected_ir"]), "code": task["expected_code"]},
            {"ir": ir, "code": wrong},
            {"ir": "not an IR", "code": None},
        ):
            pairs.append((task, {**answer, "latency_ms": 20_000.0, "cost_usd": 0.02}))
    return pairs


def _metrics() -> list[Any]:
    code = {"code_profile": "seed", "code_weights": STRUCTURAL}
    return [
        IRQuality(weights=NO_INTENT, threshold=0.7, history_size=5, cache_size=7),
        CodeQuality(profile="seed", weights=STRUCTURAL, threshold=0.6),
        EndToEnd(ir_weights=NO_INTENT, weights={"ir": 0.3, "code": 0.6, "latency": 0.1}, **code),
        Aggregate(ir_weights=NO_INTENT, cost_ceiling_usd=0.05, **code),
        TestPassRate(threshold=0.5),
        AllTestsPass(),
    ]


METRIC_IDS = [type(m).__name__ for m in _metrics()]


def _scores(metric: Any) -> list[float]:
    return [metric(example, prediction) for example, prediction in _pairs()]


@pytest.mark.parametrize("index", range(len(METRIC_IDS)), ids=METRIC_IDS)
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_copy_keeps_the_configuration_and_scores_the_same(index: int, how: str) -> None:
    metric = _metrics()[index]
    expected = _scores(metric)
    assert len(set(expected)) > 1, "the examples must tell the metrics apart"
    clone = pickle.loads(pickle.dumps(metric)) if how == "pickle" else copy.deepcopy(metric)
    assert type(clone) is type(metric)
    assert clone.history == ()  # the history and the cache are not copied
    assert len(clone._cache) == 0
    assert repr(clone) == repr(metric)
    for name in ("threshold", "weights", "ir_weights", "code_weights", "aggregate_weights"):
        assert getattr(clone, name, None) == getattr(metric, name, None), name
    assert clone._history.maxlen == metric._history.maxlen
    assert clone._cache.size == metric._cache.size
    assert _scores(clone) == expected
    bools = [clone(e, p, trace=[]) for e, p in _pairs()]
    assert bools == [score >= metric.threshold for score in expected]
    assert len(clone.history) == min(2 * len(expected), clone._history.maxlen)


def test_a_copy_keeps_a_calibrated_profile_and_its_options() -> None:
    metric = EndToEnd(ir_profile="shipped", code_profile="shipped")
    for clone in (pickle.loads(pickle.dumps(metric)), copy.deepcopy(metric)):
        assert dict(clone.ir_options) == dict(metric.ir_options) == {"similarity_floor": 0.44}
        assert dict(clone.code_options) == dict(metric.code_options)
        assert clone.code_quality_options == metric.code_quality_options
        assert clone.ir_profile == metric.ir_profile
        with pytest.raises(TypeError):  # still read-only
            clone.ir_options["similarity_floor"] = 0.0  # type: ignore[index]


def test_deepcopy_shares_the_sandbox_and_pickle_carries_its_settings() -> None:
    example, prediction = TASKS[0], {"code": "def add0(a, b):\n    return 3\n"}  # 1 of 2
    with Sandbox(workers=1, timeout_s=3.0, memory_mb=256, importable=["numpy"]) as box:
        metric = TestPassRate(sandbox=box)
        assert copy.deepcopy(metric).sandbox is box
        clone = pickle.loads(pickle.dumps(metric))
        assert clone.sandbox is None  # its own pool is started on first use
        assert clone(example, prediction) == metric(example, prediction) == 0.5
        started = clone.sandbox
        assert isinstance(started, Sandbox)
        assert started is not box
        settings = (started.workers, started.timeout_s, started.memory_mb, started.isolation)
        assert settings == (1, 3.0, 256, box.isolation)
        assert started.importable == ("numpy",)
        started.close()


@pytest.mark.slow
def test_metrics_score_in_a_spawn_process_pool() -> None:
    pairs = _pairs()
    metrics = _metrics()
    expected = [_scores(metric) for metric in metrics]
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        got = [pool.starmap(metric, pairs) for metric in metrics]
    assert got == expected


def test_pickle_carries_the_bundled_embedders_settings_not_its_model() -> None:
    own = SentenceTransformerEmbedder(batch_size=4, cache_size=9, backend="torch")
    clone = pickle.loads(pickle.dumps(IRQuality(embedder=own)))
    copied = clone.embedder
    assert isinstance(copied, SentenceTransformerEmbedder)
    assert copied is not own
    assert (copied.model_name, copied.batch_size, copied.cache_size, copied.backend) == (
        own.model_name,
        4,
        9,
        "torch",
    )
    assert copied.active_backend is None  # not loaded: the model loads on first use
    shared = EndToEnd(embedder=get_default_embedder())
    assert pickle.loads(pickle.dumps(shared)).embedder is get_default_embedder()
    assert copy.deepcopy(shared).embedder is get_default_embedder()
