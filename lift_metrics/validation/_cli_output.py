"""What ``lift-metrics validate`` gathers, writes and prints once every metric is validated."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lift_metrics.errors import TooFewScoresError
from lift_metrics.validation._calibrate import CalibrationResult
from lift_metrics.validation._validate import ValidationResult


def slug(name: str) -> str:
    """Return ``name`` as a file name (its plot's)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "metric"


@dataclass
class Outcome:
    """What validating the metrics gathered for the reports, by result name."""

    results: list[ValidationResult] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    categories: dict[str, dict[str, str]] = field(default_factory=dict)
    calibrations: dict[str, tuple[CalibrationResult, ValidationResult | None]] = field(
        default_factory=dict
    )
    weight_writers: list[Callable[[Path], Path]] = field(default_factory=list)
    baseline_done: set[str] = field(default_factory=set)
    unscored: list[TooFewScoresError] = field(default_factory=list)  # fewer than 3 scored
    split_shown: str | None = None

    def add(self, result: ValidationResult, data: Path, categories: dict[str, str]) -> None:
        """Record ``result``, validated on ``data``."""
        self.results.append(result)
        self.sources[result.metric] = str(data)
        self.categories[result.metric] = categories


def write_reports(args: argparse.Namespace, outcome: Outcome) -> list[Path]:
    """Write every report file to ``args.out``, or none (a full disk); return the weights'."""
    from lift_metrics._io import atomic_write_json, atomic_write_text, staged_output
    from lift_metrics.validation._plot import plot_validation
    from lift_metrics.validation._report import json_report, markdown_report, unscored_section

    results, calibrations, unscored = outcome.results, outcome.calibrations, outcome.unscored
    plots: dict[str, str] = {}
    # every report file, or none; plots of an earlier run into --out are removed
    with staged_output(args.out, last="validation.json") as stage:
        saved = [args.out / write_weights(stage).name for write_weights in outcome.weight_writers]
        for result in results:
            png = stage / f"{slug(result.metric)}.png"
            plot_validation(result, png)
            plots[result.metric] = png.name
        report = markdown_report(
            results,
            sources=outcome.sources,
            split=outcome.split_shown,
            plots=plots,
            calibrations=calibrations,
            categories={name: found for name, found in outcome.categories.items() if found},
        ) + "".join(unscored_section(bad) for bad in unscored)
        atomic_write_text(stage / "validation.md", report)
        document = json_report(
            results, split=outcome.split_shown, unscored=unscored, calibrations=calibrations
        )
        atomic_write_json(stage / "validation.json", document)
    return saved


def print_calibrations(outcome: Outcome) -> None:
    """Print each calibration's weights and its Pearson figures."""
    split_shown = outcome.split_shown
    for name, (fit, on_split) in outcome.calibrations.items():
        shown = ", ".join(f"{k}={v:.3f}" for k, v in fit.weights.items())
        reported = "-" if on_split is None else f"{on_split.pearson:.3f}"
        print(
            f"{name}: calibrated on {fit.n} calibration items: {shown}; Pearson in-sample "
            f"{fit.in_sample_pearson:.3f}, {fit.folds}-fold CV {fit.cv_pearson:.3f}, "
            f"on {split_shown} {reported} (default weights on {split_shown}: "
            f"{next(r.pearson for r in outcome.results if r.metric == name):.3f})"
        )


def exit_code(args: argparse.Namespace, outcome: Outcome) -> int:
    """Print what failed the gate; return 1 when something did, else 0."""
    results = outcome.results
    failed = [
        r
        for r in results
        if not r.metric.endswith("(field baseline)")  # shown for comparison, not gated
        and not (r.passed_ci if args.require_ci else r.passed)
    ]
    gate = 0
    for bad in outcome.unscored:
        print(str(bad), file=sys.stderr)
        gate = 1
    for r in results:
        if r.missing and not r.metric.endswith("(field baseline)"):
            item, reason = r.missing[0]
            allowed = len(r.missing) <= args.allow_missing
            print(
                f"{r.metric}: {len(r.missing)} of {r.n + len(r.missing)} items could not be "
                f"scored ({'within' if allowed else 'more than'} --allow-missing "
                f"{args.allow_missing}); first {item!r}: {reason}; every reason is in the report",
                file=sys.stderr,
            )
            gate = gate or int(not allowed)
    if failed:
        names = ", ".join(r.metric for r in failed)
        print(f"below target {args.target:g}: {names}", file=sys.stderr)
        return 1
    return gate
