"""The metric objects inside real DSPy: Evaluate, BootstrapFewShot, MIPROv2, COPRO and GEPA.

The program and the scripted ``DummyLM`` come from ``dspy_testkit``; code runs in the real
sandbox (the process-wide default one).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import dspy
import pytest
from dspy_testkit import (
    Program,
    is_good,
    make_answer,
    make_examples,
    make_lm,
    make_task,
)
from testkit import HashEmbedder

from lift_metrics.dspy_metrics import (
    Aggregate,
    CodeQuality,
    EndToEnd,
    IRQuality,
    record_measurement,
)

N = 12


@pytest.fixture
def lm() -> Any:
    return make_lm(N)


@pytest.fixture
def examples() -> list[Any]:
    return make_examples(N)


def test_evaluate_with_threads_matches_sequential_scores(
    lm: Any, examples: list[Any], hash_embedder: HashEmbedder
) -> None:
    metric = EndToEnd(embedder=hash_embedder, cache_size=0)  # sequential scores recomputed
    with dspy.context(lm=lm):
        result = dspy.Evaluate(
            devset=examples, metric=metric, num_threads=4, display_progress=False
        )(Program())
    by_prompt = {example.prompt: score for example, _, score in result.results}
    sequential = {}
    for i, example in enumerate(examples):
        prediction = dspy.Prediction(**make_answer(make_task(i), is_good(i)))
        record_measurement(prediction, latency_ms=1.0)
        sequential[example.prompt] = metric(example, prediction)
    lost = [
        b.reasons
        for b in metric.history
        if b.code is not None
        and b.code.execution is not None
        and b.code.execution.status not in ("passed", "failed")
    ]
    assert lost == [], "the sandbox did not run some tests"
    assert by_prompt == pytest.approx(sequential)
    assert result.score == pytest.approx(100 * sum(sequential.values()) / N, abs=0.01)
    # the wrong-code tasks really score lower: the tests ran in the sandbox
    assert all(sequential[ex.prompt] < 0.8 for i, ex in enumerate(examples) if not is_good(i))
    assert all(sequential[ex.prompt] > 0.9 for i, ex in enumerate(examples) if is_good(i))


def test_bootstrap_few_shot_keeps_only_demos_above_the_threshold(
    lm: Any, examples: list[Any], hash_embedder: HashEmbedder
) -> None:
    metric = EndToEnd(embedder=hash_embedder, threshold=0.9)
    optimizer = dspy.BootstrapFewShot(
        metric=metric, max_bootstrapped_demos=6, max_labeled_demos=0, max_rounds=1
    )
    with dspy.context(lm=lm):
        compiled = optimizer.compile(Program(), trainset=examples[:9])
    demo_prompts = {demo.prompt for demo in compiled.gen.demos}
    good_prompts = {make_task(i)["prompt"] for i in range(9) if is_good(i)}
    assert demo_prompts == good_prompts  # 6 good tasks accepted, 3 wrong-code tasks rejected


def test_mipro_v2_compiles(lm: Any, examples: list[Any], hash_embedder: HashEmbedder) -> None:
    pytest.importorskip("optuna", reason="MIPROv2 needs optuna (lift-metrics[mipro])")
    metric = Aggregate(embedder=hash_embedder, threshold=0.8)
    optimizer = dspy.MIPROv2(
        metric=metric,
        auto=None,
        num_candidates=2,
        num_threads=2,
        max_bootstrapped_demos=2,
        max_labeled_demos=0,
        prompt_model=lm,
        task_model=lm,
        verbose=False,
    )
    with dspy.context(lm=lm):
        compiled = optimizer.compile(
            Program(),
            trainset=examples[:6],
            valset=examples[6:],
            num_trials=2,
            minibatch=False,
            program_aware_proposer=False,
            data_aware_proposer=False,
            tip_aware_proposer=False,
            fewshot_aware_proposer=False,
        )
    assert isinstance(compiled, Program)
    assert len(metric.history) > 0
    assert all(0.0 <= b.score <= 1.0 for b in metric.history)


def test_copro_compiles(lm: Any, examples: list[Any], hash_embedder: HashEmbedder) -> None:
    metric = IRQuality(embedder=hash_embedder)
    optimizer = dspy.COPRO(metric=metric, breadth=2, depth=1, prompt_model=lm)
    with dspy.context(lm=lm):
        compiled = optimizer.compile(
            Program(),
            trainset=examples[:6],
            eval_kwargs={"num_threads": 2, "display_progress": False},
        )
    assert isinstance(compiled, Program)
    assert compiled.gen.signature.instructions  # an instruction was chosen
    assert len(metric.history) >= 6


def test_gepa_compiles_and_its_reflection_sees_our_feedback(
    lm: Any, examples: list[Any], hash_embedder: HashEmbedder
) -> None:
    from dspy.utils import DummyLM

    reflection_lm = DummyLM(
        {"new_instruction": {"new_instruction": "Return a + b, not a - b."}},
        adapter=dspy.JSONAdapter(),
    )
    metric = EndToEnd(embedder=hash_embedder, threshold=0.9)
    optimizer = dspy.GEPA(
        metric=metric,
        max_metric_calls=60,
        reflection_lm=reflection_lm,
        reflection_minibatch_size=3,
        num_threads=2,
        seed=1,
    )
    with dspy.context(lm=lm):
        compiled = optimizer.compile(Program(), trainset=examples[:6], valset=examples[6:])
    assert isinstance(compiled, Program)
    prompts = [
        " ".join(str(message.get("content")) for message in entry["messages"] or [])
        for entry in reflection_lm.history
    ]
    assert prompts, "GEPA never asked the reflection LM"
    seen = "\n".join(prompts)
    assert "Feedback for predictor `gen`" in seen
    # a wrong-code example reached the reflection with the failing call and what it returned,
    # never with the expected value (an answer key the reflection could copy)
    seen = seen.replace('\\"', '"')
    assert re.search(r"add\d\(a=1, b=2\) returned -1", seen)
    assert "expected 3" not in seen


@pytest.mark.slow
def test_sixteen_threads_give_exactly_the_sequential_results() -> None:
    """Real embedder (warmed cache) and real sandbox, all four metric objects, bad inputs too."""
    pytest.importorskip("sentence_transformers")
    classes = [IRQuality, CodeQuality, EndToEnd, Aggregate]
    metrics = [cls(cache_size=0) for cls in classes]  # every call computes everything
    cases: list[tuple[Any, Any]] = []
    for i in range(8):
        task = make_task(i)
        example = dspy.Example(**task).with_inputs("prompt")
        answer = make_answer(task, is_good(i))
        ir = json.loads(answer["ir"])
        ir["intent"] = {"description": f"Return the sum of a and b, case {i}."}
        cases += [
            (example, dspy.Prediction(**answer, latency_ms=10.0 * i, cost_usd=0.01)),
            (
                example,
                dspy.Prediction(ir=ir, code=answer["code"], latency_ms=20_000.0, cost_usd=0.2),
            ),
            (example, dspy.Prediction(ir="not json", code=None)),
            (example, None),
        ]
    jobs = [(metric, example, prediction) for metric in metrics for example, prediction in cases]

    def run(job: tuple[Any, Any, Any]) -> tuple[float, str]:
        metric, example, prediction = job
        return metric(example, prediction), metric(example, prediction, None, "gen", None).feedback

    sequential = [run(job) for job in jobs]
    barrier = threading.Barrier(16)

    def run_after_barrier(job: tuple[Any, Any, Any]) -> tuple[float, str]:
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout=5)  # fewer jobs than threads left: run anyway
        return run(job)

    with ThreadPoolExecutor(max_workers=16) as pool:
        concurrent = list(pool.map(run_after_barrier, jobs * 2))
    assert concurrent == sequential * 2
    # with the result cache on, filled concurrently from cold, then read sequentially
    cached = [cls() for cls in classes]
    cached_jobs = [(m, ex, p) for m in cached for ex, p in cases]
    barrier = threading.Barrier(16)
    with ThreadPoolExecutor(max_workers=16) as pool:
        concurrent = list(pool.map(run_after_barrier, cached_jobs))
    assert concurrent == sequential
    assert [run(job) for job in cached_jobs] == sequential
