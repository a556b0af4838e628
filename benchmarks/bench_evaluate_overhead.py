"""Share of dspy.Evaluate's wall time spent in the EndToEnd metric (8 threads, 200 examples).

Bar: metric time under 10% of the evaluation's wall time.

Set-up: the 64 tasks of ``datasets/tasks/tasks.jsonl`` cycled to 200 examples; a one-predictor
program (prompt -> ir, code) answered by ``dspy.utils.DummyLM`` with the expected IR and code,
except every third task, which gets a wrong-typed IR and code that fails its tests. The metric
is ``EndToEnd()`` with its defaults: the real embedder and the real sandbox (model loaded and
sandbox workers started before timing).

Three evaluations are timed: a first one (the metric's result cache is empty: every code
part runs its tests in the sandbox), one with the result cache disabled, and a repeated one
(the same outputs scored again, as in optimizer runs, where DSPy's LM cache makes outputs
repeat; the metric then skips the parts it has already scored). The bar is checked on the
first (cold) evaluation, every code part run in the sandbox; the warm figure is printed for
information. With a DummyLM program that answers in well under a millisecond, the cold
evaluation cannot meet the bar: one sandbox execution alone takes about 2 ms.

The DummyLM answers in microseconds, so this is a worst case for the metric's share: with a
real LM every example takes seconds and the share shrinks accordingly. Two figures are printed:

* ``metric share`` - summed time inside metric calls / (threads * wall time): the fraction of
  the worker threads' time the metric used (the bar);
* ``wall overhead`` - (wall with EndToEnd - wall with a constant metric) / wall with EndToEnd.

Run: ``.venv/bin/python benchmarks/bench_evaluate_overhead.py [--examples 200] [--threads 8]``
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

BAR = 0.10
ROOT = Path(__file__).resolve().parents[1]


class TimedMetric:
    """Wraps a metric and sums the time spent inside it (thread-safe)."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric
        self.total_s = 0.0
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, example: Any, prediction: Any, trace: Any = None) -> Any:
        """Call the metric and add its time to ``total_s``."""
        start = time.perf_counter()
        try:
            return self.metric(example, prediction, trace)
        finally:
            elapsed = time.perf_counter() - start
            with self._lock:
                self.total_s += elapsed
                self.calls += 1


def main() -> int:
    """Measure the EndToEnd metric's share of dspy.Evaluate's wall time; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

    import dspy
    from dspy.utils import DummyLM

    from lift_metrics.dspy_metrics import EndToEnd, record_measurement

    tasks = [json.loads(line) for line in (ROOT / "datasets/tasks/tasks.jsonl").open()]
    answers: dict[str, dict[str, str]] = {}
    for i, task in enumerate(tasks):
        ir = dict(task["expected_ir"])
        code = task["expected_code"]
        if i % 3 == 0:  # a wrong answer: other return type, a body that fails the tests
            ir["signature"] = {**ir["signature"], "return_type": "str"}
            code = code.split(":\n", 1)[0] + ":\n    return None\n"
        answers[task["prompt"]] = {"ir": json.dumps(ir), "code": code}
    examples = [
        dspy.Example(**tasks[i % len(tasks)]).with_inputs("prompt") for i in range(args.examples)
    ]

    class Gen(dspy.Signature):
        """Write the IR and the Python code for the request."""

        prompt: str = dspy.InputField()
        ir: str = dspy.OutputField()
        code: str = dspy.OutputField()

    class Program(dspy.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gen = dspy.Predict(Gen)

        def forward(self, prompt: str) -> Any:
            start = time.perf_counter()
            out = self.gen(prompt=prompt)
            latency_ms = (time.perf_counter() - start) * 1000
            prediction = dspy.Prediction(ir=out.ir, code=out.code)
            record_measurement(prediction, latency_ms=latency_ms)  # what EndToEnd reads
            return prediction

    def evaluate(metric: Any) -> tuple[float, float]:
        with dspy.context(lm=DummyLM(answers)):
            evaluator = dspy.Evaluate(
                devset=examples, metric=metric, num_threads=args.threads, display_progress=False
            )
            start = time.perf_counter()
            result = evaluator(Program())
            return time.perf_counter() - start, result.score

    from lift_metrics.sandbox import get_default_sandbox
    from lift_metrics.similarity import get_default_embedder

    get_default_embedder().embed(["warm up"])  # load the model outside the timings
    get_default_sandbox()
    wall_constant, _ = evaluate(lambda example, prediction, trace=None: 1.0)
    print(f"examples {args.examples}, threads {args.threads}")
    print(f"wall with a constant metric {wall_constant:.3f} s")
    shares = {}
    for label, metric in (
        ("first evaluation (cold result cache)", EndToEnd()),
        ("no result cache (cache_size=0), warm embeddings", EndToEnd(cache_size=0)),
    ):
        timed = TimedMetric(metric)
        wall, score = evaluate(timed)
        shares[label] = _report(label, timed, wall, wall_constant, args.threads, score)
    e2e = EndToEnd()
    evaluate(e2e)  # an optimizer evaluates the same outputs again: the result cache is warm
    timed = TimedMetric(e2e)
    wall, score = evaluate(timed)
    share = _report(
        "repeated evaluation (warm result cache)", timed, wall, wall_constant, args.threads, score
    )
    cold = shares["first evaluation (cold result cache)"]
    verdict = "PASS" if cold < BAR else "FAIL"
    print(
        f"bar: metric share < {BAR:.0%} on the first evaluation -> {cold:.1%}: {verdict} "
        f"(repeated evaluation, warm cache: {share:.1%})"
    )
    return 0 if cold < BAR else 1


def _report(
    label: str, timed: TimedMetric, wall: float, wall_constant: float, threads: int, score: float
) -> float:
    share = timed.total_s / (threads * wall)
    overhead = (wall - wall_constant) / wall
    per_call_ms = 1000 * timed.total_s / max(timed.calls, 1)
    print(
        f"{label}: score {score:.1f}%, wall {wall:.3f} s, {timed.calls} calls, "
        f"{per_call_ms:.2f} ms per call; metric share {share:.1%}, wall overhead {overhead:.1%}"
    )
    return share


if __name__ == "__main__":
    raise SystemExit(main())
