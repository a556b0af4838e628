"""The eval-report score measured on Python code: compiles, tests passed/failed, lint findings.

The score is :func:`lift_metrics.stats.forge_score`; this module measures its four inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lift_metrics._records import record_dict, short_repr
from lift_metrics.code._features import check_code, over_limit
from lift_metrics.code._lint import count_lint_findings
from lift_metrics.code._tests import SandboxLike, TestCases, check_run, run_tests

if TYPE_CHECKING:  # pragma: no cover
    from lift_metrics.sandbox import ExecutionResult


@dataclass(frozen=True, repr=False)
class ForgeInputs:
    """The four inputs of :func:`lift_metrics.stats.forge_score`, measured on real code.

    Attributes
    ----------
    compiled : bool
        Whether the code compiles (:func:`compile`, as :mod:`py_compile` does).
    passed, failed : int
        Tests passed and failed in the sandbox (all failed when the code does not compile).
    lint_warnings : int
        Lint findings (ruff's pyflakes rules), syntax errors excluded.
    execution : ExecutionResult or None
        The sandbox result; ``None`` when no process was started.
    reason : str
        Why the code did not compile, or a summary of the test run.
    """

    compiled: bool
    passed: int
    failed: int
    lint_warnings: int
    execution: ExecutionResult | None
    reason: str

    @property
    def score(self) -> float:
        """:func:`lift_metrics.stats.forge_score` of these inputs."""
        from lift_metrics.stats import forge_score

        return float(forge_score(self.compiled, self.passed, self.failed, self.lint_warnings))

    def __repr__(self) -> str:
        return short_repr(self, "compiled passed failed lint_warnings")

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form, score included."""
        status = None if self.execution is None else self.execution.status
        return record_dict(
            self, "compiled passed failed lint_warnings score reason status", status=status
        )


def _compile_error(code: str) -> str | None:
    too_long = over_limit(code)
    if too_long is not None:
        return too_long
    try:
        compile(code, "<generated>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"{type(exc).__name__}: {exc.msg}{where}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"{type(exc).__name__}: {exc}"[:200]
    return None


def forge_inputs(
    code: str,
    tests: TestCases,
    *,
    entry_point: str | None = None,
    sandbox: SandboxLike | None = None,
    timeout_s: float | None = None,
    prompt: str | None = None,
) -> ForgeInputs:
    r"""Measure the inputs of :func:`lift_metrics.stats.forge_score` on Python code.

    Parameters
    ----------
    code : str
        The generated Python code (the whole program: it is run as given).
    tests : list of (dict, object) pairs, or str
        As in :func:`~lift_metrics.code.test_pass_rate` (a script counts as one test).
    entry_point, sandbox, timeout_s
        As in :func:`~lift_metrics.code.test_pass_rate`.
    prompt : str or None, default None
        The task's HumanEval-style prompt: a check script is judged with the helpers it
        defines (``poly``, ``encode_cyclic``), not the code's redefinitions of them.

    Returns
    -------
    ForgeInputs
        ``compiled``, ``passed``, ``failed``, ``lint_warnings``; ``.score`` applies
        :func:`lift_metrics.stats.forge_score`.

    Raises
    ------
    TypeError, ValueError
        For arguments of the wrong type or value, as :func:`test_pass_rate`.

    Notes
    -----
    The inputs on Python code (docs/decisions.md#the-eval-report-score-in-python):
    "compiles" is :func:`compile` succeeding (stricter than :func:`ast.parse`: it also
    rejects ``return`` outside a function); lint warnings are ruff's pyflakes (``F``)
    findings, counted with ``# noqa`` ignored. Code that does not compile runs no process
    and counts every test as failed. The score is
    ``0 if not compiled else 0.4 + 0.5 * passed / (passed + failed) + 0.1 * max(0, 1 - 0.1 *
    lint_warnings)`` with a test score of 0 when there are no tests (the standalone
    :func:`~lift_metrics.code.test_pass_rate` refuses an empty test list instead).

    Examples
    --------
    >>> inputs = forge_inputs("import os\nreturn 1\n", [({"x": 1}, 1)])
    >>> inputs
    ForgeInputs(compiled=False, passed=0, failed=1, lint_warnings=2)
    >>> inputs.reason
    "SyntaxError: 'return' outside function (line 2)"
    """
    code = check_code("code", code)
    normalized, entry, timeout = check_run(tests, entry_point, timeout_s, sandbox)
    lint_warnings = count_lint_findings(code)
    error = _compile_error(code)
    if error is not None:
        return ForgeInputs(False, 0, normalized.count, lint_warnings, None, error)
    if prompt is not None:
        prompt = check_code("prompt", prompt)
    executed = run_tests(
        code, normalized, entry_point=entry, sandbox=sandbox, timeout_s=timeout, prompt=prompt
    )
    return ForgeInputs(
        True, executed.passed, executed.failed, lint_warnings, executed.execution, executed.reason
    )


def forge_score_from_code(
    code: str,
    tests: TestCases,
    *,
    entry_point: str | None = None,
    sandbox: SandboxLike | None = None,
    timeout_s: float | None = None,
    prompt: str | None = None,
) -> float:
    """Return the compile/test/lint score of Python code: ``forge_inputs(...).score``.

    See :func:`forge_inputs` for the parameters, the Python counterparts of the inputs and
    the formula.

    Examples
    --------
    >>> forge_score_from_code("def f(x) return x", [])
    0.0
    """
    return forge_inputs(
        code, tests, entry_point=entry_point, sandbox=sandbox, timeout_s=timeout_s, prompt=prompt
    ).score
