"""Test doubles for the code_quality family: fake sandboxes and an embedder that must not run.

``FakeSandbox`` (and ``testkit.HashEmbedder``) are for unit tests of the metrics' own logic
only; the tests using the ``real_sandbox`` fixture or marked ``slow`` use the real sandbox
and model.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from lift_metrics.sandbox import ExecutionResult, TestOutcome


class FakeSandbox:
    """Runs TRUSTED test code in-process (exec), exact-type comparison; records each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, str | None, float | None]] = []
        self._lock = threading.Lock()

    def run_tests(
        self,
        code: str,
        tests: Any,
        *,
        entry_point: str | None = None,
        timeout_s: float | None = None,
    ) -> ExecutionResult:
        with self._lock:
            self.calls.append((code, tests, entry_point, timeout_s))
        namespace: dict[str, Any] = {}
        exec(compile(code, "<fake>", "exec"), namespace)
        functions = [
            value
            for key, value in namespace.items()
            if callable(value) and getattr(value, "__module__", None) is None and key != "check"
        ]
        if isinstance(tests, str):
            exec(compile(tests, "<fake-check>", "exec"), namespace)
            candidate = namespace[entry_point] if entry_point else functions[0]
            try:
                namespace["check"](candidate)
            except Exception as exc:
                outcome = TestOutcome(0, False, None, None, None, repr(exc))
                return ExecutionResult("failed", (outcome,), 0.1, "check failed", "")
            return ExecutionResult(
                "passed", (TestOutcome(0, True, None, None, None, None),), 0.1, "", ""
            )
        if entry_point is not None and entry_point not in namespace:
            outcomes = tuple(
                TestOutcome(i, False, inputs, expected, None, "no entry point")
                for i, (inputs, expected) in enumerate(tests)
            )
            return ExecutionResult("error", outcomes, 0.1, f"no function named {entry_point!r}", "")
        function = namespace[entry_point] if entry_point else functions[0]
        outcomes_list = []
        for index, (inputs, expected) in enumerate(tests):
            try:
                actual = function(**inputs)
            except Exception as exc:
                outcomes_list.append(TestOutcome(index, False, inputs, expected, None, repr(exc)))
                continue
            passed = type(actual) is type(expected) and actual == expected
            outcomes_list.append(TestOutcome(index, passed, inputs, expected, repr(actual), None))
        outcomes = tuple(outcomes_list)
        status = "passed" if all(o.passed for o in outcomes) else "failed"
        reason = "" if status == "passed" else "some tests failed"
        return ExecutionResult(status, outcomes, 0.1, reason, "")


class ExplodingSandbox:
    """A sandbox that must never be used (code that does not parse starts no process)."""

    def run_tests(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the sandbox must not be called here")


class ExplodingEmbedder:
    """An embedder that must never be used."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise AssertionError("the embedder must not be called here")


# an add(a, b) reference with its tests and a wrong answer that passes one of the three
REFERENCE = '''def add(a, b):
    """Return the sum of a and b."""
    return a + b
'''
TESTS = [({"a": 1, "b": 2}, 3), ({"a": -1, "b": 1}, 0), ({"a": 2, "b": 2}, 4)]
WRONG = '''def add(a, b):
    """Return the sum of a and b."""
    return a * b
'''  # returns 2, -1, 4: two wrong values of three (only a=2, b=2 passes)
