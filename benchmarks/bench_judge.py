"""What a forged result stream costs the trusted parent that judges it.

Run: ``.venv/bin/python benchmarks/bench_judge.py``

The code under test takes the execution's nonce from the harness and writes its own frames on
the result pipe, then leaves. For each stream the script prints the parent's CPU time for the
whole ``run_tests`` call (every thread of this process; nothing else runs here), its wall time,
and the longest pause of a thread that wakes every millisecond meanwhile (how long judging
held the GIL at a stretch):

1. one case frame of 8 MiB (the most a result pipe carries) holding 1.4 million ``["N"]``
   nodes, against a 2 s deadline: refused by its length, unparsed;
2. one case frame at the bound the parent parses (``MAX_FRAME_BYTES``, just over the 1 MB an
   honest value may take), of the same nodes: the most one frame costs to judge;
3. eight frames of 1 MiB, one per case of an 8-case execution: the most JSON an honest child
   can make the parent judge (eight cases may each return a 1 MB value; a result pipe carries
   8 MiB).

Bar: the 8 MiB frame costs the parent under 0.1 CPU-s and ends within its deadline + 1 s.
Exit code 1 when the bar is missed.
"""

from __future__ import annotations

import sys
import threading
import time

from lift_metrics.sandbox import Sandbox
from lift_metrics.sandbox._worker import MAX_FRAME_BYTES, MAX_RESULT_BYTES

FORGE = """
import os, sys
def f(i, cases, nodes):
    if i:
        return None
    frame = sys._getframe()
    while frame is not None and 'nonce' not in frame.f_locals:
        frame = frame.f_back
    nonce = frame.f_locals['nonce']
    value = '["l",[' + ','.join(['["N"]'] * nodes) + ']]'
    out = b''
    for case in range(cases):
        data = ('{"k":"case","i":%d,"n":"%s","v":%s}' % (case, nonce, value)).encode()
        out += len(data).to_bytes(4, 'big') + data
    data = ('{"k":"done","n":"%s"}' % nonce).encode()
    os.write(3, out + len(data).to_bytes(4, 'big') + data)
    os._exit(0)
"""
DEADLINE_S = 2.0
BAR_CPU_S = 0.1


def nodes_for(size: int) -> int:
    """Return how many ``["N"]`` nodes make a case frame of about ``size`` bytes."""
    return (size - 100) // 6


def measure(box: Sandbox, nodes: int, cases: int) -> tuple[float, float, float, str]:
    """Return (parent CPU s, wall s, longest pause of another thread in s, verdict)."""
    stop = threading.Event()
    longest = [0.0]

    def tick() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            longest[0] = max(longest[0], now - last)
            last = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    tests = [({"i": i, "cases": cases, "nodes": nodes}, None) for i in range(cases)]
    cpu, wall = time.process_time(), time.perf_counter()
    result = box.run_tests(FORGE, tests, timeout_s=DEADLINE_S)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    stop.set()
    ticker.join()
    return cpu, wall, longest[0], f"{result.status}: {result.reason[:60]}"


def main() -> int:
    """Time the three forged streams; return the exit code."""
    ok = True
    with Sandbox(workers=1, timeout_s=DEADLINE_S) as box:
        box.run_tests("def f():\n    return 1\n", [({}, 1)])  # warm up
        rows = [
            ("8 MiB frame, 1 case", nodes_for(MAX_RESULT_BYTES - 4096), 1),
            (f"{MAX_FRAME_BYTES:,}-byte frame, 1 case", nodes_for(MAX_FRAME_BYTES), 1),
            ("8 frames of 1 MiB, 8 cases", nodes_for((MAX_RESULT_BYTES - 4096) // 8), 8),
        ]
        print(f"sandbox: {box!r}; deadline {DEADLINE_S:g} s")
        print(f"  {'stream':34s} {'parent CPU':>10s} {'wall':>7s} {'longest pause':>14s}  verdict")
        for label, nodes, cases in rows:
            cpu, wall, pause, verdict = measure(box, nodes, cases)
            print(f"  {label:34s} {cpu:9.3f}s {wall:6.2f}s {pause:13.3f}s  {verdict}")
            if label.startswith("8 MiB"):
                ok &= cpu < BAR_CPU_S and wall < DEADLINE_S + 1.0 and "tampered" in verdict
    print(
        f"bar: the 8 MiB frame under {BAR_CPU_S} CPU-s and within the deadline + 1 s: "
        + ("met" if ok else "MISSED")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
