"""Sandbox server loop: the compiled loop (``_native.c``) against the same loop in Python.

Run: ``.venv/bin/python benchmarks/bench_native_loop.py`` (``--runs 500`` for a quick look).

Each round starts one sandbox per loop (``LIFT_METRICS_SANDBOX_NATIVE=1`` and ``=0``, the
documented switch), warms it up, then measures on the same trivial passing function:

* latency: one client thread, one execution at a time (median and p90 per execution, ms);
* throughput: as many client threads as workers, executions per second;
* the workers' CPU time per execution (server and children, over all of the above).

The loops alternate between rounds (native, python, python, native, ...) so that a change in
the machine's load falls on both; the figures reported are the medians over the rounds, and
the median of the rounds' own throughput ratios. The load average is printed first: the
figures are only comparable on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import bench_sandbox  # the same function, tests and multi-threaded throughput loop

from lift_metrics.sandbox import Sandbox

CODE, TESTS = bench_sandbox.CODE, bench_sandbox.TESTS


def one(box: Sandbox) -> None:
    """Run one passing execution in ``box``."""
    result = box.run_tests(CODE, TESTS, entry_point="add")
    if result.status != "passed":
        raise RuntimeError(f"execution did not pass: {result.status} {result.reason}")


def latencies_ms(box: Sandbox, runs: int) -> list[float]:
    """Return the wall time of ``runs`` executions made one after the other, in ms."""
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        one(box)
        out.append((time.perf_counter() - start) * 1000)
    return out


def throughput(box: Sandbox, runs: int, threads: int) -> float:
    """Return executions per second of ``runs`` executions spread over ``threads`` threads."""
    return bench_sandbox.throughput(lambda: one(box) is None, runs, threads)


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].decode().split()


def _server_pids() -> list[int]:
    """Return the sandbox servers under this process.

    They are the top-most processes whose command line runs the worker bootstrap (a forked
    child has the same command line).
    """
    parent: dict[int, int] = {}
    servers = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or (fields := _stat(int(name))) is None:
            continue
        parent[int(name)] = int(fields[1])
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        program = os.path.basename(cmdline.split(b"\0", 1)[0])
        if b"lift_sandbox_worker" in cmdline and program != b"bwrap":
            servers.add(int(name))

    def mine(pid: int) -> bool:
        while pid > 1:
            pid = parent.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return [pid for pid in servers if parent.get(pid) not in servers and mine(pid)]


def _servers_cpu_s(pids: list[int]) -> float:
    """CPU time of the servers and of their reaped children (utime, stime, cutime, cstime)."""
    ticks = 0
    for pid in pids:
        fields = _stat(pid)
        if fields is not None:
            ticks += sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def measure(native: bool, runs: int, workers: int) -> dict[str, Any]:
    """Measure one sandbox with the given loop.

    Return latency, throughput, and the servers' CPU time (with their children's) per
    execution, which hardly depends on the machine's load.
    """
    os.environ["LIFT_METRICS_SANDBOX_NATIVE"] = "1" if native else "0"
    with Sandbox(workers=workers, timeout_s=5.0) as box:
        if box.native != native:
            raise SystemExit(f"asked for native={native}, the sandbox runs native={box.native}")
        latencies_ms(box, 50)  # warm-up; starts every worker
        pids = _server_pids()
        cpu_before = _servers_cpu_s(pids)
        lat = sorted(latencies_ms(box, runs))
        rate = throughput(box, runs, workers)
        cpu_ms = (_servers_cpu_s(pids) - cpu_before) * 1000 / (2 * runs)
        return {
            "isolation": box.isolation,
            "median_ms": statistics.median(lat),
            "p90_ms": lat[int(0.9 * (len(lat) - 1))],
            "per_s": rate,
            "worker_cpu_ms": cpu_ms,
        }


def main() -> None:
    """Compare the compiled and the Python server loop, in both orders."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="executions per measurement")
    parser.add_argument("--rounds", type=int, default=4, help="rounds (even: both orders)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}; cpus: {os.cpu_count()}")
    results: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for index in range(args.rounds):
        order = (True, False) if index % 2 == 0 else (False, True)
        for native in order:
            row = measure(native, args.runs, args.workers)
            results[native].append(row)
            name = "native" if native else "python"
            print(
                f"round {index} {name:6} ({row['isolation']}): latency median "
                f"{row['median_ms']:.3f} ms, p90 {row['p90_ms']:.3f} ms; "
                f"throughput {row['per_s']:.0f}/s; workers' CPU {row['worker_cpu_ms']:.3f} ms "
                "per execution",
                flush=True,
            )
    summary = {}
    for native, rows in results.items():
        summary[native] = {
            key: statistics.median([row[key] for row in rows])
            for key in ("median_ms", "p90_ms", "per_s", "worker_cpu_ms")
        }
    for native in (True, False):
        row = summary[native]
        name = "native" if native else "python"
        print(
            f"{name:6}: latency median {row['median_ms']:.3f} ms, p90 {row['p90_ms']:.3f} ms; "
            f"throughput {row['per_s']:.0f}/s; workers' CPU {row['worker_cpu_ms']:.3f} ms per "
            f"execution (medians over {args.rounds} rounds)"
        )
    gain = summary[True]["per_s"] / summary[False]["per_s"] - 1
    saved = 1 - summary[True]["median_ms"] / summary[False]["median_ms"]
    cpu = summary[True]["worker_cpu_ms"] / summary[False]["worker_cpu_ms"] - 1
    print(
        f"compiled loop: throughput {gain:+.1%}, median latency {-saved:+.1%}, "
        f"workers' CPU per execution {cpu:+.1%}"
    )
    # each round's own ratio: the two loops of a round ran back to back, under the same load
    ratios = [n["per_s"] / p["per_s"] for n, p in zip(results[True], results[False], strict=True)]
    print(
        f"per-round throughput ratios: {', '.join(f'{r:.2f}' for r in ratios)}; "
        f"median {statistics.median(ratios) - 1:+.1%}"
    )


if __name__ == "__main__":
    main()
