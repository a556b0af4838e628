"""The ``"validated"`` profile of code_quality: tests first, then the no-test reference score."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, cast

from lift_metrics._profiles import FAIL_CEILING
from lift_metrics.code._behaviour import Behaviour, check_behaviour
from lift_metrics.code._breakdown import CodeQualityBreakdown
from lift_metrics.code._degenerate import degenerate_kind
from lift_metrics.code._extract import (
    defines,
    single_function,
)
from lift_metrics.code._features import code_features
from lift_metrics.code._options import (
    DEGENERATE_SCORE,
    PASS_FLOOR,
    RESEMBLANCE_SPAN,
    CodeQualityOptions,
)
from lift_metrics.code._pass_rate import read_answer
from lift_metrics.code._stub import stub_kind
from lift_metrics.code._tests import (
    ExecutedTests,
    NormalizedTests,
    SandboxLike,
    resolve_sandbox,
    run_tests,
)
from lift_metrics.code._weighted import _background, _run_concurrently
from lift_metrics.similarity import (
    Embedder,
)

BEHAVIOUR_SPAN = 0.7
"""With tests, how much of the score above the pass floor (0.25) disagreeing with the
reference on every generated input takes away (see :func:`behaviour_score`)."""


def validated_score(passed: int, total: int, resemblance: float) -> float:
    """Return the validated profile's score from the tests passed and the reference resemblance.

    Parameters
    ----------
    passed, total : int
        Tests passed (k) and tests given (n >= 1).
    resemblance : float
        The no-test reference score r in [0, 1].

    Returns
    -------
    float
        ``0.2 r`` when ``k = 0``; else ``0.25 + 0.75 (k - 1 + p) / n`` with
        ``p = 1 - 0.3 (1 - r)``.

    Examples
    --------
    >>> validated_score(0, 5, 1.0), validated_score(5, 5, 1.0)
    (0.2, 1.0)
    >>> round(validated_score(1, 5, 0.0), 3)  # one test passed beats any all-failing output
    0.355
    """
    r = min(1.0, max(0.0, float(resemblance)))
    if passed <= 0:
        return FAIL_CEILING * r
    position = 1.0 - RESEMBLANCE_SPAN * (1.0 - r)
    return min(1.0, PASS_FLOOR + (1.0 - PASS_FLOOR) * (passed - 1 + position) / total)


def behaviour_score(tests_score: float, passed: int, agreed: int, compared: int) -> float:
    """Return a with-tests score weighed by the behaviour on generated inputs.

    Parameters
    ----------
    tests_score : float
        :func:`validated_score` of the given tests.
    passed : int
        Given tests passed (k).
    agreed, compared : int
        Generated inputs on which the code agreed with the reference, and how many were
        compared (0: nothing compared, the score is unchanged).

    Returns
    -------
    float
        With ``f = 1 - 0.7 (1 - agreed / compared)``: ``0.25 + (tests_score - 0.25) f``
        when ``k >= 1`` (code that passes a test stays at or above 0.25, above any code that
        fails every test), ``tests_score * f`` when ``k = 0`` (at most 0.2 either way).

    Examples
    --------
    >>> round(behaviour_score(0.976, 5, 0, 20), 4), behaviour_score(1.0, 5, 20, 20)
    (0.4678, 1.0)
    >>> behaviour_score(0.9, 5, 0, 0), round(behaviour_score(0.2, 0, 10, 20), 3)
    (0.9, 0.13)
    """
    if compared <= 0:
        return tests_score
    factor = 1.0 - BEHAVIOUR_SPAN * (1.0 - agreed / compared)
    if passed <= 0:
        return tests_score * factor
    return PASS_FLOOR + (tests_score - PASS_FLOOR) * factor


def _tested_score(passed: int, total: int, r: float, checked: Behaviour | None) -> float:
    """Return the score with tests, weighed by the behaviour where it was compared."""
    if checked is None or not checked.total:
        return validated_score(passed, total, r)
    if passed and checked.agreed < checked.total:
        # resemblance orders only code that agrees everywhere: a near copy with a bug the
        # generated inputs show never outranks a correct rewrite that passes as many tests
        r = 0.0
    tests_score = validated_score(passed, total, r)
    return behaviour_score(tests_score, passed, checked.agreed, checked.total)


def _untested_function_kind(code: str, reference_code: str, asked: str | None) -> str | None:
    """Return why parsed code without tests is no attempt at the function asked for, or None."""
    if asked is not None and not defines(code, asked):
        return f"no function {asked!r} defined"
    placeholder = stub_kind(code, reference_code, asked)
    if placeholder is not None:
        return f"the entry function is a placeholder ({placeholder})"
    return None


def _validated(
    predicted: str,
    expected: str,
    normalized: NormalizedTests,
    options: CodeQualityOptions,
    entry: str | None,
    prompt: str | None,
    embedder: Embedder | None,
    sandbox: SandboxLike | None,
) -> CodeQualityBreakdown:
    """Return the validated profile (see :func:`code_quality`'s Notes)."""
    from lift_metrics.code._reference import reference_score

    has_tests = normalized.count > 0
    code = read_answer(predicted, entry, prompt)
    reference_code = read_answer(expected, entry, prompt)
    candidate = code_features(code)
    reference = code_features(reference_code)
    # a function is asked for when there are tests, an entry point, or a reference that is
    # one function definition (snippet references, as in CoNaLa, are not)
    asked = entry if entry is not None else single_function(reference_code)
    wants_function = has_tests or asked is not None
    components: dict[str, float] = {"syntax": 1.0 if candidate.parses else 0.0}
    reasons: list[str] = []
    if code != predicted:
        reasons.append("read: code extracted from the answer (fences, prose or prompt)")
    if not reference.parses:
        reasons.append(f"reference: does not parse ({reference.error}); its text is compared")

    def result(score: float, **extra: Any) -> CodeQualityBreakdown:
        executed: ExecutedTests | None = extra.get("executed")
        checked: Behaviour | None = extra.get("behaviour")
        return CodeQualityBreakdown(
            score=min(1.0, max(0.0, score)),
            components=components,
            weights={},
            execution=None if executed is None else executed.execution,
            tests_passed=0 if executed is None else executed.passed,
            tests_total=normalized.count,
            reasons=tuple(reasons),
            stub=bool(extra.get("stub", False)),
            profile=options.profile,
            degenerate=extra.get("degenerate"),
            code=code,
            behaviour_agreed=0 if checked is None else checked.agreed,
            behaviour_total=0 if checked is None else checked.total,
        )

    kind = degenerate_kind(predicted, entry_point=asked, prompt=prompt, function=wants_function)
    stub = candidate.parses and stub_kind(code, reference_code, asked) is not None
    if kind is None and wants_function and not has_tests and candidate.parses:
        kind = _untested_function_kind(code, reference_code, asked)
    if kind is not None:
        components["reference"] = 0.0
        if has_tests:
            components["tests"] = 0.0
        reasons.append(f"degenerate: {kind}; scored {DEGENERATE_SCORE:g}")
        return result(DEGENERATE_SCORE, degenerate=kind, stub=stub)

    behaving = None
    if options.behaviour and candidate.parses and reference.parses and asked is not None:
        behaving = _start_behaviour(
            code, reference_code, asked, normalized, prompt, sandbox, options.timeout_s
        )
    if has_tests:
        box = resolve_sandbox(sandbox) if candidate.parses else None

        def execute() -> ExecutedTests:
            return run_tests(
                code,
                normalized,
                entry_point=entry,
                sandbox=box,
                timeout_s=options.timeout_s,
                prompt=prompt,
            )

        def resemblance() -> float:
            return reference_score(code, reference_code, embedder=embedder)

        ran, measured = _run_concurrently(
            execute, resemblance, overlap=candidate.parses and code != reference_code
        )
        executed = cast(ExecutedTests, ran)  # both were given, so both ran
        r = float(cast(float, measured))
        components["tests"] = executed.rate
        components["tests.wrong_answers"] = executed.wrong / normalized.count
        components["reference"] = r
        checked = _behaviour(behaving, components, reasons)
        score = _tested_score(executed.passed, normalized.count, r, checked)
        if executed.passed == 0:
            reasons.append(
                f"tests: {executed.reason}; no test passed, so at most {FAIL_CEILING:g} "
                f"(reference resemblance {r:.3f})"
            )
        elif executed.passed < normalized.count:
            reasons.append(f"tests: {executed.reason}")
        if executed.passed and r < 1.0:
            reasons.append(f"reference: resemblance {r:.3f} to the reference")
        return result(score, executed=executed, stub=stub, behaviour=checked)

    r = reference_score(code, reference_code, embedder=embedder)
    components["reference"] = r
    checked = _behaviour(behaving, components, reasons)
    runs = candidate.parses or not wants_function
    score = _untested_score(r, checked, None if runs else candidate.error, reasons)
    return result(score, stub=stub, behaviour=checked)


def _untested_score(
    r: float, checked: Behaviour | None, syntax_error: str | None, reasons: list[str]
) -> float:
    """Return the no-test score: behaviour where it was compared, else the resemblance."""
    if checked is not None and checked.total:
        # the generated inputs are the tests: each one the code gets right counts as one
        if r < 1.0:
            reasons.append(f"reference: resemblance {r:.3f} to the reference")
        return validated_score(checked.agreed, checked.total, r)
    if syntax_error is not None:
        reasons.append(
            f"syntax: {syntax_error}; code that cannot run scores at most {FAIL_CEILING:g}"
        )
        return FAIL_CEILING * r
    if r < 1.0:
        reasons.append(f"reference: no tests; reference score {r:.3f}")
    return r


def _start_behaviour(
    code: str,
    reference_code: str,
    asked: str,
    tests: NormalizedTests,
    prompt: str | None,
    sandbox: SandboxLike | None,
    timeout_s: float | None,
) -> Future[Behaviour]:
    """Start the behaviour check in the background (the tests' inputs seed the generation)."""
    box = resolve_sandbox(sandbox)
    seeds = [inputs for inputs, _ in tests.cases]
    return _background().submit(
        check_behaviour, code, reference_code, asked, seeds, prompt, box, timeout_s
    )


def _behaviour(
    pending: Future[Behaviour] | None, components: dict[str, float], reasons: list[str]
) -> Behaviour | None:
    """Wait for the behaviour check; record its component and reason."""
    if pending is None:
        return None
    checked = pending.result()
    if checked.total:
        components["behaviour"] = checked.share
    if checked.reason and checked.agreed < max(checked.total, 1):
        reasons.append(checked.reason)
    return checked
