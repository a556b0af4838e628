"""Running tests against generated code in the sandbox (docs/code.md#test_pass_rate)."""

from __future__ import annotations

import keyword
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from lift_metrics._checks import check_method, check_timeout
from lift_metrics._pyast import with_prompt_helpers
from lift_metrics.code._features import code_features
from lift_metrics.errors import InputTypeError, InputValueError

if TYPE_CHECKING:  # pragma: no cover
    from lift_metrics.sandbox import ExecutionResult

TestCases = Sequence[tuple[Mapping[str, Any], Any]] | str
"""I/O cases ``[(kwargs, expected), ...]`` or a HumanEval-style script defining ``check``."""


class SandboxLike(Protocol):
    """What the metrics need from a sandbox (:class:`lift_metrics.sandbox.Sandbox` has it).

    Comparing behaviour on generated inputs (docs/code.md#behaviour-on-generated-inputs)
    also needs the values returned: a :class:`~lift_metrics.sandbox.Sandbox`, or an object
    with an ``execute_calls(code, inputs, *, entry_point, timeout_s)`` method like
    :func:`lift_metrics.sandbox.execute_calls`. Without one only the tests run.
    """

    def run_tests(
        self,
        code: str,
        tests: Sequence[tuple[dict[str, Any], Any]] | str,
        *,
        entry_point: str | None = None,
        timeout_s: float | None = None,
    ) -> ExecutionResult:
        """Run ``tests`` against ``code`` in isolation."""
        ...  # pragma: no cover


@dataclass(frozen=True)
class NormalizedTests:
    """Validated tests: either I/O cases or an assertion script (internal)."""

    cases: tuple[tuple[dict[str, Any], Any], ...] = ()
    script: str | None = None

    @property
    def count(self) -> int:
        """Number of tests: the I/O cases, or 1 for a script."""
        return 1 if self.script is not None else len(self.cases)

    def payload(self) -> list[tuple[dict[str, Any], Any]] | str:
        """Return what :meth:`Sandbox.run_tests` takes."""
        return self.script if self.script is not None else list(self.cases)


def normalize_tests(tests: Any) -> NormalizedTests:
    """Validate ``tests`` (I/O pairs or a script) and return them in one shape.

    Parameters
    ----------
    tests : list of (dict, object) pairs or str
        ``(keyword arguments, expected result)`` pairs, or an assertion script.

    Returns
    -------
    NormalizedTests
        What :func:`score_code` and :func:`run_answer` take.

    Raises
    ------
    TypeError, ValueError
        If ``tests`` or one of its cases has the wrong shape.

    Examples
    --------
    >>> normalize_tests([({"a": 1}, 2)]).count, normalize_tests("assert True").count
    (1, 1)
    """
    if isinstance(tests, str):
        return NormalizedTests(script=tests) if tests.strip() else NormalizedTests()
    if isinstance(tests, bytes | Mapping) or not isinstance(tests, Sequence):
        raise InputTypeError(
            "tests must be a list of (inputs_dict, expected_output) pairs or an assertion "
            f"script (str), got {type(tests).__name__}"
        )
    cases: list[tuple[dict[str, Any], Any]] = []
    for index, case in enumerate(tests):
        if isinstance(case, str | bytes) or not isinstance(case, Sequence) or len(case) != 2:
            raise InputTypeError(
                f"tests[{index}] must be an (inputs_dict, expected_output) pair, got {case!r:.80}"
            )
        inputs, expected = case
        if not isinstance(inputs, Mapping):
            raise InputTypeError(
                f"tests[{index}][0] must be a dict of keyword arguments, "
                f"got {type(inputs).__name__}"
            )
        for key in inputs:
            if not isinstance(key, str) or not key.isidentifier():
                raise InputValueError(
                    f"tests[{index}][0] keys must be argument names (identifiers), got {key!r}"
                )
        cases.append((dict(inputs), expected))
    return NormalizedTests(cases=tuple(cases))


def check_entry_point(entry_point: Any) -> str | None:
    """Validate an entry-point name (``None`` means the only top-level function).

    Parameters
    ----------
    entry_point : str or None

    Returns
    -------
    str or None
        ``entry_point`` unchanged.

    Raises
    ------
    TypeError
        If it is neither a str nor None.
    ValueError
        If it is not a Python identifier (or is a keyword).

    Examples
    --------
    >>> check_entry_point("add") , check_entry_point(None)
    ('add', None)
    """
    if entry_point is None:
        return None
    if not isinstance(entry_point, str):
        raise InputTypeError(f"entry_point must be a str or None, got {type(entry_point).__name__}")
    if not entry_point.isidentifier() or keyword.iskeyword(entry_point):
        raise InputValueError(f"entry_point must be a Python identifier, got {entry_point!r}")
    return entry_point


def resolve_sandbox(sandbox: Any) -> SandboxLike:
    """``sandbox`` itself, or the process-wide default sandbox when it is ``None``."""
    if sandbox is None:
        from lift_metrics.sandbox import get_default_sandbox

        return get_default_sandbox()
    wanted = "have a run_tests(code, tests, ...) method (lift_metrics.sandbox.Sandbox)"
    check_method("sandbox", sandbox, "run_tests", wanted=wanted)
    return cast(SandboxLike, sandbox)  # it has a callable run_tests method: the protocol


def check_run(
    tests: Any, entry_point: Any, timeout_s: Any, sandbox: Any
) -> tuple[NormalizedTests, str | None, float | None]:
    """Check what running tests takes: the tests, the entry point, the time limit, the sandbox.

    Returns the tests normalised, the entry point and the time limit; the sandbox is checked
    only (``None`` stays the default sandbox, started when tests run).
    """
    normalized = normalize_tests(tests)
    entry = check_entry_point(entry_point)
    timeout = check_timeout(timeout_s)
    if sandbox is not None:
        resolve_sandbox(sandbox)
    return normalized, entry, timeout


@dataclass(frozen=True)
class ExecutedTests:
    """Outcome of running validated tests (internal)."""

    rate: float
    passed: int
    failed: int
    execution: ExecutionResult | None
    reason: str
    wrong: int = 0
    """Failed tests in which the code ran and returned a wrong value (see :func:`count_wrong`)."""


def count_wrong(result: Any, *, script: bool) -> int:
    """Failed tests whose failure is a wrong answer, not a crash or an interface mismatch.

    An I/O case counts when the entry point returned a value unequal to the expected one (the
    sandbox reports no error for it). An assertion script counts when ``check`` failed with
    an ``AssertionError``. A missing entry point, a ``TypeError`` from the call, another
    exception, a timeout or a tampered result channel do not count.
    """
    wrong = 0
    for outcome in result.outcomes:
        if outcome.passed:
            continue
        error = outcome.error
        if script:
            wrong += isinstance(error, str) and error.startswith("AssertionError")
        else:
            wrong += error is None
    return int(wrong)


def run_tests(
    code: str,
    tests: NormalizedTests,
    *,
    entry_point: str | None,
    sandbox: Any,
    timeout_s: float | None,
    prompt: str | None = None,
) -> ExecutedTests:
    """Run validated ``tests`` on ``code``; no process if there are none or it does not parse.

    A check script is run with the helpers that ``prompt`` defines (the task's own, not the
    code's: :func:`lift_metrics._pyast.with_prompt_helpers`).
    """
    error = code_features(code).error
    if error is not None:
        return ExecutedTests(
            0.0, 0, tests.count, None, f"not run: the code does not parse ({error})"
        )
    if tests.count == 0:
        return ExecutedTests(1.0, 0, 0, None, "no tests")
    box = resolve_sandbox(sandbox)
    payload = tests.payload()
    if isinstance(payload, str):
        payload = with_prompt_helpers(payload, prompt, entry_point)
    result = box.run_tests(code, payload, entry_point=entry_point, timeout_s=timeout_s)
    if tests.script is not None:
        passed = 1 if result.status == "passed" else 0
    else:
        passed = min(int(result.passed_count), tests.count)
    failed = tests.count - passed
    wrong = min(count_wrong(result, script=tests.script is not None), failed)
    reason = f"{passed}/{tests.count} passed ({result.status})"
    if result.status != "passed" and result.reason:
        reason += f": {result.reason}"
    return ExecutedTests(passed / tests.count, passed, failed, result, reason, wrong)
