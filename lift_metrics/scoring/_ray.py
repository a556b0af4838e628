"""Scoring on a Ray cluster: actors that each own a warm sandbox (``lift-metrics[ray]``).

Ray is imported only when a :class:`RayBackend` starts; importing this module does not.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from lift_metrics._checks import check_int

_RAY_HINT = "pip install 'lift-metrics[ray]'"


class RayUnavailableError(ImportError):
    """Ray is not installed (the message says how to install the extra)."""


def import_ray() -> Any:
    """Import Ray, or raise :class:`RayUnavailableError` naming the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailableError(
            f"scoring on Ray needs the ray package ({exc}): {_RAY_HINT}"
        ) from None
    return ray


class _ScoringActor:
    """One Ray actor: a warm single-worker Sandbox and a function that scores one job on it."""

    def __init__(self, sandbox_options: dict[str, Any], score_one: Callable[..., Any]) -> None:
        from lift_metrics.sandbox import Sandbox

        self._box = Sandbox(workers=1, **sandbox_options)
        self._score_one = score_one

    def describe(self) -> dict[str, Any]:
        import socket

        import lift_metrics

        return {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "isolation": self._box.isolation,
            "package": lift_metrics.__file__,
        }

    def score(self, batch: Sequence[Any]) -> list[Any]:
        return [self._score_one(self._box, job) for job in batch]

    def close(self) -> None:
        self._box.close()


def _batches(jobs: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for job in jobs:
        batch.append(job)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class RayBackend:
    """Score on a Ray cluster: one actor per worker, each with its own warm sandbox.

    Jobs go out in batches (two per actor in flight, so an actor never waits for its next
    batch) and results come back as each batch finishes, in no particular order; the scoring
    job writes them to the same resumable output as the local backend. Ray is imported when
    the backend starts, never by ``import lift_metrics``.

    Parameters
    ----------
    address : str, optional
        None: start a private local Ray runtime with ``workers`` CPUs (stopped by
        :meth:`close`). Otherwise what ``ray.init(address=...)`` accepts: ``"auto"`` (the
        cluster this machine belongs to, started with ``ray start``), ``"HOST:6379"``, or a
        Ray Client address ``"ray://HOST:10001"``. When Ray is already initialized in this
        process, that session is used and left running.
    workers : int, optional
        Number of actors (executions at a time). Default: the CPU count of the local machine
        (no address) or of the cluster.
    batch_size : int, default 16
        Jobs per remote call: larger batches cost less overhead per sample, smaller ones
        balance the end of a run better.

    Raises
    ------
    TypeError, ValueError
        For arguments of the wrong type or out of range.

    Notes
    -----
    Every node that runs an actor needs lift-metrics installed for the same Python version
    as the driver (the actors import it; ``pip install 'lift-metrics[ray]'`` brings Ray and
    the bundled bubblewrap binary). Each actor reserves one CPU and runs a
    ``Sandbox(workers=1)`` with the job's limits; an actor that dies (a lost node) is
    restarted and its batch retried, up to three times, since scoring a sample twice gives
    the same result. Starting Ray and the actors costs a few seconds; it pays off from a
    few thousand samples, or when one machine is not enough.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        workers: int | None = None,
        batch_size: int = 16,
    ) -> None:
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise ValueError(
                f"address must be a Ray address ('auto', 'HOST:PORT', 'ray://HOST:PORT') "
                f"or None, got {address!r}"
            )
        self.address = address
        self.workers = None if workers is None else check_int("workers", workers, minimum=1)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self._ray: Any = None
        self._owns_runtime = False
        self._actors: list[Any] = []
        self._actor_key: Any = None
        self.isolation: str | None = None

    def __repr__(self) -> str:
        return (
            f"RayBackend(address={self.address!r}, workers={self.workers}, "
            f"batch_size={self.batch_size})"
        )

    def __enter__(self) -> RayBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- runtime and actors ---------------------------------------------------------------------
    def _connect(self) -> Any:
        if self._ray is not None:
            return self._ray
        ray = import_ray()
        if not ray.is_initialized():
            options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
            if self.address is None:
                workers = self.workers or os.cpu_count() or 1
                ray.init(num_cpus=workers, include_dashboard=False, **options)
            else:
                try:
                    ray.init(address=self.address, **options)
                except (ConnectionError, ValueError, RuntimeError) as exc:
                    raise ConnectionError(
                        f"cannot reach the Ray cluster at {self.address!r}: {exc}"
                    ) from exc
            self._owns_runtime = True
        self._ray = ray
        if self.workers is None:
            self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        return ray

    def _start_actors(self, sandbox_options: dict[str, Any], score_one: Callable[..., Any]) -> None:
        key = (sorted(sandbox_options.items()), score_one)
        if self._actors and key == self._actor_key:
            return
        self._stop_actors()
        ray = self._ray
        actor_class = ray.remote(_ScoringActor).options(
            num_cpus=1, max_restarts=3, max_task_retries=3
        )
        assert self.workers is not None
        self._actors = [actor_class.remote(sandbox_options, score_one) for _ in range(self.workers)]
        self._actor_key = key
        described = ray.get([actor.describe.remote() for actor in self._actors])
        weakest = {info["isolation"] for info in described}
        self.isolation = "process" if "process" in weakest else "bwrap"

    def _stop_actors(self) -> None:
        if self._ray is None:
            return
        for actor in self._actors:
            with contextlib.suppress(Exception):
                self._ray.kill(actor)
        self._actors = []
        self._actor_key = None

    def close(self) -> None:
        """Stop the actors, and the Ray runtime when this backend started it (idempotent)."""
        self._stop_actors()
        if self._ray is not None and self._owns_runtime:
            self._ray.shutdown()
        self._ray = None
        self._owns_runtime = False

    # -- running ------------------------------------------------------------------------------
    def map_unordered(
        self,
        score_one: Callable[[Any, Any], Any],
        jobs: Iterable[Any],
        *,
        sandbox_options: dict[str, Any] | None = None,
    ) -> Iterator[Any]:
        """Yield ``score_one(sandbox, job)`` for every job, as batches finish on the actors.

        ``score_one`` must be importable by module and name on every node (a module-level
        function of an installed package); ``sandbox_options`` are keyword arguments of
        :class:`~lift_metrics.sandbox.Sandbox` (not ``workers``).
        """
        ray = self._connect()
        self._start_actors(dict(sandbox_options or {}), score_one)
        slots = [actor for actor in self._actors for _ in range(2)]
        pending: dict[Any, Any] = {}
        batches = _batches(jobs, self.batch_size)
        exhausted = False
        try:
            while True:
                while slots and not exhausted:
                    batch = next(batches, None)
                    if batch is None:
                        exhausted = True
                        break
                    actor = slots.pop()
                    pending[actor.score.remote(batch)] = actor
                if not pending:
                    return
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    actor = pending.pop(ref)
                    results = ray.get(ref)
                    slots.append(actor)
                    yield from results
        finally:
            for ref in pending:
                with contextlib.suppress(Exception):
                    ray.cancel(ref)
