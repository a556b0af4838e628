"""The test pass rate of an answer: one core behind ``test_pass_rate`` and ``TestPassRate``.

:func:`test_pass_rate_breakdown` reads an answer as the validated code_quality profile reads
it (fences and prose removed, a body-only completion given its prompt, an answer that is not
code never run) and runs the tests in the sandbox (docs/code.md#test_pass_rate).
"""

from __future__ import annotations

from lift_metrics.code._breakdown import CodeQualityBreakdown
from lift_metrics.code._degenerate import degenerate_kind
from lift_metrics.code._extract import complete_with_prompt, extract_code
from lift_metrics.code._features import check_code, code_features
from lift_metrics.code._tests import (
    NormalizedTests,
    SandboxLike,
    TestCases,
    check_run,
    resolve_sandbox,
    run_tests,
)
from lift_metrics.errors import InputValueError


def read_answer(text: str, entry_point: str | None, prompt: str | None) -> str:
    """Return the code to score and run: extracted, and completed by the prompt when body-only."""
    return complete_with_prompt(extract_code(text, entry_point=entry_point), prompt, entry_point)


def run_answer(
    predicted: str,
    tests: NormalizedTests,
    *,
    entry_point: str | None,
    prompt: str | None,
    sandbox: SandboxLike | None,
    timeout_s: float | None,
) -> CodeQualityBreakdown:
    """Run validated tests on an answer, read as the validated profile reads it (internal).

    The core of :func:`test_pass_rate_breakdown` on arguments that are checked already.

    Returns
    -------
    CodeQualityBreakdown
        ``score`` is the share of tests passed (0 for a degenerate answer, which is not
        run); ``components`` holds ``syntax`` and ``tests``.
    """
    code = read_answer(predicted, entry_point, prompt)
    kind = degenerate_kind(predicted, entry_point=entry_point, prompt=prompt, function=True)
    components: dict[str, float] = {"syntax": 1.0 if code_features(code).parses else 0.0}
    if kind is not None:
        components["tests"] = 0.0
        return CodeQualityBreakdown(
            score=0.0,
            components=components,
            weights={},
            execution=None,
            tests_passed=0,
            tests_total=tests.count,
            reasons=(f"tests: not run: degenerate: {kind}",),
            profile="tests",
            degenerate=kind,
            code=code,
        )
    box = resolve_sandbox(sandbox) if components["syntax"] else None
    executed = run_tests(
        code, tests, entry_point=entry_point, sandbox=box, timeout_s=timeout_s, prompt=prompt
    )
    components["tests"] = executed.rate
    return CodeQualityBreakdown(
        score=executed.rate,
        components=components,
        weights={},
        execution=executed.execution,
        tests_passed=executed.passed,
        tests_total=tests.count,
        reasons=() if executed.rate >= 1.0 else (f"tests: {executed.reason}",),
        profile="tests",
        code=code,
    )


def test_pass_rate_breakdown(
    code: str,
    tests: TestCases,
    *,
    entry_point: str | None = None,
    sandbox: SandboxLike | None = None,
    timeout_s: float | None = None,
    prompt: str | None = None,
) -> CodeQualityBreakdown:
    r"""The share of tests ``code`` passes, with the outcomes behind it.

    Parameters
    ----------
    code, tests, entry_point, sandbox, timeout_s, prompt
        As in :func:`test_pass_rate`.

    Returns
    -------
    CodeQualityBreakdown
        ``score`` is what :func:`test_pass_rate` returns; ``components`` holds ``syntax`` (1
        when the code to run parses) and ``tests``; ``execution`` the sandbox's per-test
        outcomes (None when nothing ran); ``tests_passed``/``tests_total``; ``reasons`` one
        line when a test failed; ``degenerate`` why an answer that is not code was not run;
        ``code`` the program that was run; ``profile`` is ``"tests"``.

    Raises
    ------
    TypeError, ValueError
        As :func:`test_pass_rate`.

    Examples
    --------
    >>> result = test_pass_rate_breakdown("def f(x):\n    pass\n", [({"x": 1}, None)])
    >>> result.score, result.degenerate
    (0.0, 'the entry function has no body (pass)')
    """
    code = check_code("code", code)
    if prompt is not None:
        prompt = check_code("prompt", prompt)
    normalized, entry, timeout = check_run(tests, entry_point, timeout_s, sandbox)
    if normalized.count == 0:
        raise InputValueError(
            "tests is empty: a pass rate needs at least one test (no tests is absent "
            f"evidence, never a pass), got {tests!r:.40}"
        )
    return run_answer(
        code, normalized, entry_point=entry, prompt=prompt, sandbox=sandbox, timeout_s=timeout
    )


def test_pass_rate(
    code: str,
    tests: TestCases,
    *,
    entry_point: str | None = None,
    sandbox: SandboxLike | None = None,
    timeout_s: float | None = None,
    prompt: str | None = None,
) -> float:
    r"""Fraction of the tests that ``code`` passes, run in the sandbox.

    Parameters
    ----------
    code : str
        The generated Python code, or a model's answer holding it.
    tests : list of (dict, object) pairs, or str
        Input/output cases ``[(kwargs, expected), ...]``: the entry point is called with
        ``**kwargs`` and its result must equal ``expected`` with exact types (judged in the
        trusted parent process). Or a HumanEval-style assertion script (str) defining
        ``check(candidate)``: it passes when it exits cleanly and counts as one test. It runs
        in a process of its own and sees the code's results as plain data only, so it cannot
        be forged by the code under test either.
    entry_point : str or None, default None
        Function to call; ``None`` means the only top-level function of ``code``.
    sandbox : Sandbox or None, default None
        ``None`` means :func:`lift_metrics.sandbox.get_default_sandbox`.
    timeout_s : float or None, default None
        Per-execution time limit; ``None`` means the sandbox's own.
    prompt : str or None, default None
        A HumanEval-style prompt (signature and docstring): a completion that holds only the
        function body is run as ``prompt + code``, as :func:`~lift_metrics.code.code_quality`
        does, and a check script is judged with the helpers the prompt defines, not the
        code's redefinitions of them.

    Returns
    -------
    float
        passed / number of tests, in [0, 1]. The code is read as
        :func:`~lift_metrics.code.extract_code` reads a model's answer (Markdown fences and
        surrounding prose removed), so a fenced correct solution passes like a plain one.
        :func:`test_pass_rate_breakdown` gives the outcomes behind it.

    Raises
    ------
    TypeError
        If ``code`` is not a str, ``tests`` is not a list of pairs with dict inputs or a str,
        or ``entry_point``/``sandbox`` has the wrong type.
    ValueError
        If there are no tests (an empty list or a blank script: a pass rate without tests is
        not a number, and never a pass), ``timeout_s <= 0``, ``entry_point`` is not an
        identifier, or an input key is not an argument name.

    Notes
    -----
    An answer that is not an attempt at the function
    (:func:`~lift_metrics.code.degenerate_kind`: a placeholder, prose, an entry function
    whose body is ``pass``, ``...`` or ``raise NotImplementedError``) scores 0.0 without
    being run, even where a test expects ``None``: a pass must be computed. Code that does
    not parse scores 0.0 without starting a process. Wrong code, a missing entry point, a
    crash, a timeout or a memory blow-up are not errors: those tests fail (the score says
    so, and :func:`test_pass_rate_breakdown` says why). :class:`lift_metrics.dspy_metrics.
    TestPassRate` is this score as a DSPy metric. (The ``"seed"`` profile of
    :func:`~lift_metrics.code.code_quality` counts no tests as a tests component of 1.0; the
    default profile does not.)

    Examples
    --------
    >>> test_pass_rate("def f(x):\n    return x\n", [({"x": 1}, 1), ({"x": 2}, 3)])
    0.5
    >>> test_pass_rate("def f(x) return x", [({"x": 1}, 1)])
    0.0
    >>> fenced = "Here it is:\n```python\ndef f(x):\n    return x\n```"
    >>> test_pass_rate(fenced, [({"x": 1}, 1)])
    1.0
    """
    return float(
        test_pass_rate_breakdown(
            code,
            tests,
            entry_point=entry_point,
            sandbox=sandbox,
            timeout_s=timeout_s,
            prompt=prompt,
        ).score
    )


# pytest collects any function named test_* that a test module imports; these are not tests.
test_pass_rate.__test__ = False  # type: ignore[attr-defined]
test_pass_rate_breakdown.__test__ = False  # type: ignore[attr-defined]
