"""Regression detection between two eval reports (docs/statistics.md#compare)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lift_metrics._checks import check_non_negative
from lift_metrics._io import format_number
from lift_metrics._records import record_dict
from lift_metrics.stats._reports import EvalReport, EvalResult, as_case_scores

# differences are rounded to this many decimals before the strict comparison, so that
# 0.90 - 0.85 counts as exactly 0.05 rather than 0.05000000000000004
_DELTA_DECIMALS = 12


@dataclass(frozen=True)
class CaseChange:
    """A case present in both reports: its two scores and ``delta = current - baseline``."""

    case: str
    baseline_score: float
    current_score: float
    delta: float


@dataclass(frozen=True, repr=False)
class ReportComparison:
    """Result of :func:`compare_reports`.

    Attributes
    ----------
    regressions, improvements, unchanged : tuple of CaseChange
        Regressions sorted worst first, improvements best first, unchanged by case.
    new, removed : dict of str to float
        Cases only in the current (new) or only in the baseline (removed) report, with score.
    threshold : float
        The absolute threshold used.
    """

    regressions: tuple[CaseChange, ...]
    improvements: tuple[CaseChange, ...]
    unchanged: tuple[CaseChange, ...]
    new: dict[str, float]
    removed: dict[str, float]
    threshold: float

    @property
    def has_regressions(self) -> bool:
        """Whether any case dropped by more than the threshold."""
        return bool(self.regressions)

    def __repr__(self) -> str:
        return (
            f"ReportComparison(regressions={len(self.regressions)}, "
            f"improvements={len(self.improvements)}, unchanged={len(self.unchanged)}, "
            f"new={len(self.new)}, removed={len(self.removed)}, threshold={self.threshold:g})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        changes = {
            name: [vars(c) for c in getattr(self, name)]
            for name in ("regressions", "improvements", "unchanged")
        }
        return record_dict(
            self,
            "threshold has_regressions regressions improvements unchanged new removed",
            **changes,
        )

    def table_rows(self) -> list[tuple[str, str, str, str, str]]:
        """Header + one row per case of formatted cells (shared by text and Markdown)."""
        rows = [("status", "case", "baseline", "current", "delta")]
        for status, changes in (
            ("regression", self.regressions),
            ("improvement", self.improvements),
            ("unchanged", self.unchanged),
        ):
            for c in changes:
                rows.append(
                    (
                        status,
                        c.case,
                        format_number(c.baseline_score),
                        format_number(c.current_score),
                        f"{c.delta:+.4f}",
                    )
                )
        rows += [("new", k, "-", format_number(v), "-") for k, v in sorted(self.new.items())]
        rows += [
            ("removed", k, format_number(v), "-", "-") for k, v in sorted(self.removed.items())
        ]
        return rows

    def summary_line(self) -> str:
        """Return Counts of each kind of change and the threshold."""
        return (
            f"{len(self.regressions)} regression(s), {len(self.improvements)} improvement(s), "
            f"{len(self.unchanged)} unchanged, {len(self.new)} new, {len(self.removed)} removed "
            f"(threshold {self.threshold:g})"
        )

    def to_text(self) -> str:
        """Plain-text table."""
        rows = self.table_rows()
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)) for r in rows]
        lines = [line.rstrip() for line in lines]
        return "\n".join([self.summary_line(), "", *lines])

    def to_markdown(self) -> str:
        """GitHub-flavoured Markdown."""
        lines = [
            "## Comparison",
            "",
            self.summary_line(),
            "",
            "| status | case | baseline | current | delta |",
            "|---|---|---:|---:|---:|",
        ]
        lines += [f"| {' | '.join(r)} |" for r in self.table_rows()[1:]]
        return "\n".join(lines)


def compare_reports(
    baseline: EvalReport | Mapping[str, float] | Sequence[EvalResult],
    current: EvalReport | Mapping[str, float] | Sequence[EvalResult],
    *,
    threshold: float = 0.05,
) -> ReportComparison:
    """Regressions, improvements, unchanged, new and removed cases between two reports.

    Parameters
    ----------
    baseline, current : EvalReport or mapping of str to float or list of EvalResult
        The reports; a mapping gives the score of each case directly. For an
        :class:`EvalReport` a case is a ``"model/case"`` key scored by its mean
        :func:`forge_score` over samples.
    threshold : float, default 0.05
        Absolute change in score points, non-negative.

    Returns
    -------
    ReportComparison

    Raises
    ------
    ValueError
        For a negative or non-finite threshold, or non-finite scores.
    TypeError
        For inputs of another type.

    Notes
    -----
    With ``delta = current - baseline`` (rounded to 12 decimals to remove float noise): a
    regression is ``delta < -threshold``, an improvement ``delta > threshold`` (strict: "drops by
    more than the threshold", docs/decisions.md#regression-threshold), anything else is unchanged.

    Examples
    --------
    >>> result = compare_reports({"a": 0.9, "b": 0.5, "c": 0.7}, {"a": 0.85, "b": 0.7, "d": 1.0})
    >>> [c.case for c in result.regressions], [c.case for c in result.improvements]
    ([], ['b'])
    >>> [c.case for c in result.unchanged], result.new, result.removed
    (['a'], {'d': 1.0}, {'c': 0.7})
    >>> compare_reports({"a": 0.9}, {"a": 0.8}).has_regressions
    True
    """
    limit = check_non_negative("threshold", threshold)
    base = as_case_scores(baseline, "baseline")
    cur = as_case_scores(current, "current")
    regressions, improvements, unchanged = [], [], []
    for case in sorted(base.keys() & cur.keys()):
        delta = round(cur[case] - base[case], _DELTA_DECIMALS)
        change = CaseChange(case, base[case], cur[case], delta)
        if delta < -limit:
            regressions.append(change)
        elif delta > limit:
            improvements.append(change)
        else:
            unchanged.append(change)
    regressions.sort(key=lambda c: (c.delta, c.case))
    improvements.sort(key=lambda c: (-c.delta, c.case))
    return ReportComparison(
        regressions=tuple(regressions),
        improvements=tuple(improvements),
        unchanged=tuple(unchanged),
        new={k: cur[k] for k in sorted(cur.keys() - base.keys())},
        removed={k: base[k] for k in sorted(base.keys() - cur.keys())},
        threshold=limit,
    )
