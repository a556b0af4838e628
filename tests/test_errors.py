"""The error convention (docs/errors.md): bad input raises a ``LiftMetricsError``; anything
else is a bug, and the command line shows its traceback instead of calling it bad input."""

from __future__ import annotations

import ast
import builtins
import importlib
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import lift_metrics
from lift_metrics import errors
from lift_metrics.cli import main
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


#: the builtin each error class also subclasses, so that handlers catching the builtin match
BUILTIN_BASES: dict[str, type[BaseException]] = {
    "CommandError": Exception,
    "IRParseError": ValueError,
    "JSONTextError": ValueError,
    "PromptTooLongError": ValueError,
    "RayUnavailableError": ImportError,
    "RecordError": ValueError,
    "SandboxUnavailableError": RuntimeError,
    "TOMLTextError": ValueError,
    "TooFewScoresError": ValueError,
    "TrackingError": RuntimeError,
}

#: the classes of lift_metrics.errors that are not LiftMetricsError: (name, base)
NOT_INPUT_ERRORS: dict[str, type[BaseException]] = {
    "BudgetExceeded": BaseException,  # a budget stop DSPy's ``except Exception`` lets through
    "ConstantInputWarning": RuntimeWarning,
    "GenerationCancelledError": RuntimeError,  # a cancelled LM call, like KeyboardInterrupt
    "SandboxIsolationWarning": RuntimeWarning,
}

#: other names of a class in lift_metrics.errors -> the class's own name
ALIASES = {"LabelFileError": "RecordError", "SampleError": "RecordError"}

#: (module, name): the path each class is also imported from, the package that raises it
OTHER_IMPORT_PATHS = [
    ("lift_metrics", "IRParseError"),
    ("lift_metrics.cli", "CommandError"),
    ("lift_metrics._io", "JSONTextError"),
    ("lift_metrics._io", "TOMLTextError"),
    ("lift_metrics._usage", "BudgetExceeded"),
    ("lift_metrics.ir", "IRParseError"),
    ("lift_metrics.ir._parse", "IRParseError"),
    ("lift_metrics.lm", "GenerationCancelledError"),
    ("lift_metrics.lm", "PromptTooLongError"),
    ("lift_metrics.lm._cancel", "GenerationCancelledError"),
    ("lift_metrics.lm._prompt", "PromptTooLongError"),
    ("lift_metrics.optimizers", "BudgetExceeded"),
    ("lift_metrics.optimizers", "TrackingError"),
    ("lift_metrics.optimizers._tracking", "TrackingError"),
    ("lift_metrics.sandbox", "SandboxIsolationWarning"),
    ("lift_metrics.sandbox", "SandboxUnavailableError"),
    ("lift_metrics.sandbox._isolation", "SandboxIsolationWarning"),
    ("lift_metrics.sandbox._isolation", "SandboxUnavailableError"),
    ("lift_metrics.scoring", "SampleError"),
    ("lift_metrics.scoring._ray", "RayUnavailableError"),
    ("lift_metrics.scoring._samples", "SampleError"),
    ("lift_metrics.stats", "RecordError"),
    ("lift_metrics.stats._records", "RecordError"),
    ("lift_metrics.validation", "ConstantInputWarning"),
    ("lift_metrics.validation", "LabelFileError"),
    ("lift_metrics.validation", "TooFewScoresError"),
    ("lift_metrics.validation._agreement", "ConstantInputWarning"),
    ("lift_metrics.validation._labels", "LabelFileError"),
    ("lift_metrics.validation._validate", "TooFewScoresError"),
]

#: exception classes defined outside errors.py, each private to its module: (module, class)
PRIVATE_EXCEPTIONS = {
    ("lift_metrics/_io.py", "_NotJSONError"): "the JSON decoder's hook refusing NaN and infinity",
    ("lift_metrics/dspy_metrics/_fields.py", "_ExampleError"): "a bad example, per field",
    ("lift_metrics/dspy_metrics/_fields.py", "_PartFailedError"): "a part scored 0 with a reason",
    ("lift_metrics/sandbox/_worker_client.py", "_WorkerGoneError"): "a worker process ended",
    (SANDBOX_WORKER, "DecodeError"): "runs in the sandbox without the package",
    (SANDBOX_WORKER, "EncodeError"): "runs in the sandbox without the package",
    (SANDBOX_WORKER, "_CodeEnded"): "runs in the sandbox without the package",
}


def _exception_classes(trees: dict[str, ast.Module]) -> set[tuple[str, str]]:
    """``(module, class)`` of every exception class the modules other than errors.py define.

    A class is an exception class when a base is a builtin exception, a class of
    errors.py, or (followed to a fixed point) another exception class of the modules.
    """
    known = {name for name, value in vars(builtins).items() if _is_exception(value)}
    known |= set(errors.__all__)
    classes = [
        (module, node)
        for module, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    ]
    found: set[tuple[str, str]] = set()
    while True:
        new = {
            (module, node.name)
            for module, node in classes
            if any(_base_name(base) in known for base in node.bases)
        } - found
        if not new:
            break
        found |= new
        known |= {name for _, name in new}
    return {(module, name) for module, name in found if module != "lift_metrics/errors.py"}


def _is_exception(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, BaseException)


def _base_name(base: ast.expr) -> str | None:
    if isinstance(base, ast.Name):
        return base.id
    return base.attr if isinstance(base, ast.Attribute) else None


def test_no_module_but_errors_defines_a_public_exception_class() -> None:
    trees = {
        path.relative_to(ROOT).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    assert _exception_classes(trees) == set(PRIVATE_EXCEPTIONS), (
        "define an exception or warning class in lift_metrics/errors.py (and import it where "
        "it is raised), or, private to one module, add it to PRIVATE_EXCEPTIONS"
    )


def test_the_class_check_follows_bases_through_the_package() -> None:
    source = textwrap.dedent(
        """
        class A(ValueError): ...
        class C(B): ...
        class B(A): ...
        class D(errors.RecordError): ...
        class E(UserWarning): ...
        class F(object): ...
        class G: ...
        """
    )
    trees = {"m.py": ast.parse(source), "lift_metrics/errors.py": ast.parse("class H(A): ...")}
    assert _exception_classes(trees) == {("m.py", name) for name in "ABCDE"}


def test_errors_imports_nothing_else_of_the_package() -> None:
    tree = ast.parse((PACKAGE / "errors.py").read_text(encoding="utf-8"))
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert not [name for name in imported if name and name.startswith("lift_metrics")]


def test_errors_all_lists_every_class_it_defines() -> None:
    defined = {name for name, value in vars(errors).items() if _is_exception(value)}
    assert sorted(errors.__all__) == errors.__all__
    assert set(errors.__all__) == defined


def test_every_class_of_errors_is_a_lift_metrics_error_or_listed() -> None:
    for exported in errors.__all__:
        cls = getattr(errors, exported)
        name = ALIASES.get(exported, exported)
        assert cls.__name__ == name
        if name in NOT_INPUT_ERRORS:
            assert not issubclass(cls, LiftMetricsError)
            assert cls.__mro__[1] is NOT_INPUT_ERRORS[name]
        elif name not in ("LiftMetricsError", "InputValueError", "InputTypeError"):
            assert issubclass(cls, LiftMetricsError)
            assert issubclass(cls, BUILTIN_BASES[name])


def test_the_bad_record_errors_are_one_class() -> None:
    from lift_metrics.scoring import SampleError
    from lift_metrics.stats import RecordError
    from lift_metrics.validation import LabelFileError

    assert LabelFileError is RecordError is SampleError is errors.RecordError
    assert RecordError.__mro__[1:3] == (InputValueError, LiftMetricsError)


@pytest.mark.parametrize(("module", "name"), OTHER_IMPORT_PATHS)
def test_each_class_keeps_the_import_path_of_its_package(module: str, name: str) -> None:
    assert getattr(importlib.import_module(module), name) is getattr(errors, name)


#: classes whose ``__init__`` takes more than the message (pickled by their arguments below)
NOT_PICKLED = {"TooFewScoresError": "its __init__ takes (metric, scored, missing)"}


@pytest.mark.parametrize("name", sorted(set(errors.__all__) - set(NOT_PICKLED)))
def test_each_error_pickles(name: str) -> None:
    cls = getattr(errors, name)
    error = pickle.loads(pickle.dumps(cls("the message")))
    assert type(error) is cls
    assert str(error) == "the message"


def test_too_few_scores_pickles_with_its_arguments() -> None:
    error = errors.TooFewScoresError("code_quality", 2, [("a", "no tests")])
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is errors.TooFewScoresError
    assert (str(again), again.metric, again.scored) == (str(error), "code_quality", 2)
    assert again.missing == (("a", "no tests"),)


def test_budget_exceeded_pickles_with_its_partial_result() -> None:
    error = pickle.loads(pickle.dumps(errors.BudgetExceeded("over", partial=[1, 2])))
    assert (str(error), error.partial) == ("over", [1, 2])


def test_docs_list_every_class_of_errors() -> None:
    text = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert [name for name in errors.__all__ if f"`{name}`" not in text] == []


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
