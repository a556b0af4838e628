"""Behaviour, not resemblance: variant means over the 64 tasks, and code_quality latency.

For every project task (``datasets/tasks/tasks.jsonl``) the variants of
``tests/code/behaviour_variants.py`` (a correct hand-written rewrite, the reference as dead
code after ``return None``, the reference as comments, the first one-operator bug that fails
a given test, a lookup table of the tests' answers) are scored by ``code_quality`` with the
real sandbox and the bundled embedder, once with ``behaviour=False`` (the score before the
behaviour check) and once with the default (behaviour on):

- without tests (``code_quality(code, reference, [], entry_point=...)``): the mean of each
  variant and on how many tasks the rewrite beats each trick;
- with the tests: the lookup table's ``test_pass_rate`` (given tests only) and its
  ``code_quality`` (which includes the generated inputs).

Then the latency of one warm call: ``code_quality`` with 5 I/O tests and a reference (the
bar: median under 20 ms) and without tests, behaviour on and off, each call on a
prediction not scored before (a distinct top-level assignment ``_CALL = i`` after the function:
the scorers drop comments, so a comment would let the embedding come from the cache), the
reference's outputs cached.

Bars: the rewrite's mean above each trick's without tests; the lookup table's code_quality
mean far below its 0.968 with ``behaviour=False`` (under 0.6 here); the 5-test median under 20 ms.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_behaviour.py [--tasks 16] [--calls 200]``
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

for _name, _value in (
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
):
    os.environ.setdefault(_name, _value)

BAR_MS = 20.0
BAR_LOOKUP = 0.6


def _load(name: str) -> Any:
    path = Path(__file__).resolve().parents[1] / "tests" / "code" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - the file is in the repository
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _median_ms(call: Any, calls: int) -> float:
    samples = []
    for i in range(calls):
        t0 = time.perf_counter()
        call(i)
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def main() -> int:
    """Score the variants and time the calls; return the exit code (1 when a bar is missed)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=64, help="the first N tasks (default 64)")
    parser.add_argument("--calls", type=int, default=200, help="timed calls per latency figure")
    args = parser.parse_args()

    _load("gaming_variants")
    _load("behaviour_rewrites")
    bv = _load("behaviour_variants")
    from lift_metrics.code import code_quality, test_pass_rate
    from lift_metrics.sandbox import get_default_sandbox
    from lift_metrics.similarity import get_default_embedder

    sandbox = get_default_sandbox()
    embedder = get_default_embedder()
    tasks = bv.load_tasks()[: args.tasks]
    names = (*bv.NO_TEST_VARIANTS, "lookup")
    scores: dict[tuple[str, str, str], list[float]] = {}
    wins: dict[tuple[str, str], int] = {}
    start = time.perf_counter()
    for task in tasks:
        made = bv.variants(sandbox, task)
        for mode in ("before", "after"):
            behaviour = mode == "after"
            row = {}
            for name in names:
                if name not in made:
                    continue
                row[name] = code_quality(
                    made[name], task.reference, [], entry_point=task.entry_point,
                    embedder=embedder, behaviour=behaviour,
                )  # fmt: skip
                scores.setdefault((mode, "no tests", name), []).append(row[name])
            for trick in ("dead_code", "comments", "bug", "lookup"):
                if trick in row:
                    key = (mode, trick)
                    wins[key] = wins.get(key, 0) + (row["rewrite"] > row[trick])
            for name in ("rewrite", "lookup"):
                with_tests = code_quality(
                    made[name], task.reference, task.tests, entry_point=task.entry_point,
                    embedder=embedder, behaviour=behaviour,
                )  # fmt: skip
                scores.setdefault((mode, "tests", name), []).append(with_tests)
        rate = test_pass_rate(made["lookup"], task.tests, entry_point=task.entry_point)
        scores.setdefault(("-", "tests", "lookup pass rate"), []).append(rate)
    scored_s = time.perf_counter() - start

    print(f"{len(tasks)} tasks, real sandbox, bundled embedder ({scored_s:.1f} s)")
    print("code_quality without tests (mean; rewrite beats the trick on k of n tasks):")
    for name in names:
        line = f"  {name:<10}"
        for mode in ("before", "after"):
            values = scores.get((mode, "no tests", name), [])
            won = wins.get((mode, name))
            beats = "" if won is None else f" (rewrite wins {won}/{len(values)})"
            line += f"  {mode} {statistics.fmean(values):.3f}{beats:<22}" if values else ""
        print(line)
    print("with the given tests:")
    print(
        "  lookup test_pass_rate (given tests only): "
        f"{statistics.fmean(scores[('-', 'tests', 'lookup pass rate')]):.3f}"
    )
    for name in ("rewrite", "lookup"):
        before = statistics.fmean(scores[("before", "tests", name)])
        after = statistics.fmean(scores[("after", "tests", name)])
        print(f"  {name} code_quality: before {before:.3f}  after (with behaviour) {after:.3f}")

    task = next(t for t in tasks if len(t.tests) >= 5) if tasks else None
    median_tests = median_none = median_off = float("nan")
    if task is not None:
        rewrite = bv.rewrite(task)
        tests5 = task.tests[:5]

        def scored(i: int, tests: Any, behaviour: bool = True) -> float:
            code = f"{rewrite.rstrip()}\n_CALL = {i}\n"
            return code_quality(
                code, task.reference, tests, entry_point=task.entry_point,
                embedder=embedder, behaviour=behaviour,
            )  # fmt: skip

        for i in range(20):  # warm the workers, the model and the reference's outputs
            scored(-i - 1, tests5)
            scored(-i - 1, [])
        median_tests = _median_ms(lambda i: scored(i, tests5), args.calls)
        median_none = _median_ms(lambda i: scored(i + 10**6, []), args.calls)
        median_off = _median_ms(lambda i: scored(i + 2 * 10**6, tests5, False), args.calls)
        print(f"latency ({task.task_id} {task.entry_point}, {args.calls} calls, medians):")
        print(f"  code_quality, 5 I/O tests + reference, behaviour on:  {median_tests:6.2f} ms")
        print(f"  code_quality, 5 I/O tests + reference, behaviour off: {median_off:6.2f} ms")
        print(f"  code_quality, no tests, behaviour on:                 {median_none:6.2f} ms")

    after = {n: statistics.fmean(scores[("after", "no tests", n)]) for n in bv.NO_TEST_VARIANTS}
    tricks_ok = all(after["rewrite"] > after[n] for n in ("dead_code", "comments", "bug"))
    lookup_ok = statistics.fmean(scores[("after", "tests", "lookup")]) < BAR_LOOKUP
    latency_ok = median_tests < BAR_MS
    print(f"bar: rewrite above dead code, comments and bug without tests -> {tricks_ok}")
    print(f"bar: lookup table's code_quality with tests < {BAR_LOOKUP} -> {lookup_ok}")
    print(f"bar: 5-test median < {BAR_MS:.0f} ms -> {median_tests:.2f} ms {latency_ok}")
    return 0 if tricks_ok and lookup_ok and latency_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
