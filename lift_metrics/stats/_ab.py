"""A/B comparison of two arms over paired runs (docs/statistics.md#paired-ab).

Records follow the run-record schema of :class:`RunRecord`; runs of the two arms are paired on
``(task_id, repeat)``. Deltas are always ``treatment - control``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from lift_metrics._io import format_number
from lift_metrics._records import PlainRecord, record_dict, short_repr
from lift_metrics.errors import InputValueError
from lift_metrics.stats._arm_statistics import (
    DELTA_NAMES,
    ArmStatistics,
    _pair_key,
    arm_statistics,
    paired_deltas,
)
from lift_metrics.stats._gates import _GATES, Decision, Gate, ab_decision
from lift_metrics.stats._intervals import ConfidenceInterval
from lift_metrics.stats._resample import bootstrap_intervals, check_resampling
from lift_metrics.stats._runs import RunRecord, validate_run_records

Verdict = Literal["prefer_treatment", "prefer_control", "inconclusive", "mixed"]


@dataclass(frozen=True, repr=False)
class DeltaStatistics(PlainRecord):
    """Mean and median of one paired delta, with an interval and a p-value.

    The interval is a bootstrap interval on the mean; the p-value a sign-flip permutation p-value
    (two-sided, H0: the delta is symmetric around 0).
    """

    name: str
    mean: float
    median: float
    interval: ConfidenceInterval
    p_value: float

    def __repr__(self) -> str:
        return short_repr(
            self, "name!r mean:.4g median:.4g interval p_value:.4g", interval=self.interval.format()
        )


_DECISION_TEXT = {
    "prefer_treatment": "prefer {treatment}",
    "prefer_control": "prefer {control}",
    "no_difference": "no difference",
    "mixed": "mixed results - inspect paired deltas",
    "inconclusive": "inconclusive - a gating interval contains 0",
}


@dataclass(frozen=True, repr=False)
class PairedComparison:
    """Result of :func:`paired_comparison`.

    Arm statistics, paired deltas with intervals and p-values, the point decision of the three gates
    and the interval-aware verdict.
    """

    treatment: str
    control: str
    treatment_stats: ArmStatistics
    control_stats: ArmStatistics
    n_pairs: int
    deltas: dict[str, DeltaStatistics]
    gates: tuple[Gate, ...]
    decision: Decision
    verdict: Verdict
    n_resamples: int
    confidence_level: float
    seed: int | None
    method: str = "percentile"

    def __repr__(self) -> str:
        return short_repr(self, "treatment!r control!r n_pairs decision!r verdict!r")

    @property
    def decision_text(self) -> str:
        """The point decision in words (``"prefer treatment"``)."""
        return _DECISION_TEXT[self.decision].format(treatment=self.treatment, control=self.control)

    @property
    def verdict_text(self) -> str:
        """The interval-aware verdict in words."""
        return _DECISION_TEXT[self.verdict].format(treatment=self.treatment, control=self.control)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output (``None`` for ``solved_per_dollar`` at zero cost)."""
        return record_dict(
            self,
            "treatment control n_pairs arms deltas gates decision decision_text verdict"
            " verdict_text bootstrap",
            arms={
                self.treatment: self.treatment_stats.to_dict(),
                self.control: self.control_stats.to_dict(),
            },
            gates=[vars(g) for g in self.gates],
            bootstrap=record_dict(self, "n_resamples confidence_level seed method"),
        )

    def arm_rows(self) -> list[list[str]]:
        """Header + rows of the per-arm table."""
        fields: list[tuple[str, Callable[[ArmStatistics], str]]] = [
            ("runs", lambda s: str(s.runs)),
            ("successes", lambda s: str(s.successes)),
            ("success rate", lambda s: format_number(s.success_rate)),
            (
                f"success rate {self.confidence_level * 100:g}% CI",
                lambda s: s.success_rate_interval.format(),
            ),
            ("total cost $", lambda s: format_number(s.total_cost_usd)),
            ("avg cost $", lambda s: format_number(s.avg_cost_usd)),
            ("median cost $", lambda s: format_number(s.median_cost_usd)),
            ("median duration s", lambda s: format_number(s.median_duration_seconds)),
            ("p95 duration s", lambda s: format_number(s.p95_duration_seconds)),
            ("median total tokens", lambda s: format_number(s.median_total_tokens, digits=8)),
            (
                "median non-cache tokens",
                lambda s: format_number(s.median_non_cache_tokens, digits=8),
            ),
            (
                "solved per $",
                lambda s: (
                    "n/a (zero cost)"
                    if s.solved_per_dollar is None
                    else format_number(s.solved_per_dollar)
                ),
            ),
        ]
        rows = [["statistic", self.treatment, self.control]]
        for label, get in fields:
            rows.append([label, get(self.treatment_stats), get(self.control_stats)])
        return rows

    def delta_rows(self) -> list[list[str]]:
        """Header + rows of the paired-delta table."""
        level = f"{self.confidence_level * 100:g}%"
        rows = [["delta (treatment - control)", "mean", "median", f"{level} CI of mean", "p"]]
        for d in self.deltas.values():
            rows.append(
                [
                    d.name,
                    format_number(d.mean),
                    format_number(d.median),
                    d.interval.format(),
                    format_number(d.p_value, digits=3),
                ]
            )
        return rows

    def gate_rows(self) -> list[list[str]]:
        """Header + rows of the gate table."""
        rows = [["gate", self.treatment, self.control, "point", "with CI"]]
        for g in self.gates:
            rows.append(
                [
                    g.name,
                    format_number(g.treatment_value, digits=8),
                    format_number(g.control_value, digits=8),
                    g.favours,
                    g.ci_favours,
                ]
            )
        return rows

    def summary_lines(self) -> list[str]:
        """Headline lines: pairs, decision and verdict."""
        return [
            f"{self.n_pairs} pairs; treatment {self.treatment!r} vs control {self.control!r}",
            f"decision (three gates): {self.decision_text}",
            f"verdict ({self.confidence_level * 100:g}% paired bootstrap, "
            f"{self.n_resamples} resamples, seed {self.seed}): {self.verdict_text}",
        ]

    def to_markdown(self) -> str:
        """GitHub-flavoured Markdown."""
        lines = ["## A/B comparison", "", *(f"- {s}" for s in self.summary_lines())]
        for title, rows in (
            ("Arms", self.arm_rows()),
            ("Gates", self.gate_rows()),
            ("Paired deltas", self.delta_rows()),
        ):
            lines += ["", f"### {title}", "", "| " + " | ".join(rows[0]) + " |"]
            lines.append("|" + "---|" * len(rows[0]))
            lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n".join(lines)


def _arm_name(runs: Sequence[RunRecord], side: str) -> str:
    arms = sorted({r.arm for r in runs})
    if len(arms) != 1:
        raise InputValueError(f"{side} records must all belong to one arm, got arms {arms}")
    return arms[0]


def paired_comparison(
    a: Iterable[RunRecord | Mapping[str, Any]],
    b: Iterable[RunRecord | Mapping[str, Any]],
    *,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
) -> PairedComparison:
    """Paired A/B analysis of treatment ``a`` against control ``b``.

    Parameters
    ----------
    a : iterable of RunRecord or mapping
        Treatment runs (one arm, e.g. ``treatment``).
    b : iterable of RunRecord or mapping
        Control runs (one arm, e.g. ``control``), paired with ``a`` on
        ``(task_id, repeat)``.
    n_resamples : int, default 10_000
        Bootstrap resamples and random sign flips, from 100 to 1,000,000.
    confidence_level : float, default 0.95
        Level of the bootstrap intervals, in (0, 1).
    seed : int or None, default 0
        Seed of ``numpy.random.default_rng``; a fixed seed gives bit-identical results,
        ``None`` draws fresh entropy.

    Returns
    -------
    PairedComparison

    Raises
    ------
    ValueError
        For invalid or unpaired records, duplicate pairs, several arms on one side, the same
        runs on both sides, too few or too many resamples or a level outside (0, 1).

    Notes
    -----
    Arm statistics and the point decision follow :func:`arm_statistics` and
    :func:`ab_decision`. For every delta in :data:`DELTA_NAMES` (``treatment - control``):
    the mean and median over pairs, a paired bootstrap percentile interval for the mean
    (pairs resampled together, all deltas from the same resamples) and a sign-flip
    permutation p-value.

    The percentile method with an own vectorised resampling is used rather than
    ``scipy.stats.bootstrap``: at 10,000 pairs x 10,000 resamples scipy took about 2 s per
    delta with the percentile method and over 3 s with BCa (its jackknife), i.e. 10-17 s
    for the five deltas, against the 3 s budget; here one sparse selection-matrix product
    per chunk of resamples serves all deltas at once (about 1 s in all, see
    ``benchmarks/bench_paired_comparison.py``). The intervals agree with
    ``scipy.stats.bootstrap(..., method="percentile")`` up to Monte-Carlo error (tested).
    A delta that is constant over pairs gets the zero-width interval at that constant.

    Interval-aware verdict: each gate's delta (``pass_delta``, ``duration_delta_seconds``,
    ``non_cache_token_delta``) is read from its interval: "inconclusive" if it contains 0,
    otherwise the arm it favours. The verdict is "inconclusive" when any gating interval
    contains 0, "prefer_treatment"/"prefer_control" when all three favour that arm, else
    "mixed".

    Examples
    --------
    >>> def run(arm, task, success, duration, tokens):
    ...     return {"task_id": task, "arm": arm, "repeat": 0, "success": success,
    ...             "duration_seconds": duration, "total_cost_usd": 0.01 * tokens / 100,
    ...             "input_tokens": tokens, "output_tokens": 10, "cache_read_tokens": 0,
    ...             "cache_write_tokens": 0}
    >>> new = [run("new", f"t{i}", True, 5.0 + i % 3, 900 + i) for i in range(20)]
    >>> old = [run("old", f"t{i}", i % 2 == 0, 9.0 + i % 3, 1500 + i) for i in range(20)]
    >>> result = paired_comparison(new, old, n_resamples=1000, seed=1)
    >>> result.decision, result.verdict, result.deltas["duration_delta_seconds"].mean
    ('prefer_treatment', 'prefer_treatment', -4.0)
    """
    resamples, level, seed_value = check_resampling(n_resamples, confidence_level, seed)
    t_runs = validate_run_records(a, name="a")
    c_runs = validate_run_records(b, name="b")
    t_name, c_name = _arm_name(t_runs, "a (treatment)"), _arm_name(c_runs, "b (control)")
    if sorted(t_runs, key=_pair_key) == sorted(c_runs, key=_pair_key):
        raise InputValueError(
            f"a and b hold the same {len(t_runs)} runs (arm {t_name!r}): comparing an arm "
            "with itself gives zero deltas with zero-width intervals; pass the treatment "
            "runs as a and the control runs as b"
        )
    deltas = paired_deltas(t_runs, c_runs)
    t_stats = arm_statistics(t_runs, confidence_level=level)
    c_stats = arm_statistics(c_runs, confidence_level=level)
    decision, point_gates = ab_decision(t_stats, c_stats)

    data = deltas.matrix()
    rng = np.random.default_rng(seed_value)
    intervals, p_values = bootstrap_intervals(data, resamples, level, rng)
    results: dict[str, DeltaStatistics] = {}
    for j, name in enumerate(DELTA_NAMES):
        column = data[:, j]
        results[name] = DeltaStatistics(
            name=name,
            mean=float(column.mean()),
            median=float(np.median(column)),
            interval=ConfidenceInterval(*intervals[j], level),
            p_value=float(p_values[j]),
        )

    gates = []
    for gate, (_, _, _, direction) in zip(point_gates, _GATES, strict=True):
        interval = results[gate.delta].interval
        if interval.contains(0.0) or math.isnan(interval.low):
            ci_favours = "inconclusive"
        else:
            ci_favours = "treatment" if direction * interval.low > 0 else "control"
        gates.append(
            Gate(
                gate.name,
                gate.statistic,
                gate.treatment_value,
                gate.control_value,
                gate.favours,
                gate.delta,
                ci_favours,
            )
        )
    ci_signs = {g.ci_favours for g in gates}
    verdict: Verdict
    if "inconclusive" in ci_signs:
        verdict = "inconclusive"
    elif ci_signs == {"treatment"}:
        verdict = "prefer_treatment"
    elif ci_signs == {"control"}:
        verdict = "prefer_control"
    else:
        verdict = "mixed"
    return PairedComparison(
        treatment=t_name,
        control=c_name,
        treatment_stats=t_stats,
        control_stats=c_stats,
        n_pairs=deltas.n_pairs,
        deltas=results,
        gates=tuple(gates),
        decision=decision,
        verdict=verdict,
        n_resamples=resamples,
        confidence_level=level,
        seed=seed_value,
    )
