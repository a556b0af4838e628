"""Judging in the trusted parent: turn what a worker reported into an ExecutionResult.

Nothing from the child is unpickled or evaluated: its result pipe carries frames of JSON data,
which are checked for the execution's nonce and the expected order, then compared with the
expected values through :func:`lift_metrics.sandbox._worker.canonical` (exact types).
"""

from __future__ import annotations

import signal
from collections.abc import Sequence
from typing import Any

from lift_metrics.sandbox._results import ExecutionResult, Status, TestOutcome
from lift_metrics.sandbox._worker import (
    CHILD_SETUP_FAILED_EXIT,
    DecodeError,
    canonical,
    tree_repr,
    unpack_frames,
)

_SHORT = 200


def short(text: str, limit: int = _SHORT) -> str:
    """Return ``text`` on one line, cut to ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def error_result(
    reason: str, *, n_cases: int, cases: Sequence[Any] | None = None
) -> ExecutionResult:
    """Return a status "error" result (nothing ran) with every case failed for ``reason``."""
    outcomes = tuple(
        TestOutcome(
            index=i,
            passed=False,
            inputs=None if cases is None else cases[i][0],
            expected=None if cases is None else cases[i][1],
            actual_repr=None,
            error=reason,
        )
        for i in range(n_cases)
    )
    return ExecutionResult("error", outcomes, 0.0, reason, "")


def _stderr_text(err: bytes, total: int) -> str:
    text = err.decode("utf-8", errors="replace")
    if total > len(err):
        text += f"\n... [{total - len(err)} more bytes of stderr dropped]"
    return text


def _death_reason(header: dict[str, Any]) -> tuple[Status, str]:
    sig = header.get("signal")
    if sig is not None:
        if sig == signal.SIGXCPU:
            return "timeout", "the CPU time limit was exceeded (SIGXCPU)"
        if sig == signal.SIGSEGV:
            return "crashed", "the process crashed with SIGSEGV (a stack overflow?)"
        return "crashed", f"the process was killed by {_signal_name(sig)}"
    code = header.get("exit_code")
    if code == CHILD_SETUP_FAILED_EXIT:
        return "crashed", "the sandbox could not set up the child process"
    return "crashed", f"the process exited (code {code}) before reporting every result"


def judge(
    *,
    mode: str,
    cases: Sequence[tuple[dict[str, Any], Any]],
    expected_canon: Sequence[Any],
    nonce: str,
    header: dict[str, Any],
    res: bytes,
    err: bytes,
    timeout_s: float,
    elapsed_ms: float,
) -> tuple[ExecutionResult, list[Any]]:
    """Return the execution's result and the raw value trees reported for I/O cases.

    The trees (None where nothing valid came back) serve :func:`execute_code`.
    """
    stderr = _stderr_text(err, int(header.get("err_total", len(err))))
    frames, well_formed = unpack_frames(res)
    tampered = not well_formed or bool(header.get("res_overflow"))
    good: list[dict[str, Any]] = []
    for frame in frames:
        if type(frame) is not dict or frame.get("n") != nonce:
            tampered = True
            break
        good.append(frame)
    n = len(cases) if mode == "io" else 1
    errors: list[str | None] = [None] * n
    trees: list[Any] = [None] * n
    passed = [False] * n
    actual: list[str | None] = [None] * n
    reported = 0
    memory = False
    load_error: str | None = None
    done = False
    pos = 0
    # expected order: load, then (case 0..n-1 | script), then done
    if good and good[0].get("k") == "load":
        first = good[0]
        pos = 1
        if first.get("m"):
            memory = True
            load_error = "MemoryError while loading the code"
        elif "e" in first:
            load_error = short(str(first["e"]), 300)
        else:
            for index in range(n):
                if pos >= len(good):
                    break
                frame = good[pos]
                kind = "case" if mode == "io" else "script"
                if frame.get("k") != kind or (mode == "io" and frame.get("i") != index):
                    tampered = True
                    break
                pos += 1
                reported += 1
                if frame.get("m"):
                    memory = True
                    errors[index] = "MemoryError (memory limit reached)"
                elif "e" in frame:
                    errors[index] = short(str(frame["e"]), 300 if mode == "io" else 700)
                elif mode == "script":
                    passed[index] = frame.get("ok") == 1
                    if not passed[index]:
                        tampered = True
                else:
                    tree = frame.get("v")
                    try:
                        got = canonical(tree)
                        actual[index] = short(tree_repr(tree, 300), 300)
                    except (DecodeError, RecursionError):
                        tampered = True
                        break
                    trees[index] = tree
                    passed[index] = got == expected_canon[index]
            if not tampered and reported == n and pos < len(good):
                done = good[pos].get("k") == "done" and pos + 1 == len(good)
                tampered = not done
    elif good:
        tampered = True

    status: Status
    if header.get("timed_out"):
        status = "timeout"
        running = f" (test {reported} was running)" if mode == "io" and reported < n else ""
        reason = f"exceeded the {timeout_s:g} s time limit{running}"
    elif tampered:
        status, reason = "failed", "the result channel was tampered with; no test is credited"
        passed = [False] * n
    elif memory:
        status, reason = "memory", "the memory limit was reached (MemoryError)"
    elif load_error is not None:
        status, reason = "error", f"the code failed to load: {load_error}"
    elif not done:
        status, reason = _death_reason(header)
    elif all(passed):
        status, reason = "passed", ""
    else:
        status = "failed"
        first_bad = passed.index(False)
        detail = errors[first_bad] or f"returned {actual[first_bad]}"
        label = "the check failed" if mode == "script" else f"test {first_bad} failed"
        reason = short(f"{n - sum(passed)} of {n} tests failed; {label}: {detail}")
    missing = "did not run: " + reason if reason else "did not run"
    outcomes = []
    for i in range(n):
        error = errors[i]
        if error is None and not passed[i] and i >= reported:
            error = missing
        elif error is None and not passed[i] and tampered:
            error = reason
        outcomes.append(
            TestOutcome(
                index=i,
                passed=passed[i],
                inputs=cases[i][0] if mode == "io" else None,
                expected=cases[i][1] if mode == "io" else None,
                actual_repr=actual[i],
                error=error,
            )
        )
    if status != "passed" and stderr.strip():
        last = stderr.strip().splitlines()[-1]
        if last and last not in reason:
            reason = short(f"{reason} | stderr: {last}", 300)
    return ExecutionResult(status, tuple(outcomes), elapsed_ms, reason, stderr), trees
