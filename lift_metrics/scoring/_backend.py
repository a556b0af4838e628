"""Where scoring jobs run: the backend protocol and the local (this machine) backend.

The job loop in :func:`lift_metrics.scoring.score_samples` only sends :class:`ScoringJob`
objects to a backend and reads :class:`JobResult` objects back, so a backend that runs the
jobs elsewhere (a cluster) plugs in without touching it. Jobs and results are plain,
picklable data.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from lift_metrics._checks import check_importable, check_int, check_method
from lift_metrics._closing import ClosesOnExit
from lift_metrics.errors import InputValueError

#: The most executions at a time a :class:`LocalBackend` runs.
MAX_CONCURRENCY = 1024


def check_concurrency(name: str, value: Any) -> int:
    """Return ``value`` checked as a number of executions at a time: an int in [1, 1024]."""
    return check_int(name, value, minimum=1, maximum=MAX_CONCURRENCY)


@dataclass(frozen=True)
class ScoringJob:
    """One program to run against its tests.

    Attributes
    ----------
    key : int
        Identifies the job in its results (the sample's line number).
    code : str
        The whole program (untrusted).
    tests : list of (dict, object) pairs, or str
        I/O cases or a ``check(candidate)`` script.
    entry_point : str or None
        The function under test.
    timeout_s : float
        Wall-clock limit of the execution.
    """

    key: int
    code: str
    tests: list[tuple[dict[str, Any], Any]] | str
    entry_point: str | None
    timeout_s: float


@dataclass(frozen=True)
class JobResult:
    """What running one :class:`ScoringJob` gave.

    Attributes
    ----------
    key : int
        The job's key.
    status : str
        The sandbox's status: ``passed``, ``failed``, ``error``, ``timeout``, ``memory``
        or ``crashed`` (see :class:`lift_metrics.sandbox.ExecutionResult`).
    outcomes : tuple of dict
        One per test (one for a check script): ``index``, ``passed``, ``actual_repr``,
        ``error``.
    elapsed_ms : float
        Wall-clock time of the execution.
    reason : str
        Why the status is what it is (``""`` when passed).
    """

    key: int
    status: str
    outcomes: tuple[dict[str, Any], ...]
    elapsed_ms: float
    reason: str

    @property
    def passed(self) -> bool:
        """Whether every test passed."""
        return self.status == "passed"


def execute_job(sandbox: Any, job: ScoringJob) -> JobResult:
    """Run ``job`` in ``sandbox`` (a :class:`lift_metrics.sandbox.Sandbox`).

    Never raises because of the program under test.

    Backends that run jobs elsewhere call this next to their own sandbox.
    """
    result = sandbox.run_tests(
        job.code, job.tests, entry_point=job.entry_point, timeout_s=job.timeout_s
    )
    outcomes = tuple(
        {
            "index": outcome.index,
            "passed": outcome.passed,
            "actual_repr": outcome.actual_repr,
            "error": outcome.error,
        }
        for outcome in result.outcomes
    )
    return JobResult(job.key, result.status, outcomes, result.elapsed_ms, result.reason)


@runtime_checkable
class ScoringBackend(Protocol):
    """Runs scoring jobs and streams their results back, in any order.

    ``run`` may be called more than once; ``close`` releases what the backend holds. When
    the consumer stops iterating early (an interrupt), closing the iterator must cancel the
    jobs not yet started.
    """

    def run(self, jobs: Iterable[ScoringJob]) -> Iterator[JobResult]:
        """Run ``jobs``; yield one :class:`JobResult` per job as each finishes."""
        ...

    def close(self) -> None:
        """Release workers and sandboxes (idempotent)."""
        ...


class LocalBackend(ClosesOnExit):
    r"""Runs jobs on this machine: ``concurrency`` threads, each driving one sandbox worker.

    Parameters
    ----------
    concurrency : int, optional
        Executions at a time, from 1 to :data:`MAX_CONCURRENCY` (1024); default: twice the
        number of CPUs.
    sandbox : Sandbox, optional
        Where to run; default: the process-wide sandbox
        (:func:`lift_metrics.sandbox.get_default_sandbox`), grown to ``concurrency``
        workers (up to 32).
    importable : sequence of str, optional
        Packages the programs may import besides the standard library (top-level names such
        as ``"numpy"``): the backend runs its own ``Sandbox(workers=concurrency,
        importable=importable)``, started on first use and closed by :meth:`close`. Not
        with ``sandbox``.

    Examples
    --------
    >>> job = ScoringJob(1, "def f(x):\n    return x\n", [({"x": 1}, 1)], "f", 3.0)
    >>> with LocalBackend(concurrency=1) as backend:
    ...     [result.status for result in backend.run([job])]
    ['passed']
    """

    def __init__(
        self,
        *,
        concurrency: int | None = None,
        sandbox: Any = None,
        importable: Sequence[str] = (),
    ) -> None:
        if concurrency is None:
            # twice the CPUs: an execution waits on its worker's process for much of its time
            concurrency = 2 * max(1, os.cpu_count() or 1)
        self.concurrency = check_concurrency("concurrency", concurrency)
        if sandbox is not None:
            wanted = "be a lift_metrics.sandbox.Sandbox"
            check_method("sandbox", sandbox, "run_tests", wanted=wanted)
        self.importable = check_importable(importable)
        if sandbox is not None and self.importable:
            raise InputValueError(
                "importable configures the backend's own sandbox; with sandbox given, create "
                f"it with Sandbox(importable=...) instead, got importable={list(importable)!r}"
            )
        self._sandbox = sandbox
        self._owned: Any = None  # the sandbox this backend starts for ``importable``
        self._owned_lock = threading.Lock()

    def __repr__(self) -> str:
        importable = f", importable={list(self.importable)!r}" if self.importable else ""
        return f"LocalBackend(concurrency={self.concurrency}{importable})"

    def close(self) -> None:
        """Close the sandbox started for ``importable`` (the default sandbox outlives it)."""
        with self._owned_lock:
            owned, self._owned = self._owned, None
        if owned is not None:
            owned.close()

    def start(self) -> None:
        """Start the sandbox the jobs will run in now, rather than on the first job.

        A new sandbox runs a known-good program before it serves (docs/errors.md), so a
        sandbox that cannot run here raises ``SandboxUnavailableError`` from this call:
        :func:`~lift_metrics.scoring.score_samples` calls it before it touches its output.

        Raises
        ------
        lift_metrics.sandbox.SandboxUnavailableError
            The sandbox cannot start or cannot run a known-good program on this machine.
        """
        self._box()

    def _box(self) -> Any:
        if self._sandbox is not None:
            return self._sandbox
        if not self.importable:
            from lift_metrics.sandbox import get_default_sandbox

            return get_default_sandbox(workers=self.concurrency)
        with self._owned_lock:
            if self._owned is None:
                from lift_metrics.sandbox import Sandbox

                self._owned = Sandbox(workers=self.concurrency, importable=self.importable)
            return self._owned

    def run(self, jobs: Iterable[ScoringJob]) -> Iterator[JobResult]:
        """Run ``jobs``, at most ``concurrency`` at a time; yield results as they finish.

        Each of ``concurrency`` threads takes the next job from ``jobs`` (one at a time),
        runs it and hands its result to this generator through a queue: no future per job,
        nor a waiter per result (about a tenth of the parent's CPU time per job). Closing the
        generator early lets the running jobs finish and starts no other.
        """
        box = self._box()
        iterator = iter(jobs)
        results: queue.SimpleQueue[tuple[JobResult | None, BaseException | None]]
        results = queue.SimpleQueue()
        take = threading.Lock()
        stopped = threading.Event()

        def work() -> None:
            try:
                while not stopped.is_set():
                    with take:
                        job = next(iterator, None)
                    if job is None:
                        break
                    results.put((execute_job(box, job), None))
            except BaseException as exc:  # handed to the consumer, as a future would
                stopped.set()
                results.put((None, exc))
            finally:
                results.put((None, None))  # this thread is done

        running = self.concurrency
        for index in range(self.concurrency):
            threading.Thread(target=work, name=f"lift-score_{index}", daemon=True).start()
        try:
            while running:
                result, error = results.get()
                if error is not None:
                    raise error
                if result is None:
                    running -= 1
                else:
                    yield result
        finally:
            stopped.set()
