"""The process-wide llama.cpp servers behind every local engine, and their shutdown.

One xllamacpp server per model file and settings, started on first use and shared by every
engine; interpreter exit stops running generations and frees the servers
(:func:`stop_local_servers`).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import secrets
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lift_metrics.errors import GenerationCancelledError, InputValueError
from lift_metrics.lm._cancel import request_shutdown, shutdown_requested

__all__ = ["default_n_threads", "stop_local_servers"]

_INSTALL_XLLAMACPP_HINT = "the local LM needs xllamacpp: pip install 'lift-metrics[local]'"
# --------------------------------------------------------------------------- servers

_SERVERS: dict[tuple[str, int, int, int], Any] = {}
# Each server's loopback address and API key, for the requests it answers over HTTP only
# (counting a prompt's tokens: lift_metrics.lm._prompt).
_ACCESS: dict[tuple[str, int, int, int], tuple[str, str]] = {}
_SERVERS_LOCK = threading.Condition()  # guards _SERVERS and _IN_FLIGHT; notified when idle
_IN_FLIGHT = 0  # requests running on any server
_EXIT_HOOK_INSTALLED = False
# How long interpreter exit waits for running generations to reach their next token (a
# request still reading its prompt stops only after the prompt; see stop_local_servers).
_EXIT_WAIT_S = 60.0
# Within this part of the wait running generations stop without a word (within a token).
_EXIT_GRACE_S = 1.0
# The exit code the command line chose (lift_metrics.cli.main), kept when exit cannot wait
# for a request; None outside the command line.
_EXIT_CODE: int | None = None


def set_exit_code(code: int) -> None:
    """Record the exit code of the finished command, for an exit that cannot wait (see below).

    Interpreter exit waits for running local generations (:func:`stop_local_servers`); when
    one is still running after the wait, the process leaves without teardown, and with this
    code (130 when none was recorded) rather than one that says it was interrupted.
    """
    global _EXIT_CODE
    _EXIT_CODE = code


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def default_n_threads() -> int:
    """Half the CPUs this process may use (at least 1): 1 thread on a 2-core machine.

    llama.cpp's threads meet at a barrier after every operation, so when anything else wants
    the same cores (DSPy's metric threads, the sandbox, other programs) a thread that loses
    its core stalls all of them. Measured on the 2-core development machine under load:
    2 threads fell to 2-35 tokens/s while 1 thread kept 32-124 tokens/s; on a quiet machine
    2 threads are only about 20% faster than 1. Leaving cores free is the robust default.

    Returns
    -------
    int
        ``max(1, usable CPUs // 2)``.

    Examples
    --------
    >>> default_n_threads() >= 1
    True
    """
    return max(1, _usable_cpus() // 2)


def _get_server(path: Path, n_ctx: int, n_threads: int, n_parallel: int) -> Any:
    """Return the process-wide xllamacpp server for these settings; load the model on first use."""
    global _EXIT_HOOK_INSTALLED
    key = (str(path), n_ctx, n_threads, n_parallel)
    with _SERVERS_LOCK:
        if shutdown_requested():
            raise GenerationCancelledError("the local LM is shut down: the process is exiting")
        server = _SERVERS.get(key)
        if server is None:
            api_key = secrets.token_hex(16)
            server = _start_server(path, n_ctx, n_threads, n_parallel, api_key)
            _SERVERS[key] = server
            _ACCESS[key] = (str(server.listening_address), api_key)
            if not _EXIT_HOOK_INSTALLED:
                atexit.register(_stop_at_exit, os.getpid())
                _EXIT_HOOK_INSTALLED = True
    return server


@contextlib.contextmanager
def _lease(path: Path, n_ctx: int, n_threads: int, n_parallel: int) -> Iterator[Any]:
    """Return a server counted as busy for the duration, so that shutdown waits for the request."""
    global _IN_FLIGHT
    with _SERVERS_LOCK:  # lookup and count together: shutdown never frees a server in use
        server = _get_server(path, n_ctx, n_threads, n_parallel)
        _IN_FLIGHT += 1
    try:
        yield server
    finally:
        del server
        with _SERVERS_LOCK:
            _IN_FLIGHT -= 1
            _SERVERS_LOCK.notify_all()


def stop_local_servers(*, wait_s: float = _EXIT_WAIT_S) -> bool:
    """Stop every local generation and free the llama.cpp servers of this process.

    Called at interpreter exit (and so after Ctrl-C): running generations stop at their next
    token and raise :class:`GenerationCancelledError`, new requests are refused, and the servers'
    native threads are joined before the interpreter tears down, so the process never exits
    with a native thread still computing (that crashed with a segmentation fault).

    Parameters
    ----------
    wait_s : float, default 60
        Longest wait for running requests to end. A generation stops within one token; a
        request still reading its prompt ends when the prompt is read (seconds).

    Returns
    -------
    bool
        True when no request was running any more and the servers were freed; False when
        requests were still running after ``wait_s`` (the servers are then left alone).
    """
    request_shutdown()
    deadline = time.monotonic() + wait_s
    with _SERVERS_LOCK:
        while _IN_FLIGHT > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _SERVERS_LOCK.wait(min(left, 0.1))
        servers = list(_SERVERS.values())
        _SERVERS.clear()
        _ACCESS.clear()
    del servers  # the last references: xllamacpp's destructor stops and joins the server
    gc.collect()
    return True


def _stop_at_exit(owner_pid: int) -> None:
    if os.getpid() != owner_pid:  # a forked copy: the servers' threads live in the parent
        return
    grace_s = min(_EXIT_GRACE_S, _EXIT_WAIT_S)
    try:
        stopped = stop_local_servers(wait_s=grace_s)  # a generation stops within a token
        if not stopped:  # a wait that can be long is never silent
            with _SERVERS_LOCK:
                running = _IN_FLIGHT
            _say(
                f"lift-metrics: waiting up to {_EXIT_WAIT_S:g} s for {running} local LM "
                f"request{'s' if running != 1 else ''} to stop (a request still reading its "
                "prompt stops once the prompt is read)"
            )
            stopped = stop_local_servers(wait_s=_EXIT_WAIT_S - grace_s)
    except KeyboardInterrupt:  # a second Ctrl-C while waiting: leave now, skipping teardown
        stopped = False
    if not stopped:
        # A native thread may still be computing; tearing the interpreter down under it
        # crashes. Leave without teardown, as after a signal, keeping what was printed.
        code = 130 if _EXIT_CODE is None else _EXIT_CODE
        _say(
            "lift-metrics: a local LM request was still running; leaving without waiting "
            f"for it (exit code {code})"
        )
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _say(line: str) -> None:
    with contextlib.suppress(Exception):  # stderr may be closed at exit
        print(line, file=sys.stderr, flush=True)


def _access(path: Path, n_ctx: int, n_threads: int, n_parallel: int) -> tuple[str, str] | None:
    """Return the loopback address and API key of the server for these settings, once started."""
    with _SERVERS_LOCK:
        return _ACCESS.get((str(path), n_ctx, n_threads, n_parallel))


def _start_server(path: Path, n_ctx: int, n_threads: int, n_parallel: int, api_key: str) -> Any:
    try:
        import xllamacpp
    except ImportError as exc:
        raise ImportError(_INSTALL_XLLAMACPP_HINT) from exc
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = n_ctx * n_parallel  # llama.cpp splits n_ctx evenly among the slots
    params.n_parallel = n_parallel
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.verbosity = 0  # llama.cpp logs each request to the terminal otherwise
    # The server also listens on a loopback port; a random key keeps other local processes
    # out. In-process calls (handle_chat_completions) do not go through that check.
    params.api_keys = [api_key]
    try:
        return xllamacpp.Server(params)
    except RuntimeError as exc:
        raise InputValueError(
            f"model_path {str(path)!r} starts like a GGUF file but llama.cpp could not load it "
            f"as a model (truncated, corrupt or an unsupported architecture): {exc}"
        ) from exc
