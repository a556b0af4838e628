"""evaluate_program: timeouts, N runs, failures, usage, budget stops and the files it writes."""

from __future__ import annotations

import itertools
import json
import statistics
import threading
import time
import warnings
from pathlib import Path

import dspy
import pytest
from optimizers_testkit import pipeline_lm

from lift_metrics._usage import Budget, BudgetExceeded, UsageMeter, budget_callback
from lift_metrics.optimizers._evaluate import evaluate_program, save_evaluation
from lift_metrics.optimizers._pipeline import LiftPipeline


def examples(n: int) -> list[dspy.Example]:
    return [
        dspy.Example(prompt=f"p{i}", answer=f"P{i}", task_id=f"t{i}").with_inputs("prompt")
        for i in range(n)
    ]


def exact(example: dspy.Example, prediction: dspy.Prediction) -> float:
    return float(example.answer == prediction.answer)


class Upper(dspy.Module):
    def forward(self, prompt: str) -> dspy.Prediction:
        return dspy.Prediction(answer=prompt.upper())


class SleepsOn(dspy.Module):
    """Answers at once, except for the prompts listed, where it sleeps first."""

    def __init__(self, slow: set[str], seconds: float) -> None:
        super().__init__()
        self.slow, self.seconds = slow, seconds
        self.release = threading.Event()

    def forward(self, prompt: str) -> dspy.Prediction:
        if prompt in self.slow:
            self.release.wait(self.seconds)
        return dspy.Prediction(answer=prompt.upper())


def test_scores_latency_and_summary_statistics() -> None:
    ev = evaluate_program(Upper(), examples(3), metrics={"exact": exact})
    assert ev.scores == [1.0, 1.0, 1.0]
    assert ev.mean_score == 1.0
    assert ev.timed_out_count == 0
    assert ev.complete
    assert all(r.latency_ms >= 0 for r in ev.runs[0])
    assert [e.task_id for e in ev.examples] == ["t0", "t1", "t2"]


def test_a_timed_out_example_scores_zero_and_the_run_goes_on() -> None:
    program = SleepsOn({"p1"}, seconds=30.0)
    started = time.perf_counter()
    try:
        ev = evaluate_program(program, examples(3), metrics={"exact": exact}, timeout_s=0.3)
    finally:
        program.release.set()  # let the abandoned thread finish
    assert time.perf_counter() - started < 10  # did not wait the 30 s
    flags = [r.timed_out for r in ev.runs[0]]
    assert flags == [False, True, False]
    assert ev.scores == [1.0, 0.0, 1.0]
    assert ev.runs[0][1].error == "timed out"
    assert ev.timed_out_count == 1


def test_timeouts_with_several_threads_keep_example_order() -> None:
    program = SleepsOn({"p0", "p3"}, seconds=30.0)
    try:
        ev = evaluate_program(
            program, examples(5), metrics={"exact": exact}, timeout_s=0.3, num_threads=3
        )
    finally:
        program.release.set()
    assert ev.scores == [0.0, 1.0, 1.0, 0.0, 1.0]


def test_runs_give_per_example_mean_and_population_std() -> None:
    counter = itertools.count()

    class Flaky(dspy.Module):
        def forward(self, prompt: str) -> dspy.Prediction:
            # example t0 is right in runs 0 and 2, wrong in run 1; t1 always right
            call = next(counter)
            wrong = prompt == "p0" and call in (2,)
            return dspy.Prediction(answer="?" if wrong else prompt.upper())

    ev = evaluate_program(Flaky(), examples(2), metrics={"exact": exact}, runs=3)
    assert len(ev.runs) == 3
    t0 = ev.examples[0]
    assert t0.mean_scores["exact"] == pytest.approx(2 / 3)
    assert t0.std_scores["exact"] == pytest.approx(statistics.pstdev([1.0, 0.0, 1.0]))
    assert ev.examples[1].std_scores["exact"] == 0.0
    assert ev.mean_score == pytest.approx((2 / 3 + 1) / 2)


def test_a_raising_program_or_metric_scores_zero_with_the_reason() -> None:
    class Boom(dspy.Module):
        def forward(self, prompt: str) -> dspy.Prediction:
            if prompt == "p0":
                raise RuntimeError("kaput")
            return dspy.Prediction(answer=prompt.upper())

    def picky(example: dspy.Example, prediction: dspy.Prediction) -> float:
        if example.task_id == "t2":
            raise KeyError("missing")
        return 1.0

    ev = evaluate_program(Boom(), examples(3), metrics={"exact": exact, "picky": picky})
    first, _, third = ev.runs[0]
    assert first.scores == {"exact": 0.0, "picky": 0.0}
    assert first.error == "RuntimeError: kaput"
    assert third.scores == {"exact": 1.0, "picky": 0.0}
    assert third.error is not None
    assert "metric picky" in third.error


def test_metric_returning_prediction_or_bool_is_read_as_a_score() -> None:
    metrics = {
        "pred": lambda ex, p: dspy.Prediction(score=0.25, feedback="x"),
        "flag": lambda ex, p: True,
    }
    ev = evaluate_program(Upper(), examples(1), metrics=metrics)
    assert ev.runs[0][0].scores == {"pred": 0.25, "flag": 1.0}


def test_a_score_that_is_not_a_number_is_recorded_as_an_error_not_a_quiet_zero() -> None:
    metrics = {
        "nan": lambda ex, p: float("nan"),
        "none": lambda ex, p: None,
        "text": lambda ex, p: "0.9",
        "fine": lambda ex, p: 0.5,
    }
    for name in ("nan", "none", "text"):
        chosen = {name: metrics[name], "fine": metrics["fine"]}
        ev = evaluate_program(Upper(), examples(1), metrics=chosen)
        result = ev.runs[0][0]
        assert result.scores == {name: 0.0, "fine": 0.5}
        assert result.error is not None
        assert result.error.startswith(f"metric {name}: ")
        assert "the metric returned" in result.error


def test_usage_is_recorded_per_example_through_dspy_threads() -> None:
    ir = {"intent": {"description": "d"}, "signature": {"name": "f", "parameters": []}}
    lm = pipeline_lm(ir, "    return 1")
    meter = UsageMeter()
    with dspy.context(lm=lm, usage_tracker=meter):
        ev = evaluate_program(
            LiftPipeline(), examples(4), metrics={"one": lambda ex, p: 1.0}, num_threads=2
        )
    assert [r.lm_calls for r in ev.runs[0]] == [2, 2, 2, 2]
    assert meter.totals().lm_calls == 8  # the run-level meter saw every thread's calls
    assert ev.runs[0][0].outputs["code"] == "def f():\n    return 1\n"


def test_budget_stop_returns_the_finished_examples() -> None:
    lm = pipeline_lm({"intent": {"description": "d"}, "signature": {"name": "f"}}, "y")
    meter = UsageMeter(Budget(max_lm_calls=5))
    with (
        dspy.context(lm=lm, usage_tracker=meter, callbacks=[budget_callback(meter)]),
        pytest.raises(BudgetExceeded) as info,
    ):
        evaluate_program(LiftPipeline(), examples(4), metrics={"one": lambda ex, p: 1.0})
    partial = info.value.partial
    assert not partial.complete
    assert "5 LM calls" in partial.stop_reason
    assert [e.task_id for e in partial.examples] == ["t0", "t1"]  # 2 calls each; t2 cut
    assert meter.totals().lm_calls == 5


class RecordsRollout(dspy.Module):
    """Records the rollout id of the LM each call runs with (DSPy's cache key includes it)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[object] = []

    def forward(self, prompt: str) -> dspy.Prediction:
        self.seen.append(dspy.settings.lm.kwargs.get("rollout_id"))
        return dspy.Prediction(answer=prompt.upper())


def test_each_arm_and_run_has_its_own_rollout_so_no_arm_reads_anothers_cache() -> None:
    lm = pipeline_lm({"intent": {"description": "d"}, "signature": {"name": "f"}}, "y")
    seen = {}
    for arm in (0, 1, 3):
        program = RecordsRollout()
        with dspy.context(lm=lm), warnings.catch_warnings():
            warnings.simplefilter("error")  # no "rollout_id has no effect" warning either
            evaluate_program(program, examples(2), metrics={"e": exact}, runs=2, arm=arm)
        seen[arm] = program.seen
    assert seen == {
        0: [None, None, 1, 1],
        1: [1000, 1000, 1001, 1001],
        3: [3000, 3000, 3001, 3001],
    }
    assert lm.kwargs.get("rollout_id") is None  # the configured LM itself is left as it was
    with pytest.raises(ValueError, match="arm"):
        evaluate_program(Upper(), examples(1), metrics={"e": exact}, arm=-1)


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="metrics"):
        evaluate_program(Upper(), examples(1), metrics={})
    with pytest.raises(ValueError, match="timeout_s"):
        evaluate_program(Upper(), examples(1), metrics={"e": exact}, timeout_s=0)
    with pytest.raises(ValueError, match="runs"):
        evaluate_program(Upper(), examples(1), metrics={"e": exact}, runs=0)
    with pytest.raises(ValueError, match="examples must not be empty"):
        evaluate_program(Upper(), [], metrics={"e": exact})


def test_runs_has_an_upper_bound_checked_before_any_run() -> None:
    def never(**inputs: object) -> object:
        pytest.fail("the program ran")  # an OutcomeException: evaluate_program cannot catch it

    with pytest.raises(ValueError, match="runs must be <= 1,000, got 1,000,001"):
        evaluate_program(never, examples(1), metrics={"e": exact}, runs=1_000_001)


@pytest.mark.slow
def test_saved_files_one_per_run_plus_aggregate_and_report(tmp_path: Path) -> None:
    program = SleepsOn({"p1"}, seconds=30.0)
    try:
        ev = evaluate_program(program, examples(2), metrics={"exact": exact}, runs=2, timeout_s=0.3)
    finally:
        program.release.set()
    paths = save_evaluation(ev, tmp_path, stem="base", provenance={"seed": 3})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)
    assert sorted(p.name for p in paths) == [
        "base.json",
        "base.md",
        "base_run1.json",
        "base_run2.json",
    ]
    aggregate = json.loads((tmp_path / "base.json").read_text())
    assert aggregate["provenance"] == {"seed": 3}
    assert aggregate["timed_out"] == 2
    assert aggregate["examples"][1]["mean_scores"] == {"exact": 0.0}
    run1 = json.loads((tmp_path / "base_run1.json").read_text())
    assert run1["examples"][1]["timed_out"] is True
    assert run1["examples"][1]["latency_ms"] is None  # inf is written as null ...
    assert run1["examples"][1]["latency_ms_is_infinite"] is True  # ... with a flag
    report = (tmp_path / "base.md").read_text()
    assert "| t1 | 0 ± 0.000 |" in report
