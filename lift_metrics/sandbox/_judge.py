"""Judging in the trusted parent: turn what a worker reported into an ExecutionResult.

Nothing from the child is unpickled or evaluated: its result pipe carries frames of JSON data,
which are checked for the execution's nonce and the expected order, then compared with the
expected values through :func:`lift_metrics.sandbox._worker.canonical` (exact types).

Whatever the child wrote, judging returns a result and raises nothing, and its cost is bounded
by what an honest child can write: at most one frame per expected message (load, each case or
the script, done), none longer than :data:`~lift_metrics.sandbox._worker.MAX_FRAME_BYTES`
(a returned value of at most 1 MB once encoded, with room for the frame around it). A frame
past either bound is refused before it is parsed: the channel was tampered with.
"""

from __future__ import annotations

import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lift_metrics._text import clean_text
from lift_metrics.sandbox._results import ExecutionResult, Status, TestOutcome
from lift_metrics.sandbox._worker import (
    CHILD_SETUP_FAILED_EXIT,
    MAX_FRAME_BYTES,
    DecodeError,
    canonical,
    tree_repr,
    unpack_frames,
)

_SHORT = 200


def short(text: str, limit: int = _SHORT) -> str:
    """Return ``text`` on one line, cut to ``limit`` characters, as valid Unicode.

    The child's messages are its own text: an exception message may hold a lone surrogate,
    which would make writing the result as UTF-8 fail (it becomes U+FFFD).
    """
    text = " ".join(clean_text(text).split())
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


@dataclass
class _Reading:
    """What the frames of one execution reported, case by case (``n`` cases)."""

    n: int
    tampered: bool
    errors: list[str | None] = field(init=False)
    trees: list[Any] = field(init=False)
    passed: list[bool] = field(init=False)
    actual: list[str | None] = field(init=False)
    reported: int = 0
    memory: bool = False
    load_error: str | None = None
    done: bool = False

    def __post_init__(self) -> None:
        """Start with nothing reported for any case."""
        self.errors = [None] * self.n
        self.trees = [None] * self.n
        self.passed = [False] * self.n
        self.actual = [None] * self.n


def _frames(
    res: bytes, nonce: str, header: dict[str, Any], n: int
) -> tuple[list[dict[str, Any]], bool]:
    """Return the frames up to the first without the nonce, and whether the channel was tampered.

    An honest child writes ``n + 2`` frames at most (load, ``n`` cases or one script, done):
    no more are parsed.
    """
    frames, well_formed = unpack_frames(res, max_frames=n + 2, max_frame_bytes=MAX_FRAME_BYTES)
    tampered = not well_formed or bool(header.get("res_overflow"))
    good: list[dict[str, Any]] = []
    for frame in frames:
        if type(frame) is not dict or frame.get("n") != nonce:
            tampered = True
            break
        good.append(frame)
    return good, tampered


def _read_case(
    reading: _Reading, frame: dict[str, Any], index: int, mode: str, expected: Any
) -> bool:
    """Record case ``index``'s frame; return False when its value cannot be decoded."""
    reading.reported += 1
    if frame.get("m"):
        reading.memory = True
        reading.errors[index] = "MemoryError (memory limit reached)"
    elif "e" in frame:
        reading.errors[index] = short(str(frame["e"]), 300 if mode == "io" else 700)
    elif mode == "script":
        reading.passed[index] = frame.get("ok") == 1
        if not reading.passed[index]:
            reading.tampered = True
    else:
        tree = frame.get("v")
        try:
            got = canonical(tree)
            reading.actual[index] = short(tree_repr(tree, 300), 300)
        except (DecodeError, RecursionError):
            reading.tampered = True
            return False
        reading.trees[index] = tree
        reading.passed[index] = got == expected
    return True


def _read_cases(
    reading: _Reading, good: list[dict[str, Any]], mode: str, expected_canon: Sequence[Any]
) -> None:
    """Read the case (or script) frames after the load frame, then the final ``done``."""
    pos = 1
    kind = "case" if mode == "io" else "script"
    for index in range(reading.n):
        if pos >= len(good):
            break
        frame = good[pos]
        if frame.get("k") != kind or (mode == "io" and frame.get("i") != index):
            reading.tampered = True
            break
        pos += 1
        if not _read_case(
            reading, frame, index, mode, expected_canon[index] if mode == "io" else None
        ):
            break
    if not reading.tampered and reading.reported == reading.n and pos < len(good):
        reading.done = good[pos].get("k") == "done" and pos + 1 == len(good)
        reading.tampered = not reading.done


def _read(
    good: list[dict[str, Any]], mode: str, n: int, expected_canon: Sequence[Any], tampered: bool
) -> _Reading:
    """Read the frames in their expected order: load, then (case 0..n-1 | script), then done."""
    reading = _Reading(n, tampered)
    if good and good[0].get("k") == "load":
        first = good[0]
        if first.get("m"):
            reading.memory = True
            reading.load_error = "MemoryError while loading the code"
        elif "e" in first:
            reading.load_error = short(str(first["e"]), 300)
        else:
            _read_cases(reading, good, mode, expected_canon)
    elif good:
        reading.tampered = True
    return reading


def _status(
    header: dict[str, Any], reading: _Reading, mode: str, timeout_s: float
) -> tuple[Status, str]:
    """Return the execution's status and reason; a tampered channel credits no test."""
    n = reading.n
    if header.get("timed_out"):
        running = (
            f" (test {reading.reported} was running)"
            if mode == "io" and reading.reported < n
            else ""
        )
        return "timeout", f"exceeded the {timeout_s:g} s time limit{running}"
    if reading.tampered:
        reading.passed = [False] * n
        return "failed", "the result channel was tampered with; no test is credited"
    if reading.memory:
        return "memory", "the memory limit was reached (MemoryError)"
    if reading.load_error is not None:
        return "error", f"the code failed to load: {reading.load_error}"
    if not reading.done:
        return _death_reason(header)
    if all(reading.passed):
        return "passed", ""
    first_bad = reading.passed.index(False)
    detail = reading.errors[first_bad] or f"returned {reading.actual[first_bad]}"
    label = "the check failed" if mode == "script" else f"test {first_bad} failed"
    return "failed", short(f"{n - sum(reading.passed)} of {n} tests failed; {label}: {detail}")


def _outcomes(
    reading: _Reading, cases: Sequence[tuple[dict[str, Any], Any]], mode: str, reason: str
) -> list[TestOutcome]:
    """Return each case's outcome; a case that never ran says why."""
    missing = "did not run: " + reason if reason else "did not run"
    outcomes = []
    for i in range(reading.n):
        error = reading.errors[i]
        passed = reading.passed[i]
        if error is None and not passed and i >= reading.reported:
            error = missing
        elif error is None and not passed and reading.tampered:
            error = reason
        outcomes.append(
            TestOutcome(
                index=i,
                passed=passed,
                inputs=cases[i][0] if mode == "io" else None,
                expected=cases[i][1] if mode == "io" else None,
                actual_repr=reading.actual[i],
                error=error,
            )
        )
    return outcomes


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
    n = len(cases) if mode == "io" else 1
    good, tampered = _frames(res, nonce, header, n)
    reading = _read(good, mode, n, expected_canon, tampered)
    status, reason = _status(header, reading, mode, timeout_s)
    outcomes = _outcomes(reading, cases, mode, reason)
    if status != "passed" and stderr.strip():
        last = stderr.strip().splitlines()[-1]
        if last and last not in reason:
            reason = short(f"{reason} | stderr: {last}", 300)
    return ExecutionResult(status, tuple(outcomes), elapsed_ms, reason, stderr), reading.trees
