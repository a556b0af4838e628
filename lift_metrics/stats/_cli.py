"""The ``report``, ``compare`` and ``ab`` commands of ``lift-metrics``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lift_metrics._commands import add_command
from lift_metrics._io import dumps_json
from lift_metrics.errors import InputValueError

FORMATS = ("text", "json", "markdown")
EXAMPLE_TIER_RUNS = "examples/tier_runs.jsonl"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``report``, ``compare`` and ``ab`` subcommands."""
    report = add_command(subparsers, "report", _report)
    report.add_argument("file", metavar="FILE", nargs="?", help="tier run records (JSONL)")
    report.add_argument("--format", choices=FORMATS, default="text", help="output format")
    report.add_argument(
        "--confidence-level", type=float, default=0.95, help="level of the pass-rate intervals"
    )
    report.add_argument("--pass-weight", type=float, default=0.5, help="composite pass weight")
    report.add_argument("--impl-weight", type=float, default=0.5, help="composite impl weight")

    compare = add_command(subparsers, "compare", _compare)
    compare.add_argument("--baseline", required=True, metavar="A", help="baseline report JSON")
    compare.add_argument("--current", required=True, metavar="B", help="current report JSON")
    compare.add_argument("--format", choices=FORMATS, default="text", help="output format")
    compare.add_argument(
        "--threshold", type=float, default=0.05, help="absolute score change (default 0.05)"
    )
    compare.add_argument(
        "--fail-on-regression", action="store_true", help="exit with code 1 on any regression"
    )

    ab = add_command(subparsers, "ab", _ab)
    ab.add_argument("runs", metavar="RUNS", help="run records (JSONL)")
    ab.add_argument("--format", choices=FORMATS, default="text", help="output format")
    ab.add_argument("--n-resamples", type=int, default=10_000, help="bootstrap resamples")
    ab.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ab.add_argument("--confidence-level", type=float, default=0.95, help="level of the intervals")
    ab.add_argument("--treatment", default=None, help="name of the treatment arm")
    ab.add_argument("--control", default=None, help="name of the control arm")


def _console() -> Any:
    from rich.console import Console

    # a terminal gets its own width; pipes and files get wide tables instead of rich's 80
    width = None if sys.stdout.isatty() else 160
    return Console(file=sys.stdout, highlight=False, soft_wrap=False, width=width)


def _emit(output_format: str, result: Any, text: Callable[[Any], None]) -> None:
    """Print ``result`` in one of :data:`FORMATS`.

    The formats are JSON, the result's ``to_markdown()``, or ``text`` (which prints the text
    form on a rich console).
    """
    if output_format == "json":
        print(dumps_json(result))
    elif output_format == "markdown":
        print(result.to_markdown())
    else:
        text(_console())


def _print_table(console: Any, title: str, rows: Sequence[Sequence[str]]) -> None:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for i, header in enumerate(rows[0]):
        table.add_column(header, justify="left" if i == 0 else "right")
    for row in rows[1:]:
        table.add_row(*row)
    console.print(table)


def _report(args: argparse.Namespace) -> int:
    """Per-tier statistics, grades, uplift and cost of pass from tier run records.

    Read tier run records (JSONL, one run per line with the fields tier, passed, impl_rate,
    cost_usd, duration_seconds) and print per-tier statistics: pass rate with a Wilson interval,
    median composite score and its letter grade, uplift over the first tier, cost of pass, and
    the cross-tier variances. Without FILE, the shipped example
    datasets/examples/tier_runs.jsonl is used.
    """
    from lift_metrics.stats._tiers import load_tier_runs, summarize_tiers

    if args.file is None:
        from lift_metrics._paths import datasets_dir

        path = datasets_dir() / EXAMPLE_TIER_RUNS
    else:
        path = Path(args.file)
    report = summarize_tiers(
        load_tier_runs(path),
        pass_weight=args.pass_weight,
        impl_weight=args.impl_weight,
        confidence_level=args.confidence_level,
    )

    def text(console: Any) -> None:
        _print_table(console, f"Tier report: {path}", report.table_rows())
        for line in report.footer_lines():
            console.print(line)

    _emit(args.format, report, text)
    return 0


def _compare(args: argparse.Namespace) -> int:
    """Regressions and improvements between two eval reports.

    Compare two eval reports (JSON {name, results: [...]}, one result per generated sample) case
    by case. A case (keyed model/case) is scored by the mean compile/test/lint score of its
    samples; it regresses when that score drops by more than --threshold (absolute score points)
    and improves when it rises by more. Exit code 1 with --fail-on-regression when any case
    regressed.
    """
    from lift_metrics.stats._compare import compare_reports
    from lift_metrics.stats._reports import EvalReport

    result = compare_reports(
        EvalReport.load(args.baseline), EvalReport.load(args.current), threshold=args.threshold
    )

    def text(console: Any) -> None:
        console.print(result.summary_line())
        _print_table(console, f"{args.baseline} -> {args.current}", result.table_rows())

    _emit(args.format, result, text)
    return 1 if args.fail_on_regression and result.has_regressions else 0


def _ab(args: argparse.Namespace) -> int:
    """Paired A/B analysis of benchmark runs with bootstrap intervals.

    Read A/B run records (JSONL, one RunRecord a line) of exactly two arms, pair them on
    (task_id, repeat) and print arm statistics, paired deltas with bootstrap intervals and
    permutation p-values, the three-gate decision and the interval-aware verdict. Arms:
    --treatment/--control; without them, arms named 'treatment' and 'control' are what they say,
    or else the first arm in the file is the control.
    """
    from lift_metrics.stats._ab import paired_comparison
    from lift_metrics.stats._runs import load_run_records, split_arms

    records = load_run_records(args.runs)
    try:
        treatment, control = split_arms(records, treatment=args.treatment, control=args.control)
    except InputValueError as exc:  # the arms found in the file do not fit --treatment/--control
        raise InputValueError(f"{args.runs}: {exc}") from None
    result = paired_comparison(
        treatment,
        control,
        n_resamples=args.n_resamples,
        confidence_level=args.confidence_level,
        seed=args.seed,
    )

    def text(console: Any) -> None:
        for line in result.summary_lines():
            console.print(line)
        _print_table(console, "Arms", result.arm_rows())
        _print_table(console, "Gates", result.gate_rows())
        _print_table(console, "Paired deltas (treatment - control)", result.delta_rows())

    _emit(args.format, result, text)
    return 0
