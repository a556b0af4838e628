"""``lift-metrics analyze PATH...``: static code-quality metrics of files or directories."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from lift_metrics._commands import add_command
from lift_metrics.code._lint import lint_paths
from lift_metrics.code._static import StaticAnalysis, analyze_code, python_files
from lift_metrics.errors import InputValueError

_ROWS: tuple[tuple[str, str], ...] = (
    ("sloc", "SLOC"),
    ("comment_lines", "Comment lines"),
    ("comment_ratio", "Comment ratio"),
    ("avg_complexity", "Avg cyclomatic complexity"),
    ("max_complexity", "Max cyclomatic complexity"),
    ("complexity_grade", "Complexity grade"),
    ("maintainability_index", "Maintainability index"),
    ("maintainability_grade", "Maintainability grade"),
    ("halstead_volume", "Halstead volume"),
    ("halstead_difficulty", "Halstead difficulty"),
    ("halstead_bugs", "Halstead bugs (est.)"),
    ("total_imports", "Total imports"),
    ("framework_imports", "Framework imports"),
    ("classes", "Classes"),
    ("functions", "Functions"),
    ("return_annotation_coverage", "Return annotation coverage"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``analyze`` command."""
    parser = add_command(subparsers, "analyze", _run)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="Python file or directory")
    parser.add_argument(
        "--format", choices=("table", "json"), default="table", help="output format"
    )
    parser.add_argument(
        "--framework-prefix",
        action="append",
        default=None,
        metavar="MODULE",
        help="module counted as a framework import (repeatable), e.g. --framework-prefix dspy",
    )
    parser.add_argument("--no-lint", action="store_true", help="skip the ruff lint findings")


def _show(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def _run(args: argparse.Namespace) -> int:
    """Static code-quality metrics (radon + ast + ruff) of Python files or directories.

    Static code-quality metrics of Python files: SLOC, comment ratio, cyclomatic complexity,
    maintainability index, Halstead metrics, imports, classes, functions, return-annotation
    coverage and lint findings (ruff's pyflakes rules). Directories are searched recursively
    for *.py files (hidden directories and __pycache__ skipped). Exit code 2 if a path is
    missing or a file does not parse.
    """  # noqa: D401 (the command's help text, see add_command)
    from lift_metrics._io import dumps_json

    prefixes = tuple(args.framework_prefix or ())
    files = [file for path in args.paths for file in python_files(path)]
    results: list[StaticAnalysis] = []
    errors: list[str] = []
    for file in files:
        try:
            source = file.read_text(encoding="utf-8")
            results.append(analyze_code(source, framework_prefixes=prefixes, path=str(file)))
        except (InputValueError, UnicodeDecodeError) as exc:  # a bug keeps its traceback
            errors.append(f"{file}: {exc}")
    lint = {} if args.no_lint else lint_paths(result.path or "" for result in results)
    records = []
    for result in results:
        record = result.to_dict()
        if not args.no_lint:
            record["lint_findings"] = len(lint.get(result.path or "", ()))
        records.append(record)

    if args.format == "json":
        print(dumps_json(records))
    else:
        from rich.console import Console
        from rich.table import Table

        console = Console()
        for record in records:
            table = Table(title=record["path"], show_header=True, title_justify="left")
            table.add_column("Metric")
            table.add_column("Value", justify="right")
            for key, label in _ROWS:
                table.add_row(label, _show(record[key]))
            if "lint_findings" in record:
                table.add_row("Lint findings (ruff F)", str(record["lint_findings"]))
            console.print(table)
        if not records:
            console.print("no Python files found")
    for error in errors:
        print(f"lift-metrics analyze: error: {error}", file=sys.stderr)
    return 2 if errors else 0
