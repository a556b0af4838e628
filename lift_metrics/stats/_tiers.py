"""Per-tier aggregation of run records and cross-tier analysis (docs/statistics.md#tiers)."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lift_metrics._checks import check_confidence_level, check_iterable, check_path
from lift_metrics._io import format_number
from lift_metrics._records import record_dict, short_repr
from lift_metrics.errors import InputValueError
from lift_metrics.stats._intervals import (
    ConfidenceInterval,
    mean_interval,
    wilson_interval,
)
from lift_metrics.stats._records import (
    get_bool,
    get_float,
    get_str,
    load_jsonl_records,
)
from lift_metrics.stats._scoring import (
    composite_score,
    cost_delta,
    cost_of_pass,
    cost_variance,
    letter_grade,
    pass_rate_variance,
    tier_uplift,
)
from lift_metrics.stats._summary import Statistics, summarize


@dataclass(frozen=True)
class TierRun:
    """One evaluation run of one tier (one JSONL line of a tier run file).

    Attributes
    ----------
    tier : str
        Tier name (``"T0"`` ...); the first tier seen is the baseline for uplift.
    passed : bool
        Whether the run passed all its tests.
    impl_rate : float
        The judge's weighted implementation score, in [0, 1].
    cost_usd : float
        Cost of the run, non-negative.
    duration_seconds : float
        Wall-clock duration of the run, non-negative.
    """

    tier: str
    passed: bool
    impl_rate: float
    cost_usd: float
    duration_seconds: float

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], *, index: int | str = 0) -> TierRun:
        """Validate one record; errors name the record index and the field."""
        return cls(
            tier=get_str(record, index, "tier"),
            passed=get_bool(record, index, "passed"),
            impl_rate=get_float(record, index, "impl_rate", unit_interval=True),
            cost_usd=get_float(record, index, "cost_usd"),
            duration_seconds=get_float(record, index, "duration_seconds"),
        )


def load_tier_runs(path: str | os.PathLike[str]) -> tuple[TierRun, ...]:
    """Read and validate a JSONL file of tier runs (one :class:`TierRun` object per line).

    Parameters
    ----------
    path : str or os.PathLike
        The JSONL file; blank lines are skipped, unknown fields ignored.

    Returns
    -------
    tuple of TierRun

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        For invalid JSON, missing fields or bad values; the message names the file, the
        record index, the line and the field.

    Examples
    --------
    >>> from lift_metrics._paths import datasets_dir
    >>> runs = load_tier_runs(datasets_dir() / "examples" / "tier_runs.jsonl")
    >>> len(runs), runs[0].tier
    (40, 'T0')
    """
    return load_jsonl_records(check_path("path", path), TierRun.from_dict, "tier runs")


@dataclass(frozen=True, repr=False)
class TierSummary:
    """Statistics of one tier over its N runs.

    ``grade`` comes from the median composite score; ``uplift`` is relative to the baseline
    tier's median composite; ``cost_of_pass`` is the mean cost over the pass rate (``inf``
    when no run passed); ``pass_rate_interval`` is a Wilson score interval and
    ``composite_interval`` a Student-t interval on the mean composite score (``nan`` bounds
    for a single run).
    """

    tier: str
    runs: int
    passes: int
    pass_rate: Statistics
    impl_rate: Statistics
    composite: Statistics
    cost_usd: Statistics
    duration_seconds: Statistics
    grade: str
    uplift: float
    cost_of_pass: float
    total_cost_usd: float
    pass_rate_interval: ConfidenceInterval
    composite_interval: ConfidenceInterval

    def __repr__(self) -> str:
        return short_repr(
            self, "tier!r runs composite_median:.4g grade!r", composite_median=self.composite.median
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return record_dict(
            self,
            "tier runs passes pass_rate pass_rate_interval impl_rate composite composite_interval"
            " cost_usd duration_seconds grade uplift cost_of_pass total_cost_usd",
        )


@dataclass(frozen=True, repr=False)
class TierReport:
    """Result of :func:`summarize_tiers`.

    One :class:`TierSummary` per tier plus cross-tier variance of the median pass rates and costs
    and the spread of the median costs.
    """

    tiers: tuple[TierSummary, ...]
    baseline: str
    pass_rate_variance: float
    cost_variance: float
    cost_delta: float
    confidence_level: float

    def __repr__(self) -> str:
        return short_repr(self, "tiers baseline!r", tiers=[t.tier for t in self.tiers])

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return record_dict(
            self, "baseline confidence_level tiers pass_rate_variance cost_variance cost_delta"
        )

    def table_rows(self) -> list[list[str]]:
        """Header + one row per tier of formatted cells (shared by text and Markdown)."""
        level = f"{self.confidence_level * 100:g}%"
        rows = [
            [
                "tier",
                "runs",
                "pass rate",
                f"pass rate {level} CI",
                "impl median",
                "composite median",
                "grade",
                f"uplift vs {self.baseline}",
                "cost median $",
                "cost of pass $",
                "duration median s",
            ]
        ]
        for t in self.tiers:
            rows.append(
                [
                    t.tier,
                    str(t.runs),
                    format_number(t.pass_rate.mean),
                    t.pass_rate_interval.format(),
                    format_number(t.impl_rate.median),
                    format_number(t.composite.median),
                    t.grade,
                    "-" if t.tier == self.baseline else _percent(t.uplift),
                    format_number(t.cost_usd.median),
                    format_number(t.cost_of_pass),
                    format_number(t.duration_seconds.median),
                ]
            )
        return rows

    def footer_lines(self) -> list[str]:
        """Cross-tier figures, one per line."""
        return [
            f"pass rate variance across tiers: {format_number(self.pass_rate_variance)}",
            f"cost variance across tiers: {format_number(self.cost_variance)} USD²",
            f"cost delta (max - min median cost): {format_number(self.cost_delta)} USD",
        ]

    def to_markdown(self) -> str:
        """GitHub-flavoured Markdown (``∞`` for infinite cost of pass)."""
        rows = self.table_rows()
        lines = ["## Tier report", ""]
        lines.append("| " + " | ".join(rows[0]) + " |")
        lines.append("|" + "---|" * len(rows[0]))
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        lines += ["", *(f"- {line}" for line in self.footer_lines())]
        return "\n".join(lines)


def _mean_interval(values: list[float], level: float) -> ConfidenceInterval:
    if len(values) < 2:  # one run: no spread to estimate; say so with nan, not a warning
        return ConfidenceInterval(math.nan, math.nan, level)
    return mean_interval(values, confidence_level=level)


def _percent(value: float) -> str:
    if math.isnan(value):
        return "nan"
    return f"{value * 100:+.1f}%"


def summarize_tiers(
    runs: Iterable[TierRun | Mapping[str, Any]],
    *,
    pass_weight: float = 0.5,
    impl_weight: float = 0.5,
    scale: Mapping[str, float] | None = None,
    confidence_level: float = 0.95,
) -> TierReport:
    """Aggregate run records per tier: statistics, grade, uplift, cost of pass, intervals.

    Parameters
    ----------
    runs : iterable of TierRun or mapping
        Any number of runs per tier (for example 10), in any order; mappings are validated
        with :meth:`TierRun.from_dict`. The first tier seen is the baseline.
    pass_weight, impl_weight : float, default 0.5
        Weights of :func:`composite_score`.
    scale : mapping, optional
        Grade scale of :func:`letter_grade` (default: A 0.95, B 0.85, C 0.75, D 0.65, F 0).
    confidence_level : float, default 0.95
        Level of the Wilson interval on each tier's pass rate.

    Returns
    -------
    TierReport

    Raises
    ------
    ValueError
        For no runs, an invalid record, bad weights or level.

    Notes
    -----
    Per tier: :func:`summarize` of the per-run pass rates (0/1), impl rates, composites,
    costs and durations (population std); ``grade = letter_grade(median composite)``;
    a Wilson interval on the pass rate and a t interval on the mean composite;
    ``uplift = tier_uplift(median composite, baseline median composite)`` (``nan`` when the
    baseline median is 0); ``cost_of_pass = cost_of_pass(mean cost, mean pass rate)``.
    Across tiers: :func:`pass_rate_variance` and :func:`cost_variance` of the tiers' medians,
    :func:`cost_delta` of the median costs.

    Examples
    --------
    >>> runs = [
    ...     {"tier": "T0", "passed": True, "impl_rate": 0.8, "cost_usd": 0.5,
    ...      "duration_seconds": 10.0},
    ...     {"tier": "T0", "passed": False, "impl_rate": 0.4, "cost_usd": 0.5,
    ...      "duration_seconds": 12.0},
    ...     {"tier": "T1", "passed": True, "impl_rate": 0.9, "cost_usd": 0.75,
    ...      "duration_seconds": 9.0},
    ... ]
    >>> report = summarize_tiers(runs)
    >>> [(t.tier, t.composite.median, t.grade, t.cost_of_pass) for t in report.tiers]
    [('T0', 0.55, 'F', 1.0), ('T1', 0.95, 'A', 0.75)]
    >>> round(report.tiers[1].uplift, 4)
    0.7273
    """
    level = check_confidence_level(confidence_level)
    by_tier: dict[str, list[TierRun]] = {}
    for index, run in enumerate(check_iterable("runs", runs, of="tier runs")):
        record = run if isinstance(run, TierRun) else TierRun.from_dict(run, index=index)
        by_tier.setdefault(record.tier, []).append(record)
    if not by_tier:
        raise InputValueError("runs must not be empty")
    composite_of = {
        name: [
            composite_score(
                1.0 if r.passed else 0.0,
                r.impl_rate,
                pass_weight=pass_weight,
                impl_weight=impl_weight,
            )
            for r in group
        ]
        for name, group in by_tier.items()
    }
    baseline = next(iter(by_tier))
    baseline_median = summarize(composite_of[baseline]).median
    summaries = []
    for name, group in by_tier.items():
        pass_stats = summarize([1.0 if r.passed else 0.0 for r in group])
        composite = summarize(composite_of[name])
        cost = summarize([r.cost_usd for r in group])
        passes = sum(r.passed for r in group)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # baseline 0 -> nan uplift
            uplift = tier_uplift(composite.median, baseline_median)
        summaries.append(
            TierSummary(
                tier=name,
                runs=len(group),
                passes=passes,
                pass_rate=pass_stats,
                impl_rate=summarize([r.impl_rate for r in group]),
                composite=composite,
                cost_usd=cost,
                duration_seconds=summarize([r.duration_seconds for r in group]),
                grade=letter_grade(composite.median, scale=scale),
                uplift=uplift,
                cost_of_pass=cost_of_pass(cost.mean, pass_stats.mean),
                total_cost_usd=float(sum(r.cost_usd for r in group)),
                pass_rate_interval=wilson_interval(passes, len(group), confidence_level=level),
                composite_interval=_mean_interval(composite_of[name], level),
            )
        )
    return TierReport(
        tiers=tuple(summaries),
        baseline=baseline,
        pass_rate_variance=pass_rate_variance([t.pass_rate.median for t in summaries]),
        cost_variance=cost_variance([t.cost_usd.median for t in summaries]),
        cost_delta=cost_delta([t.cost_usd.median for t in summaries]),
        confidence_level=level,
    )
