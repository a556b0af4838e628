"""The error convention (docs/errors.md): bad input raises a ``LiftMetricsError``; anything
else is a bug, and the command line shows its traceback instead of calling it bad input."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import lift_metrics
from lift_metrics.cli import CommandError, main
from lift_metrics.errors import InputTypeError, InputValueError, LiftMetricsError

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lift_metrics"

#: Ships whole into the sandbox and must not import the package: its errors stay builtin.
SANDBOX_WORKER = "lift_metrics/sandbox/_worker.py"

#: The few plain ``raise ValueError``/``raise TypeError`` left: internal invariants, not input.
#: Key: (module, enclosing function, builtin) -> why it is not an input error.
BUILTIN_RAISES_ALLOWED = {
    ("lift_metrics/code/_reference.py", "_model", "ValueError"): (
        "the shipped reference model names a feature the code does not know: a packaging bug"
    ),
    ("lift_metrics/ir/_model.py", "_callable_parameters", "ValueError"): (
        "a pydantic validator: pydantic turns it into the ValidationError that names the field"
    ),
    ("lift_metrics/_io.py", "to_jsonable", "TypeError"): (
        "an object lift-metrics writes has no JSON form: a bug in the writer"
    ),
    ("lift_metrics/_keywords.py", "keyword_arguments", "TypeError"): (
        "a keyword the function does not take, or a required one missing: the TypeError Python "
        "raises for a call that does not fit a written-out signature"
    ),
}


def _raises_in(source: str) -> list[tuple[str, str, int]]:
    """``(enclosing function, builtin, line)`` of each ``raise ValueError``/``TypeError``."""
    found = []
    scopes: list[tuple[ast.AST, str]] = [(ast.parse(source), "<module>")]
    while scopes:
        node, function = scopes.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Raise) and child.exc is not None:
                exc = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
                if isinstance(exc, ast.Name) and exc.id in ("ValueError", "TypeError"):
                    found.append((function, exc.id, child.lineno))
            inner = (
                child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else None
            )
            scopes.append((child, inner or function))
    return sorted(found, key=lambda site: site[2])


def _builtin_raises() -> list[tuple[str, str, str, int]]:
    """``(module, function, builtin, line)`` over the package, the sandbox worker aside."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        if module != SANDBOX_WORKER:
            source = path.read_text(encoding="utf-8")
            found += [(module, *site) for site in _raises_in(source)]
    return found


def test_bad_input_is_never_raised_as_a_plain_builtin() -> None:
    unexpected = [
        f"{module}:{line} ({function}) raises {builtin}"
        for module, function, builtin, line in _builtin_raises()
        if (module, function, builtin) not in BUILTIN_RAISES_ALLOWED
    ]
    assert unexpected == [], (
        "raise InputValueError/InputTypeError (lift_metrics.errors) for bad input, or add the "
        f"site to BUILTIN_RAISES_ALLOWED with its reason: {unexpected}"
    )


def test_the_allow_list_has_no_stale_entries() -> None:
    present = {(module, function, builtin) for module, function, builtin, _ in _builtin_raises()}
    assert set(BUILTIN_RAISES_ALLOWED) <= present


def test_the_check_finds_every_form_of_a_plain_raise() -> None:
    source = textwrap.dedent(
        """
        def f(x):
            if x:
                raise ValueError("x")
            def g():
                raise TypeError
            raise InputValueError("fine")
        raise TypeError("at import")
        """
    )
    assert _raises_in(source) == [
        ("f", "ValueError", 4),
        ("g", "TypeError", 6),
        ("<module>", "TypeError", 8),
    ]


def test_the_input_errors_are_builtins_too() -> None:
    assert issubclass(InputValueError, LiftMetricsError)
    assert issubclass(InputValueError, ValueError)
    assert issubclass(InputTypeError, LiftMetricsError)
    assert issubclass(InputTypeError, TypeError)
    assert not issubclass(LiftMetricsError, ValueError | TypeError)
    with pytest.raises(ValueError, match="k must"):
        raise InputValueError("k must be >= 1")
    with pytest.raises(TypeError, match="k must"):
        raise InputTypeError("k must be an integer")


def _error_classes() -> list[tuple[str, type[BaseException]]]:
    from lift_metrics.ir import IRParseError
    from lift_metrics.optimizers import TrackingError
    from lift_metrics.sandbox import SandboxUnavailableError
    from lift_metrics.scoring import SampleError
    from lift_metrics.scoring._ray import RayUnavailableError
    from lift_metrics.stats import RecordError
    from lift_metrics.validation import LabelFileError, TooFewScoresError

    return [
        ("IRParseError", IRParseError),
        ("RecordError", RecordError),
        ("SampleError", SampleError),
        ("LabelFileError", LabelFileError),
        ("TooFewScoresError", TooFewScoresError),
        ("TrackingError", TrackingError),
        ("SandboxUnavailableError", SandboxUnavailableError),
        ("RayUnavailableError", RayUnavailableError),
        ("CommandError", CommandError),
    ]


#: the builtin each error class also subclasses, so that handlers catching the builtin match
BUILTIN_BASES: dict[str, type[BaseException]] = {
    "IRParseError": ValueError,
    "RecordError": ValueError,
    "SampleError": ValueError,
    "LabelFileError": ValueError,
    "TooFewScoresError": ValueError,
    "TrackingError": RuntimeError,
    "SandboxUnavailableError": RuntimeError,
    "RayUnavailableError": ImportError,
    "CommandError": Exception,
}


@pytest.mark.parametrize(("name", "cls"), _error_classes(), ids=lambda v: getattr(v, "__name__", v))
def test_the_project_errors_keep_their_builtin_base(name: str, cls: type[BaseException]) -> None:
    assert issubclass(cls, LiftMetricsError)
    assert issubclass(cls, BUILTIN_BASES[name])


def test_the_errors_are_exported() -> None:
    for name in ("LiftMetricsError", "InputValueError", "InputTypeError"):
        assert name in lift_metrics.__all__
    assert lift_metrics.LiftMetricsError is LiftMetricsError


def test_argument_checks_raise_the_input_errors() -> None:
    with pytest.raises(InputTypeError, match=r"^latency_ms must be a real number"):
        lift_metrics.latency_penalty("fast")  # type: ignore[arg-type]
    with pytest.raises(InputValueError, match=r"^latency_ms must be >= 0"):
        lift_metrics.latency_penalty(-1.0)


def _bug(*args: Any, **kwargs: Any) -> Any:
    raise ValueError("a bug inside the command")


def test_a_bug_inside_a_command_is_not_called_bad_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import lift_metrics.stats._tiers as tiers

    monkeypatch.setattr(tiers, "summarize_tiers", _bug)
    with pytest.raises(ValueError, match="a bug inside the command") as info:
        main(["report"])
    assert info.traceback[-1].name == "_bug"  # the traceback reaches the bug
    assert "error:" not in capsys.readouterr().err


def test_bad_input_inside_a_command_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import lift_metrics.stats._tiers as tiers

    def bad_input(*args: Any, **kwargs: Any) -> Any:
        raise InputValueError("pass_weight must be >= 0, got -1")

    monkeypatch.setattr(tiers, "summarize_tiers", bad_input)
    assert main(["report"]) == 2
    err = capsys.readouterr().err
    assert err == "lift-metrics report: error: --pass-weight must be >= 0, got -1\n"


def test_a_bug_shows_its_traceback_and_exits_1(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        import lift_metrics.stats._tiers as tiers
        from lift_metrics.cli import main

        def the_buggy_function(*args, **kwargs):
            raise TypeError("unsupported operand")

        tiers.summarize_tiers = the_buggy_function
        sys.exit(main(["report"]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    assert "the_buggy_function" in done.stderr
    assert done.stderr.rstrip().endswith("TypeError: unsupported operand")


def test_an_option_dspy_refuses_is_bad_input() -> None:
    pytest.importorskip("dspy")
    from lift_metrics.lm import resolve_lm

    with pytest.raises(InputValueError, match="num_retries must be a nonnegative integer"):
        resolve_lm({"model": "openai/gpt-4o-mini", "num_retries": -1})
