"""The process-wide default sandbox and :func:`execute_code` built on it."""

from __future__ import annotations

import atexit
import os
import re
import threading
from collections.abc import Sequence
from typing import Any

from lift_metrics._checks import check_int
from lift_metrics.errors import InputTypeError
from lift_metrics.sandbox._pool import Sandbox
from lift_metrics.sandbox._prepare import _check_cases
from lift_metrics.sandbox._results import ExecutionOutput, ExecutionResult, Status, TestOutcome
from lift_metrics.sandbox._worker import DecodeError, Unsupported, decode_value

_default: Sandbox | None = None
_default_lock = threading.Lock()


def _close_default() -> None:
    global _default
    with _default_lock:
        box, _default = _default, None
    if box is not None:
        box.close()


atexit.register(_close_default)


#: the most workers the default sandbox grows to
MAX_DEFAULT_WORKERS = 32


def get_default_sandbox(*, workers: int | None = None) -> Sandbox:
    """Return the process-wide sandbox, creating it on first use (closed at interpreter exit).

    It is ``Sandbox()`` with the defaults (2 workers, 5 s, 512 MiB, isolation "auto") that
    grows with its callers: when every worker is busy and another thread asks for an
    execution, it adds a worker, up to 32, so that ``dspy.Evaluate(num_threads=8)`` gets 8
    executions at a time. If it was closed, the next call creates a new one. Thread-safe.

    Parameters
    ----------
    workers : int, optional
        Make sure the sandbox has at least this many worker slots (capped at 32); they start
        on first use.

    Returns
    -------
    Sandbox
        The shared sandbox.

    Raises
    ------
    TypeError, ValueError
        ``workers`` not an integer >= 1.

    Examples
    --------
    >>> get_default_sandbox() is get_default_sandbox()
    True
    """
    global _default
    wanted = None if workers is None else check_int("workers", workers, minimum=1)
    with _default_lock:
        # a forked child gets its own: the parent's workers are not its to use
        if _default is None or _default.closed or _default._owner_pid != os.getpid():
            _default = Sandbox()
            _default._max_workers = MAX_DEFAULT_WORKERS
        box = _default
    if wanted is not None and wanted > box.workers:
        box._grow(min(wanted, MAX_DEFAULT_WORKERS))
    return box


def execute_code(
    code: str,
    inputs: dict[str, Any],
    *,
    entry_point: str | None = None,
    timeout_s: float | None = None,
    sandbox: Sandbox | None = None,
) -> ExecutionOutput:
    r"""Call the entry point of ``code`` with ``inputs`` in the sandbox and return its value.

    The ``execute_code(code, inputs)`` of the original specification, run in a fresh isolated
    process.

    Parameters
    ----------
    code : str
        Python source defining the function. Untrusted.
    inputs : dict
        Keyword arguments for the call (plain data).
    entry_point : str, optional
        Function to call; None: the only top-level function of ``code``.
    timeout_s : float, optional
        Wall-clock limit; defaults to the sandbox's (5 s for the default sandbox).
    sandbox : Sandbox, optional
        Where to run; defaults to :func:`get_default_sandbox`.

    Returns
    -------
    ExecutionOutput
        ``.ok``, ``.value`` (the returned value rebuilt from plain data), ``.error``,
        ``.status`` and ``.elapsed_ms``. It never raises because of the code under test.

    Raises
    ------
    TypeError, ValueError
        ``code`` not a str, ``inputs`` not a dict of plain data with identifier keys,
        ``entry_point`` not an identifier, ``timeout_s`` not > 0.

    Notes
    -----
    The specification compares ``execute_code(code, inputs) == expected``; here write
    ``out.ok and out.value == expected``, or better use :meth:`Sandbox.run_tests`, which
    compares with exact types in the trusted parent. Only plain data comes back (None, bool,
    int, float, str, bytes, list, tuple, dict, set, frozenset); any other return type gives
    ``ok=False``.

    Examples
    --------
    >>> out = execute_code("def double(x):\n    return [x, x]\n", {"x": 21})
    >>> out.ok, out.value
    (True, [21, 21])
    >>> execute_code("def f():\n    return 1 / 0\n", {}).error
    'ZeroDivisionError: division by zero'
    """
    if not isinstance(inputs, dict):
        raise InputTypeError(
            f"inputs must be a dict of keyword arguments, got {type(inputs).__name__}"
        )
    return _calls(code, [inputs], "inputs", entry_point, timeout_s, sandbox)[0]


def execute_calls(
    code: str,
    inputs: Sequence[dict[str, Any]],
    *,
    entry_point: str | None = None,
    timeout_s: float | None = None,
    sandbox: Sandbox | None = None,
) -> tuple[ExecutionOutput, ...]:
    r"""Call the entry point of ``code`` once per keyword-argument dict, all in one process.

    :func:`execute_code` for several inputs: one fresh isolated process runs the calls in
    order, so a batch costs about one execution (a few ms) however many calls it holds.

    Parameters
    ----------
    code : str
        Python source defining the function. Untrusted.
    inputs : sequence of dict
        Keyword arguments of each call (plain data, identifier keys).
    entry_point : str, optional
        Function to call; None: the only top-level function of ``code``.
    timeout_s : float, optional
        Wall-clock limit of the whole batch; defaults to the sandbox's.
    sandbox : Sandbox, optional
        Where to run; defaults to :func:`get_default_sandbox`.

    Returns
    -------
    tuple of ExecutionOutput
        One per input, in order. A call that raised has ``ok=False``, ``status="failed"``
        and the exception as ``error``; the calls after it still run. When the batch stops
        early (a timeout, the memory limit, a crash), the call that stopped it and those
        after it have that status (``"timeout"``, ``"memory"``, ``"crashed"``) and an error
        starting with ``"did not run"``; code that cannot load gives every call ``"error"``.
        ``elapsed_ms`` is the whole batch's.

    Raises
    ------
    TypeError, ValueError
        ``code`` not a str, ``inputs`` not a sequence of dicts of plain data with identifier
        keys (the message names ``inputs[i]``), ``entry_point`` not an identifier,
        ``timeout_s`` not > 0.

    Notes
    -----
    The calls share the process, as the I/O cases of :meth:`Sandbox.run_tests` do: a call
    sees what earlier calls left in module globals. Each call gets its own copy of its
    inputs.

    Examples
    --------
    >>> outs = execute_calls("def inv(x):\n    return 1 / x\n", [{"x": 2}, {"x": 0}, {"x": 4}])
    >>> [(out.ok, out.value) for out in outs]
    [(True, 0.5), (False, None), (True, 0.25)]
    >>> outs[1].error
    'ZeroDivisionError: division by zero'
    """
    if isinstance(inputs, str | bytes | dict) or not isinstance(inputs, Sequence):
        raise InputTypeError(
            f"inputs must be a sequence of keyword-argument dicts, got {type(inputs).__name__}"
        )
    for index, kwargs in enumerate(inputs):
        if not isinstance(kwargs, dict):
            raise InputTypeError(
                f"inputs[{index}] must be a dict of keyword arguments, got {type(kwargs).__name__}"
            )
    return _calls(code, list(inputs), None, entry_point, timeout_s, sandbox)


def _calls(
    code: str,
    inputs: list[dict[str, Any]],
    label: str | None,
    entry_point: str | None,
    timeout_s: float | None,
    sandbox: Sandbox | None,
) -> tuple[ExecutionOutput, ...]:
    """Run the calls and rebuild each returned value; ``label`` names a single input."""
    try:
        _check_cases([(kwargs, None) for kwargs in inputs])
    except (TypeError, ValueError) as exc:
        detail = str(exc)
        if label is not None:
            for old in ("tests[0][0] (the inputs)", "tests[0][0]", "tests[0]"):
                detail = detail.replace(old, label)
        else:
            detail = re.sub(r"tests\[(\d+)\](?:\[0\])?(?: \(the inputs\))?", r"inputs[\1]", detail)
        raise type(exc)(detail) from None
    box = get_default_sandbox() if sandbox is None else sandbox
    cases = [(kwargs, None) for kwargs in inputs]
    result, trees = box._run(code, cases, entry_point=entry_point, timeout_s=timeout_s)
    return tuple(
        _output(result, outcome, tree) for outcome, tree in zip(result.outcomes, trees, strict=True)
    )


def _output(result: ExecutionResult, outcome: TestOutcome, tree: Any) -> ExecutionOutput:
    """One call's output: its value rebuilt from the tree, or why there is none."""
    if tree is not None:  # the call returned (checked frames), whatever came after it
        try:
            value = decode_value(tree)
        except DecodeError:
            value = Unsupported("?", "malformed")
        if isinstance(value, Unsupported):
            error = f"returned {value!r}, which is not plain data"
            return ExecutionOutput(False, None, error, "failed", result.elapsed_ms)
        return ExecutionOutput(True, value, None, "passed", result.elapsed_ms)
    error = outcome.error or result.reason
    status: Status = result.status
    stopped = error.startswith(("did not run", "MemoryError (memory limit"))
    if status in ("passed", "failed") or (status != "error" and not stopped):
        status = "failed"  # this call raised; the calls after it ran on
    return ExecutionOutput(False, None, error, status, result.elapsed_ms)
