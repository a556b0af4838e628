"""The console table and the Markdown report of a finished optimization run."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping
from typing import Any

from lift_metrics._io import format_number
from lift_metrics.optimizers._result import OptimizationResult


def _console(progress: bool) -> Any:
    if not progress:
        return None
    from rich.console import Console

    return Console(stderr=False)


@contextlib.contextmanager
def _status(console: Any, text: str) -> Iterator[None]:
    if console is None:
        yield
        return
    with console.status(text + " (DSPy's own progress lines follow)"):
        yield


def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else format_number(value, digits=digits)


def result_table(result: OptimizationResult) -> Any:
    """Return the final rich table: a row per metric; baseline, optimized, delta [CI], verdict."""
    from rich import box
    from rich.table import Table

    level = result.config.evaluation.confidence_level
    table = Table(
        box=box.SIMPLE_HEAD,  # no vertical rules: the rows fit an 80-column terminal
        pad_edge=False,
        title=(
            f"{result.config.name}: {result.config.optimizer.class_name} on "
            f"{len(result.baseline.examples) if result.baseline else 0} test tasks"
        ),
    )
    for column in ("metric", "baseline", "optimized", f"delta [{level:.0%} CI]", "verdict"):
        table.add_column(column, no_wrap=True)
    if result.deltas:
        for d in result.deltas:
            table.add_row(
                d.metric,
                _fmt(d.baseline_mean),
                _fmt(d.optimized_mean),
                f"{d.mean_delta:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}]",
                d.verdict,
            )
    else:
        base = result.baseline
        for name in base.metric_names if base else ():
            table.add_row(
                name,
                _fmt(base.statistics[name].mean) if base else "n/a",
                "n/a",
                "n/a",
                "not compared",
            )
    usage = result.usage
    solved = " | ".join(
        f"{arm}: all tests pass {format_number(c['tasks_solved'] or 0, digits=3)}"
        f"/{c['n_tasks']}, degenerate {sum(c['degenerate'].values())}"
        for arm, c in result.code.items()
    )
    table.caption = (
        (solved + "\n" if solved else "")
        + f"LM calls {usage.lm_calls}, tokens {usage.total_tokens}, "
        f"cost ${format_number(usage.cost_usd)}, wall {result.wall_time_s:.0f} s "
        f"(metrics {result.metric_time_s:.1f} s)"
        + (f"; stopped {result.stop_reason}" if result.stop_reason else "")
    )
    return table


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def code_report_lines(result: OptimizationResult) -> list[str]:
    """Return the report's "Generated code" section.

    Tasks solved, tests passed, degenerate outputs per arm, with the paired intervals of
    ``tasks_solved`` and ``tests_passed``.
    """
    if not result.code:
        return []
    lines = [
        "",
        "## Generated code",
        "",
        "| arm | tasks | all tests pass | mean share of tests passed | "
        "degenerate: empty / placeholder / no function |",
        "|---|---|---|---|---|",
    ]
    for arm, summary in result.code.items():
        solved = summary["tasks_solved"]
        kinds = summary["degenerate"]
        lines.append(
            f"| {arm} | {summary['n_tasks']} | "
            f"{'n/a' if solved is None else format_number(solved, digits=3)} "
            f"({_share(summary['solved_share'])}) | "
            f"{_share(summary['mean_tests_passed'])} | "
            f"{kinds['empty']} / {kinds['placeholder']} / {kinds['no_function']} |"
        )
    by_name = {d.metric: d for d in result.deltas}
    level = result.config.evaluation.confidence_level
    for name, label in (
        ("tasks_solved", "share of tasks whose tests all pass"),
        ("tests_passed", "mean share of tests passed"),
    ):
        d = by_name.get(name)
        if d is not None:
            lines.append(
                f"\n- {label}: {d.mean_delta:+.3f} "
                f"({level:.0%} paired CI [{d.ci_low:+.3f}, {d.ci_high:+.3f}], "
                f"p={format_number(d.p_value, digits=3)}): *{d.verdict}*"
            )
    lines.append(
        "\nEach program is in `code/<arm>/<task_id>.py`. Degenerate: no code at all, a copy "
        "of a prompt-template placeholder such as `{code}`, or code that does not parse or "
        "does not define the function the tests call."
    )
    return lines


def predictor_lines(predictors: Mapping[str, Any]) -> list[str]:
    """Return the report's "Optimized predictors" section: instruction and demonstrations."""
    if not predictors:
        return []
    lines = ["", "## Optimized predictors"]
    for name, info in predictors.items():
        demos = info["demos"]
        lines += ["", f"### `{name}`", "", "Instruction:", ""]
        lines += ["> " + line for line in info["instructions"].splitlines() or [""]]
        lines += ["", f"Demonstrations: {len(demos)}"]
        for demo in demos:
            task = demo.get("task_id", "?")
            prompt = str(demo.get("prompt", ""))
            lines.append(f"- `{task}`: {prompt[:100]}{'…' if len(prompt) > 100 else ''}")
            if "body" in demo:
                lines += ["", "  ```python", f"  {demo.get('header', '')}"]
                lines += [f"  {line}" for line in str(demo["body"]).splitlines()]
                lines += ["  ```"]
    return lines


def render_report(result: OptimizationResult) -> str:
    """Return the run's Markdown report."""
    cfg = result.config
    level = cfg.evaluation.confidence_level
    lines = [
        f"# {cfg.name}: {cfg.optimizer.class_name} on the reference pipeline",
        "",
        f"- optimizer: `{cfg.optimizer.class_name}` init {dict(cfg.optimizer.init_args)}, "
        f"compile {dict(cfg.optimizer.compile_args)}",
        f"- LM: `{cfg.lm.get('model')}`; metric: `{cfg.metric.name}` "
        f"(the optimizer's target; scores in [0, 1], higher is better)",
        f"- config hash `{cfg.config_hash[:12]}`; seed {cfg.seed}",
        f"- billed LM usage: {result.usage.lm_calls} calls, {result.usage.total_tokens} tokens, "
        f"${format_number(result.usage.cost_usd)} (cache hits are free)",
        f"- wall time {result.wall_time_s:.1f} s, of which {result.metric_time_s:.1f} s "
        f"({result.metric_time_s / max(result.wall_time_s, 1e-9):.1%}) in the metrics",
    ]
    if result.stop_reason:
        lines.append(f"- **stopped early** {result.stop_reason}; later steps were skipped")
    lines += ["", "## Result", ""]
    if result.deltas:
        lines += [
            f"| metric | baseline | optimized | delta | {level:.0%} CI | p | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for d in result.deltas:
            lines.append(
                f"| {d.metric} | {_fmt(d.baseline_mean)} | {_fmt(d.optimized_mean)} | "
                f"{d.mean_delta:+.4f} | [{d.ci_low:+.4f}, {d.ci_high:+.4f}] | "
                f"{format_number(d.p_value, digits=3)} | {d.verdict} |"
            )
        lines += [
            "",
            "Deltas are paired (optimized - baseline, per test task, averaged over runs); the "
            "interval is a paired bootstrap percentile interval of the mean delta and p a "
            "sign-flip permutation p-value. *improved*/*regressed* need the interval to "
            "exclude 0; otherwise the difference is *inconclusive* at this sample size.",
        ]
    else:
        lines.append("No comparison: the optimized program was not evaluated.")
    lines += _choice_lines(result, level)
    lines += code_report_lines(result)
    if result.comparison is None and result.deltas and math.isnan(result.usage.cost_usd):
        lines.append(
            "\nNo pass/fail A/B: the LM has no known price, so the runs' costs are unknown "
            "(docs/decisions.md#unknown-prices)."
        )
    if result.comparison is not None:
        lines += ["", result.comparison.to_markdown().replace("## A/B", "## Pass/fail A/B", 1)]
        if result.code:
            lines.append("\n(success = the generated function passes all of the task's tests)")
        else:
            lines.append(
                f"\n(success = {cfg.metric.name} >= threshold "
                f"{cfg.metric.options.get('threshold', 0.5)})"
            )
    lines += predictor_lines(result.predictors)
    for title, ev in (("Baseline", result.baseline), ("Optimized", result.optimized)):
        if ev is not None:
            lines += ["", ev.to_markdown(title=f"{title} on the test split")]
    return "\n".join(lines) + "\n"


def _choice_lines(result: OptimizationResult, level: float) -> list[str]:
    """Return the report lines on the optimizer's choice, paired on the validation split."""
    check = result.trials.get("validation") if isinstance(result.trials, dict) else None
    if not isinstance(check, dict):
        return []
    lines = [
        "",
        "## The optimizer's choice on the validation split",
        "",
        f"The optimizer chose its program by `{check['metric']}` on the validation split "
        f"({check['n']} tasks): chosen {_fmt(check['optimized_mean'])} against unoptimized "
        f"{_fmt(check['baseline_mean'])}, paired delta {check['mean_delta']:+.4f}, "
        f"{level:.0%} CI [{check['ci_low']:+.4f}, {check['ci_high']:+.4f}] "
        f"({check['verdict']}). On the test split: see the table above.",
    ]
    if check.get("warning"):
        lines += ["", f"**Warning:** {check['warning']}."]
    return lines
