"""Stress: many short-lived threads running small executions on a busy machine.

A worker started (or restarted) from a short-lived thread, such as one of a threaded
``dspy.Evaluate``'s, would be SIGKILLed when that *thread* exits: bwrap's
``--die-with-parent`` and the server's own ``PR_SET_PDEATHSIG`` fire on the exit of the
creating thread, not of the process. An execution that another thread was running on that
worker would then lose its server, and a benign ``add1`` come back ``crashed``. Python's
``Thread.join()`` returns before the OS thread is gone, so even the first sequential call
after the pool has been joined could pass the ``alive()`` check and then lose its worker.
Every worker is therefore started from one long-lived daemon thread
(``_worker_client._spawn``).

The test recreates the conditions: the sandbox is created in a short-lived thread, workers
are killed between rounds so that short-lived threads restart them, every round is followed
by sequential calls from the main thread, and a busy thread keeps the interpreter loaded.
With workers started from the calling thread instead, 2 to 8 of its 152 executions crashed
in each of 6 runs here; with the daemon thread, none. About 4 s per isolation mode.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable

import pytest

from lift_metrics.sandbox import ExecutionResult, Sandbox

pytestmark = pytest.mark.slow  # about 4 s per isolation mode

ADD1 = "def add1(a, b):\n    return a + b\n"
CASES = [({"a": 1, "b": 2}, 3), ({"a": -1, "b": 1}, 0)]
ROUNDS = 8
PER_THREAD = (1, 4, 2, 3, 1, 4)  # threads end at different times
SEQUENTIAL = 4


def _busy(stop: threading.Event) -> None:
    """Keep the interpreter (GIL) and a core busy, as a loaded machine does."""
    x = 0
    while not stop.is_set():
        x += 1


def _kill_workers(box: Sandbox) -> None:
    """Kill every fork server, so the next executions restart them from their own threads."""
    for worker in box._slots:
        if worker is not None and worker.alive():
            os.killpg(worker.proc.pid, 9)
            worker.proc.wait()


def test_no_crash_when_threads_that_started_workers_exit(
    isolation_mode: str, leftovers: Callable[[], list[str]]
) -> None:
    stop = threading.Event()
    busy = threading.Thread(target=_busy, args=(stop,), daemon=True)
    busy.start()
    made: list[Sandbox] = []

    def create() -> None:
        made.append(Sandbox(workers=2, isolation=isolation_mode))  # type: ignore[arg-type]

    creator = threading.Thread(target=create)
    creator.start()
    creator.join()
    results: list[ExecutionResult] = []
    lock = threading.Lock()

    def work(count: int) -> None:
        for _ in range(count):
            result = box.run_tests(ADD1, CASES)
            with lock:
                results.append(result)

    try:
        with made[0] as box:
            for round_index in range(ROUNDS):
                if round_index:
                    _kill_workers(box)  # restarted by the short-lived threads below
                pool = [threading.Thread(target=work, args=(n,)) for n in PER_THREAD]
                for thread in pool:
                    thread.start()
                for thread in pool:
                    thread.join()
                # "right after Evaluate": the threads that (re)started workers are gone
                results.extend(box.run_tests(ADD1, CASES) for _ in range(SEQUENTIAL))
            assert leftovers() == []
    finally:
        stop.set()
        busy.join()
    expected = ROUNDS * (sum(PER_THREAD) + SEQUENTIAL)
    assert len(results) == expected
    bad = Counter(f"{r.status}: {r.reason}" for r in results if r.status != "passed")
    assert not bad, f"{sum(bad.values())} of {expected} benign executions did not pass: {bad}"
