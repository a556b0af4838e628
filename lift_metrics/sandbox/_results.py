"""Result objects of the sandbox: one per execution, one per test case."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from lift_metrics._records import record_dict

Status = Literal["passed", "failed", "error", "timeout", "memory", "crashed"]
STATUSES: tuple[str, ...] = ("passed", "failed", "error", "timeout", "memory", "crashed")


@dataclass(frozen=True)
class TestOutcome:
    """The outcome of one test case.

    Attributes
    ----------
    index : int
        Position of the case in ``tests`` (0 for an assertion script).
    passed : bool
        True when the returned value equals ``expected`` with exact types (I/O cases), or
        when ``check(candidate)`` returned normally (assertion scripts).
    inputs : dict or None
        The keyword arguments of the case (None for an assertion script).
    expected : Any
        The expected value (None for an assertion script).
    actual_repr : str or None
        ``repr`` of the returned value as decoded in the parent (None if nothing came back).
    error : str or None
        Why the case failed, when it did not simply return a different value.
    """

    __test__ = False  # not a pytest test class

    index: int
    passed: bool
    inputs: dict[str, Any] | None
    expected: Any
    actual_repr: str | None
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-friendly dict (``inputs`` and ``expected`` as their reprs)."""
        if self.inputs is None:
            return record_dict(self, inputs=None, expected=None)
        return record_dict(self, inputs=repr(self.inputs), expected=repr(self.expected))


@dataclass(frozen=True)
class ExecutionResult:
    """What one sandboxed execution produced.

    Attributes
    ----------
    status : {"passed", "failed", "error", "timeout", "memory", "crashed"}
        ``passed``: every test passed. ``failed``: the code ran and at least one test failed
        (wrong value, an exception, a forged result channel). ``error``: the code could not be
        run (does not parse, raised while loading, no such entry point, too large).
        ``timeout``: the deadline (wall clock, or the CPU limit) was hit. ``memory``: the
        address-space limit was hit (MemoryError). ``crashed``: the process died (a signal,
        an early ``os._exit``, a killed worker) before reporting every test.
    outcomes : tuple of TestOutcome
        One per test case, in order; cases that never ran are failed with the reason.
    elapsed_ms : float
        Wall-clock time of the execution as seen by the caller (queueing excluded).
    reason : str
        One short line saying why the status is what it is ("" when passed).
    stderr : str
        The first few kilobytes of the process's standard error: what the code wrote, and
        the traceback of an exception it raised (one ``File "...", line N, in name`` line
        per frame, as Python prints it, without the source lines).
    """

    status: Status
    outcomes: tuple[TestOutcome, ...]
    elapsed_ms: float
    reason: str
    stderr: str

    @property
    def passed_count(self) -> int:
        """Number of test cases that passed."""
        return sum(1 for outcome in self.outcomes if outcome.passed)

    @property
    def total(self) -> int:
        """Number of test cases (1 for an assertion script)."""
        return len(self.outcomes)

    @property
    def pass_rate(self) -> float:
        """``passed_count / total``; with no test cases, 1.0 if the code ran cleanly else 0.0."""
        if not self.outcomes:
            return 1.0 if self.status == "passed" else 0.0
        return self.passed_count / len(self.outcomes)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-friendly dict of the result."""
        return record_dict(
            self, "status passed_count total pass_rate elapsed_ms reason stderr outcomes"
        )

    def __repr__(self) -> str:
        reason = f", reason={self.reason!r}" if self.reason else ""
        return (
            f"ExecutionResult(status={self.status!r}, passed={self.passed_count}/{self.total}, "
            f"elapsed_ms={self.elapsed_ms:.1f}{reason})"
        )


@dataclass(frozen=True)
class ExecutionOutput:
    """The value one call of a function returned inside the sandbox (:func:`execute_code`).

    Attributes
    ----------
    ok : bool
        True when the call returned a value that could be sent back as plain data.
    value : Any
        The returned value, rebuilt in the parent from its JSON encoding (None when not ok).
        Only plain data crosses: None, bool, int, float, str, bytes, list, tuple, dict, set,
        frozenset, nested.
    error : str or None
        Why there is no value (an exception, a timeout, an unsupported return type, ...).
    status : str
        "passed" when the call returned plain data; otherwise the status of the execution
        ("failed" for an exception or a non-data value, "timeout", "memory", "crashed",
        "error"; see :class:`ExecutionResult`).
    elapsed_ms : float
        Wall-clock time of the execution.
    """

    ok: bool
    value: Any
    error: str | None
    status: Status
    elapsed_ms: float

    def __repr__(self) -> str:
        if self.ok:
            return f"ExecutionOutput(ok=True, value={self.value!r})"
        return f"ExecutionOutput(ok=False, status={self.status!r}, error={self.error!r})"
