r"""Running untrusted code against tests: safe and fast.

``Sandbox`` keeps warm fork-server workers (inside bwrap when it can start: PID, network, IPC
and mount namespaces, only the interpreter, its standard library and the packages named in
``importable`` visible and read-only, private /tmp, cleared environment) and forks a fresh
child per execution under rlimits, an unprivileged uid when root, Landlock and a seccomp
filter. Input/output cases are judged in the trusted parent from a bounded JSON encoding of
the returned value, with exact types. ``SandboxUnavailableError`` and
``SandboxIsolationWarning`` are importable from here too, outside ``__all__``; their home is
:mod:`lift_metrics.errors`.

>>> from lift_metrics.sandbox import execute_code
>>> execute_code("def add(a, b):\n    return a + b\n", {"a": 2, "b": 3}).value
5
"""

from __future__ import annotations

from lift_metrics.errors import (
    SandboxIsolationWarning as SandboxIsolationWarning,
    SandboxUnavailableError as SandboxUnavailableError,
)
from lift_metrics.sandbox._default import execute_calls, execute_code, get_default_sandbox
from lift_metrics.sandbox._pool import Sandbox
from lift_metrics.sandbox._results import ExecutionOutput, ExecutionResult, TestOutcome

__all__ = [
    "ExecutionOutput",
    "ExecutionResult",
    "Sandbox",
    "TestOutcome",
    "execute_calls",
    "execute_code",
    "get_default_sandbox",
]
