"""The package layout: short modules, and no reaching into another package's private modules.

A newcomer finds each thing where its name says: every module holds one job and stays under
600 lines (``sandbox/_worker.py`` ships whole into the sandbox, so it is the one exception),
what one package shares with another is importable from that package (in its ``__all__``, or
named in its docstring), not imported from its private modules, and the tests of a
subpackage are in the folder of ``tests/`` named after it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lift_metrics"
MAX_LINES = 600
#: ships whole into the sandbox (it must not import the package)
LONG_ALLOWED = {"lift_metrics/sandbox/_worker.py"}


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package_of(path: Path) -> str:
    """The package a module belongs to (the module itself for a package's ``__init__``)."""
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imported(tree: ast.AST, package: str) -> list[tuple[int, str, str | None]]:
    """(line, module, imported name or None) of every import of this project in ``tree``."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing package
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found += [(node.lineno, module, alias.name) for alias in node.names]
    return [item for item in found if item[1].split(".")[0] == "lift_metrics"]


def _private_owner(module: str) -> str | None:
    """The package whose private module ``module`` is (None for a public module)."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_"):
            return ".".join(parts[:index])
    return None


def _private_name(name: str | None) -> bool:
    return name is not None and name.startswith("_") and not name.startswith("__")


def _home(module: str) -> str:
    """The package that ``module`` belongs to."""
    base = ROOT.joinpath(*module.split("."))
    return module if (base / "__init__.py").is_file() else module.rpartition(".")[0]


def _inside(package: str, owner: str) -> bool:
    return package == owner or package.startswith(owner + ".")


def _cross_package_private_imports(path: Path) -> list[str]:
    package = _package_of(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad: list[str] = []
    for line, module, name in _imported(tree, package):
        target = module
        if name is not None and name.startswith("_") and _is_module(f"{module}.{name}"):
            target = f"{module}.{name}"
        owner = _private_owner(target)
        if owner is not None and not _inside(package, owner):
            bad.append(f"{_relative(path)}:{line}: imports {target}")
        elif _private_name(name) and not _inside(package, _home(module)):
            bad.append(f"{_relative(path)}:{line}: imports {module}.{name}")
    return bad


@pytest.mark.parametrize("path", _sources(), ids=_relative)
def test_no_module_is_over_600_lines(path: Path) -> None:
    if _relative(path) in LONG_ALLOWED:
        pytest.skip("ships whole into the sandbox")
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{_relative(path)} has {lines} lines (at most {MAX_LINES})"


@pytest.mark.parametrize("path", _sources(), ids=_relative)
def test_no_module_imports_another_packages_private_module(path: Path) -> None:
    assert _cross_package_private_imports(path) == []


def test_the_checks_see_what_they_are_meant_for() -> None:
    """A cross-package private import is found; a same-package one and lift_metrics._x pass."""
    package = "lift_metrics.ir"
    tree = ast.parse(
        "from lift_metrics.code._semantic import rescale_similarity\n"
        "from lift_metrics.ir._model import IR\n"
        "from lift_metrics._checks import check_real\n"
        "def f():\n    from lift_metrics.code import _quality\n"
    )
    owners = [
        _private_owner(f"{m}.{n}" if n and _is_module(f"{m}.{n}") else m)
        for _, m, n in _imported(tree, package)
    ]
    assert owners == ["lift_metrics.code", "lift_metrics.ir", "lift_metrics", "lift_metrics.code"]
    assert [_inside(package, o) for o in owners if o] == [False, True, True, False]


#: test folders that are about no one subpackage: what breaks (faults) and the shipped data
CROSS_CUTTING_TESTS = {"faults", "datasets"}


def test_the_tests_mirror_the_subpackages() -> None:
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    folders = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and p.name[0] != "_"}
    assert folders - CROSS_CUTTING_TESTS == packages
    loose = {p.stem.removeprefix("test_") for p in (ROOT / "tests").glob("test_*.py")}
    assert sorted(loose & packages) == []  # a subpackage's tests go in its folder
