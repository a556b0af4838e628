"""Lint findings from ruff's pyflakes rules (``F``), with pyflakes itself as a fallback."""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lift_metrics._pyast import MAX_CODE_CHARS
from lift_metrics.code._features import check_code

if TYPE_CHECKING:
    from pyflakes.messages import Message

_RUFF_ARGS = (
    "check",
    "--select",
    "F",
    "--output-format",
    "json",
    "--no-cache",
    "--isolated",
    "--ignore-noqa",  # generated code must not silence its own findings with noqa comments
    "--exit-zero",
)
_RUFF_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class LintFinding:
    """One lint finding: rule code (``F401``), message and 1-based position."""

    code: str
    message: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.code} {self.message}"


@functools.lru_cache(maxsize=1)
def _ruff_binary() -> str | None:
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError:
        return None
    try:
        return os.fsdecode(find_ruff_bin())
    except FileNotFoundError:  # pragma: no cover - a broken ruff install
        return None


def lint_backend() -> str:
    """Which linter is used: ``"ruff"`` (preferred) or ``"pyflakes"``.

    Raises
    ------
    ImportError
        If neither ruff nor pyflakes is installed.
    """
    if _ruff_binary() is not None:
        return "ruff"
    try:
        import pyflakes  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "lint findings need ruff (a dependency of lift-metrics): pip install ruff (or pyflakes)"
        ) from exc
    return "pyflakes"


def _parse_ruff(output: str) -> dict[str, list[LintFinding]]:
    findings: dict[str, list[LintFinding]] = {}
    for item in json.loads(output or "[]"):
        code = item.get("code") or "invalid-syntax"
        location = item.get("location") or {}
        finding = LintFinding(
            code=str(code),
            message=str(item.get("message", "")),
            line=int(location.get("row") or 0),
            column=int(location.get("column") or 0),
        )
        findings.setdefault(str(item.get("filename", "-")), []).append(finding)
    return findings


def _run_ruff(binary: str, arguments: Sequence[str], stdin: str | None) -> str:
    completed = subprocess.run(
        [binary, *_RUFF_ARGS, *arguments],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=_RUFF_TIMEOUT_S,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"ruff failed (exit {completed.returncode}): {completed.stderr[-500:]}")
    return completed.stdout


def _pyflakes(code: str, filename: str) -> list[LintFinding]:
    from pyflakes.api import check
    from pyflakes.reporter import Reporter

    class _Collect(Reporter):  # type: ignore[misc]  # pyflakes is untyped (types-pyflakes not installed)
        def __init__(self) -> None:
            self.findings: list[LintFinding] = []

        def unexpectedError(self, filename: str, message: str) -> None:  # noqa: N802
            self.findings.append(LintFinding("invalid-syntax", str(message), 0, 0))

        def syntaxError(  # noqa: N802
            self, filename: str, msg: str, lineno: int, offset: int, text: str
        ) -> None:
            self.findings.append(LintFinding("invalid-syntax", msg, lineno or 0, offset or 0))

        def flake(self, message: Message) -> None:
            text = message.message % message.message_args
            name = type(message).__name__
            line = int(getattr(message, "lineno", 0))
            column = int(getattr(message, "col", 0)) + 1
            self.findings.append(LintFinding(f"pyflakes:{name}", text, line, column))

    reporter = _Collect()
    check(code, filename, reporter)
    return reporter.findings


def lint_code(code: str) -> tuple[LintFinding, ...]:
    r"""Lint findings for one piece of code (pyflakes rules: unused imports, undefined names...).

    Parameters
    ----------
    code : str
        Python source.

    Returns
    -------
    tuple of LintFinding
        In file order. Syntax errors appear as findings with code ``"invalid-syntax"``.

    Raises
    ------
    TypeError
        If ``code`` is not a str.
    ImportError
        If neither ruff nor pyflakes is installed.

    Notes
    -----
    Runs ``ruff check --select F --output-format json --no-cache --isolated --ignore-noqa``
    on the code through stdin (the user's ruff configuration is ignored, and ``# noqa``
    comments in generated code cannot hide findings). Without ruff, pyflakes reports the
    same kinds of problems (codes ``pyflakes:ClassName``). Code over ``MAX_CODE_CHARS`` is
    not linted: one ``too-large`` finding.

    Examples
    --------
    >>> [finding.code for finding in lint_code("import os\n\ndef f():\n    return x\n")]
    ['F401', 'F821']
    >>> lint_code("x = 1\n")
    ()
    """
    code = check_code("code", code)
    if len(code) > MAX_CODE_CHARS:
        return (LintFinding("too-large", f"code over {MAX_CODE_CHARS:,} characters", 0, 0),)
    binary = _ruff_binary()
    if binary is None:
        lint_backend()  # raises the install hint when pyflakes is missing too
        return tuple(_pyflakes(code, "<code>"))
    output = _run_ruff(binary, ["--stdin-filename", "snippet.py", "-"], code)
    return tuple(finding for group in _parse_ruff(output).values() for finding in group)


def count_lint_findings(code: str) -> int:
    r"""Return the number of lint findings in ``code``, syntax errors excluded (:func:`lint_code`).

    Examples
    --------
    >>> count_lint_findings("import os\nimport sys\n")
    2
    """
    return sum(1 for finding in lint_code(code) if finding.code != "invalid-syntax")


def lint_paths(paths: Iterable[str | os.PathLike[str]]) -> dict[str, tuple[LintFinding, ...]]:
    """Lint findings per file, in one ruff run for all files.

    Parameters
    ----------
    paths : iterable of path-like
        Python files (directories are not expanded here).

    Returns
    -------
    dict of str to tuple of LintFinding
        Keyed by the path as given (``str(path)``); files without findings map to ``()``.

    Raises
    ------
    FileNotFoundError
        If a path does not exist.
    ImportError
        If neither ruff nor pyflakes is installed.
    """
    files = [Path(p) for p in paths]
    for file in files:
        if not file.is_file():
            raise FileNotFoundError(f"paths: no such file: {file}")
    result: dict[str, tuple[LintFinding, ...]] = {str(file): () for file in files}
    if not files:
        return result
    binary = _ruff_binary()
    if binary is None:
        lint_backend()
        for file in files:
            text = file.read_text(encoding="utf-8", errors="replace")
            result[str(file)] = tuple(_pyflakes(text, str(file)))
        return result
    by_resolved = {str(file.resolve()): str(file) for file in files}
    output = _run_ruff(binary, ["--", *(str(file.resolve()) for file in files)], None)
    for filename, findings in _parse_ruff(output).items():
        key = by_resolved.get(str(Path(filename).resolve()), filename)
        result[key] = tuple(findings)
    return result
