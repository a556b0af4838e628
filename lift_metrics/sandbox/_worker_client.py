"""The parent side of a sandbox worker: start, talk to and stop one fork-server worker.

:class:`_Worker` speaks the framed protocol of ``_worker.py`` (the server, which ships whole
into the sandbox) over pipes; every worker is started from one long-lived daemon thread
(:func:`_spawn`), so a worker never inherits a short-lived thread's state.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from lift_metrics.errors import SandboxUnavailableError
from lift_metrics.sandbox import _isolation
from lift_metrics.sandbox._worker import (
    MAX_RESULT_BYTES,
    MAX_STDERR_BYTES,
    REQUEST_HEADER,
    remove_tree,
)

_START_TIMEOUT_S = 15.0
_GRACE_S = 3.0  # how long past the deadline the parent waits for a worker before killing it

_USE_SECCOMP = True  # tests turn it off to exercise the process sweep on its own
_USE_LANDLOCK = True  # tests turn it off to show what the other layers hold on their own
_MAX_HEADER_BYTES = 4096


class _WorkerGoneError(Exception):
    """The worker process died, stopped answering, or was closed."""


class _Worker:
    """One fork server (a bwrap sandbox or a plain process) and its control pipes."""

    def __init__(
        self,
        mode: str,
        bwrap: str | None,
        memory_mb: int,
        native: bool,
        visible: _isolation.Visibility,
        slot: int = 0,
    ) -> None:
        self.mode = mode
        self.tmp_root: str | None = None
        self.seq = 0
        config: dict[str, Any] = {
            "sys_path": list(visible.sys_path),
            "modules": list(visible.modules),
            "seccomp": _USE_SECCOMP,
            "memory_mb": memory_mb,
            "drop_uid": _isolation.child_uid(slot),
        }
        if mode == "bwrap":
            assert bwrap is not None
            # the mount namespace already shows only what the child may read: Landlock adds
            # the ptrace and signal scoping and the write rules, with few rules (each one
            # costs every child when its domain is made)
            landlock: dict[str, list[str]] | None = None
            if _USE_LANDLOCK:
                landlock = _isolation.landlock_spec("/tmp", visible, shm=True, visible_only=True)
            config.update(tmp_root="/tmp", clean_shm=True, landlock=landlock)
            argv = _isolation.bwrap_command(bwrap, json.dumps(config), visible)
            cwd = "/"
        else:
            refusal = _isolation.process_refusal(visible.packages)
            if refusal is not None:
                raise SandboxUnavailableError(refusal)
            self.tmp_root = _isolation.make_process_tmp_root()
            os.chmod(self.tmp_root, 0o711)
            landlock = None
            if _USE_LANDLOCK:
                landlock = _isolation.landlock_spec(self.tmp_root, visible, shm=False)
            config.update(tmp_root=self.tmp_root, clean_shm=False, landlock=landlock)
            argv = _isolation.process_command(json.dumps(config))
            cwd = self.tmp_root
        self.drop_uid: int | None = config["drop_uid"]
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                # bwrap clears the environment and sets LD_BIND_NOW itself (bwrap_command)
                env={} if mode == "bwrap" else {"LD_BIND_NOW": "1"},
                cwd=cwd,
                start_new_session=True,
                bufsize=0,
            )
        except BaseException:
            if self.tmp_root is not None:  # no worker, hence no close(), will remove it
                remove_tree(self.tmp_root)
            raise
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._buffer = bytearray()
        self.ready: dict[str, Any] | None = None
        with contextlib.suppress(OSError):  # the process died at once: wait_ready reports it
            view = memoryview(_isolation.worker_source_frame(native=native))  # read at once
            while view:
                view = view[os.write(self._in, view) :]

    # -- low-level I/O with deadlines -----------------------------------------------------
    def _read(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _WorkerGoneError("timeout")
            if not select.select([self._out], [], [], remaining)[0]:
                raise _WorkerGoneError("timeout")
            try:
                data = os.read(self._out, max(1 << 16, size - len(self._buffer)))
            except OSError as exc:
                raise _WorkerGoneError("read failed") from exc
            if not data:
                raise _WorkerGoneError("eof")
            self._buffer += data
        out = bytes(self._buffer[:size])
        del self._buffer[:size]
        return out

    def _read_frame(self, deadline: float) -> Any:
        size = int.from_bytes(self._read(4, deadline), "big")
        if size > _MAX_HEADER_BYTES:
            raise _WorkerGoneError("protocol violation: oversized header")
        try:
            return json.loads(self._read(size, deadline))
        except (ValueError, RecursionError) as exc:
            raise _WorkerGoneError("protocol violation: malformed header") from exc

    def wait_ready(self, timeout_s: float = _START_TIMEOUT_S) -> dict[str, Any]:
        if self.ready is None:
            frame = self._read_frame(time.monotonic() + timeout_s)
            if not isinstance(frame, dict) or not frame.get("ready"):
                raise _WorkerGoneError("bad handshake")
            self.ready = frame
        return self.ready

    def execute(self, request: bytes, budget_s: float) -> tuple[dict[str, Any], bytes, bytes]:
        """Send ``request``; wait at most ``budget_s`` for the answer once the worker is ready.

        The budget starts after the handshake: the start of a restarted worker (slow on a
        loaded machine) is not counted against the execution.
        """
        self.wait_ready()
        deadline = time.monotonic() + budget_s
        self.seq += 1
        request = REQUEST_HEADER.pack(len(request), budget_s - _GRACE_S, self.seq) + request
        try:
            view = memoryview(request)
            while view:
                view = view[os.write(self._in, view) :]
        except OSError as exc:
            raise _WorkerGoneError("write failed") from exc
        header = self._read_frame(deadline)
        if (
            type(header) is not dict
            or header.get("seq") != self.seq
            or type(header.get("res_len")) is not int
            or type(header.get("err_len")) is not int
            or not 0 <= header["res_len"] <= MAX_RESULT_BYTES
            or not 0 <= header["err_len"] <= MAX_STDERR_BYTES
        ):
            raise _WorkerGoneError("protocol violation: unexpected header")
        res = self._read(header["res_len"], deadline)
        err = self._read(header["err_len"], deadline)
        return header, res, err

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, *, graceful: bool = True) -> None:
        """Stop the server and everything under it; remove its temp dir."""
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:  # always a pipe (asserted in __init__)
                self.proc.stdin.close()
        if self.proc.returncode is None:
            if graceful:
                _wait_unreaped(self.proc.pid, 1.0)
            # The server is its own session and group leader. It is not reaped yet (a zombie
            # at most), so its pid, hence its group id, cannot have been handed to an
            # unrelated process: killing the group after reaping could hit one.
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        with contextlib.suppress(OSError):
            if self.proc.stdout is not None:  # always a pipe (asserted in __init__)
                self.proc.stdout.close()
        if self.tmp_root is not None:
            remove_tree(self.tmp_root)  # iterative: any depth; never raises
            self.tmp_root = None


def _wait_unreaped(pid: int, timeout_s: float) -> None:
    """Wait up to ``timeout_s`` for child ``pid`` to exit, leaving it unreaped (a zombie)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
                return
        except ChildProcessError:
            return
        time.sleep(0.002)


_spawn_requests: queue.SimpleQueue[tuple[Callable[[], Any], list[Any], threading.Event]] | None
_spawn_requests = None
_spawn_lock = threading.Lock()


def _spawner_loop(
    requests: queue.SimpleQueue[tuple[Callable[[], Any], list[Any], threading.Event]],
) -> None:
    while True:
        make, out, done = requests.get()
        try:
            out.append(make())
        except BaseException as exc:  # handed back to the caller's thread
            out.append(exc)
        done.set()
        del make, out, done  # hold no reference to a Sandbox while idle


def _forget_spawner() -> None:
    """In a forked child the spawner thread does not exist: start a new one on first use."""
    global _spawn_requests, _spawn_lock
    _spawn_requests = None
    _spawn_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_spawner)


def _spawn(make: Callable[[], _Worker]) -> _Worker:
    """Run ``make`` (which starts a worker process) on one long-lived daemon thread.

    bwrap's ``--die-with-parent`` and the server's own ``PR_SET_PDEATHSIG`` fire when the
    *thread* that started the process exits, not the process: a worker started from a
    short-lived thread (DSPy's Evaluate pool) would die with that thread.
    """
    global _spawn_requests
    with _spawn_lock:
        if _spawn_requests is None:
            _spawn_requests = queue.SimpleQueue()
            threading.Thread(
                target=_spawner_loop,
                args=(_spawn_requests,),
                name="lift-sandbox-spawner",
                daemon=True,
            ).start()
        requests = _spawn_requests
    out: list[Any] = []
    done = threading.Event()
    requests.put((make, out, done))
    done.wait()
    if isinstance(out[0], BaseException):
        raise out[0]
    worker: _Worker = out[0]
    return worker


def _close_all(slots: list[_Worker | None], owner_pid: int) -> None:
    """Close every worker in ``slots`` (also run by the finalizer of a forgotten Sandbox).

    In a forked copy of the owning process (``os.fork`` without exec, which runs this
    finalizer at exit) the workers belong to the parent: they are forgotten, not killed.
    """
    workers = [worker for worker in slots if worker is not None]
    slots[:] = [None] * len(slots)
    if os.getpid() != owner_pid:
        return
    for worker in workers:
        worker.close()
