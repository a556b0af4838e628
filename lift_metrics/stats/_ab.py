"""A/B comparison of two arms over paired runs (docs/statistics.md#paired-ab).

Records follow the run-record schema of :class:`RunRecord`; runs of the two arms are paired on
``(task_id, repeat)``. Deltas are always ``treatment - control``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from lift_metrics._checks import check_int
from lift_metrics._io import format_number
from lift_metrics.stats._intervals import (
    ConfidenceInterval,
    check_confidence_level,
    check_seed,
    wilson_interval,
)
from lift_metrics.stats._records import (
    RecordError,
    get_bool,
    get_float,
    get_int,
    get_str,
    in_file,
    read_jsonl,
)
from lift_metrics.stats._summary import latency_percentiles

Decision = Literal["prefer_treatment", "prefer_control", "no_difference", "mixed"]
Verdict = Literal["prefer_treatment", "prefer_control", "inconclusive", "mixed"]

#: Paired deltas reported by :func:`paired_comparison`, in order.
DELTA_NAMES: tuple[str, ...] = (
    "pass_delta",
    "cost_delta_usd",
    "duration_delta_seconds",
    "token_delta",
    "non_cache_token_delta",
)

# the three gates: (name, arm statistic, paired delta, +1 if higher is better)
_GATES: tuple[tuple[str, str, str, int], ...] = (
    ("success_rate", "success_rate", "pass_delta", +1),
    ("runtime", "median_duration_seconds", "duration_delta_seconds", -1),
    ("tokens", "median_non_cache_tokens", "non_cache_token_delta", -1),
)

#: the most bootstrap resamples a statistic accepts: far past where percentile intervals stop
#: changing, and a bound on the memory that the resampled statistics themselves take
MAX_RESAMPLES = 1_000_000
# elements per resampling chunk: bounds memory (about 8 bytes x 3 per element)
_CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class RunRecord:
    """One benchmark run of one task in one arm (a run-level record).

    ``total_tokens`` sums all four token counts; ``non_cache_tokens`` is input + output.
    """

    task_id: str
    arm: str
    repeat: int
    success: bool
    duration_seconds: float
    total_cost_usd: float
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int

    @property
    def total_tokens(self) -> int:
        """``input + output + cache_read + cache_write`` tokens."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    @property
    def non_cache_tokens(self) -> int:
        """``input + output`` tokens."""
        return self.input_tokens + self.output_tokens

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], *, index: int | str = 0) -> RunRecord:
        """Validate one record against the schema; errors name the record and the field.

        Examples
        --------
        >>> RunRecord.from_dict({"task_id": "t1", "arm": "a", "repeat": 0})
        Traceback (most recent call last):
        ...
        lift_metrics.stats.RecordError: record 0: missing required field 'success'
        """
        task_id = record.get("task_id") if isinstance(record, Mapping) else None
        if isinstance(task_id, int) and not isinstance(task_id, bool):
            record = {**record, "task_id": str(task_id)}
        return cls(
            task_id=get_str(record, index, "task_id"),
            arm=get_str(record, index, "arm"),
            repeat=get_int(record, index, "repeat"),
            success=get_bool(record, index, "success"),
            duration_seconds=get_float(record, index, "duration_seconds"),
            total_cost_usd=get_float(record, index, "total_cost_usd"),
            input_tokens=get_int(record, index, "input_tokens"),
            output_tokens=get_int(record, index, "output_tokens"),
            cache_read_tokens=get_int(record, index, "cache_read_tokens"),
            cache_write_tokens=get_int(record, index, "cache_write_tokens"),
        )


def validate_run_records(records: Iterable[RunRecord | Mapping[str, Any]]) -> tuple[RunRecord, ...]:
    """Validate run records (mappings or :class:`RunRecord`) against the run-record schema.

    Parameters
    ----------
    records : iterable of mapping or RunRecord

    Returns
    -------
    tuple of RunRecord

    Raises
    ------
    ValueError
        For a missing field or a bad value, naming the record index and the field, and for
        an empty input.

    Examples
    --------
    >>> rec = {"task_id": "t1", "arm": "a", "repeat": 0, "success": True,
    ...        "duration_seconds": 3.0, "total_cost_usd": 0.1, "input_tokens": 10,
    ...        "output_tokens": 5, "cache_read_tokens": 0, "cache_write_tokens": 0}
    >>> validate_run_records([rec])[0].total_tokens
    15
    >>> validate_run_records([rec, {**rec, "input_tokens": -1}])
    Traceback (most recent call last):
    ...
    lift_metrics.stats.RecordError: record 1: field 'input_tokens' must be >= 0, got -1
    """
    if isinstance(records, Mapping | str | bytes):
        raise TypeError(f"records must be an iterable of records, got {type(records).__name__}")
    out = tuple(
        r if isinstance(r, RunRecord) else RunRecord.from_dict(r, index=i)
        for i, r in enumerate(records)
    )
    if not out:
        raise ValueError("records must not be empty")
    return out


def load_run_records(path: str | os.PathLike[str]) -> tuple[RunRecord, ...]:
    """Read and validate a JSONL file of A/B run records.

    Parameters
    ----------
    path : str or os.PathLike
        The JSONL file, one run record per line (blank lines skipped, extra fields ignored).

    Returns
    -------
    tuple of RunRecord

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        For invalid JSON, missing fields or bad values, naming the file, the record index,
        the line and the field; or for a file without records.

    Examples
    --------
    >>> from lift_metrics._paths import datasets_dir
    >>> runs = load_run_records(datasets_dir() / "examples" / "ab_runs.jsonl")
    >>> len(runs), sorted({r.arm for r in runs})
    (60, ['with_skelly', 'without_skelly'])
    """
    records = []
    try:
        for label, obj in read_jsonl(path):
            records.append(RunRecord.from_dict(obj, index=label))
    except RecordError as exc:
        raise in_file(path, exc) from exc
    if not records:
        raise ValueError(f"{os.fspath(path)}: no run records in the file")
    return tuple(records)


@dataclass(frozen=True, repr=False)
class ArmStatistics:
    """Per-arm statistics (success rate, medians) plus a Wilson interval and duration percentiles.

    ``solved_per_dollar`` is ``None`` when the arm's total cost is zero.
    """

    arm: str
    runs: int
    successes: int
    success_rate: float
    success_rate_interval: ConfidenceInterval
    total_cost_usd: float
    avg_cost_usd: float
    median_cost_usd: float
    median_duration_seconds: float
    p95_duration_seconds: float
    median_total_tokens: float
    median_non_cache_tokens: float
    solved_per_dollar: float | None

    def __repr__(self) -> str:
        return (
            f"ArmStatistics(arm={self.arm!r}, runs={self.runs}, "
            f"success_rate={self.success_rate:.4g}, total_cost_usd={self.total_cost_usd:.4g})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["success_rate_interval"] = self.success_rate_interval.to_dict()
        return out


def arm_statistics(
    records: Iterable[RunRecord | Mapping[str, Any]], *, confidence_level: float = 0.95
) -> ArmStatistics:
    """Statistics of one arm's runs.

    Parameters
    ----------
    records : iterable of RunRecord or mapping
        Runs of a single arm, not empty.
    confidence_level : float, default 0.95
        Level of the Wilson interval on the success rate.

    Returns
    -------
    ArmStatistics

    Raises
    ------
    ValueError
        For no records, records of several arms, or invalid records.

    Notes
    -----
    ``success_rate = successes / runs``; ``avg_cost_usd = total_cost_usd / runs``; medians
    average the two middle values; ``solved_per_dollar = successes / total_cost_usd``, or
    ``None`` at zero total cost.

    Examples
    --------
    >>> base = {"task_id": "t", "arm": "a", "success": True, "duration_seconds": 2.0,
    ...         "total_cost_usd": 0.5, "input_tokens": 100, "output_tokens": 20,
    ...         "cache_read_tokens": 0, "cache_write_tokens": 0}
    >>> stats = arm_statistics([{**base, "repeat": 0}, {**base, "repeat": 1, "success": False}])
    >>> stats.success_rate, stats.total_cost_usd, stats.solved_per_dollar
    (0.5, 1.0, 1.0)
    """
    runs = validate_run_records(records)
    arms = sorted({r.arm for r in runs})
    if len(arms) != 1:
        raise ValueError(f"records must all belong to one arm, got arms {arms}")
    level = check_confidence_level(confidence_level)
    successes = sum(r.success for r in runs)
    costs = np.array([r.total_cost_usd for r in runs])
    durations = np.array([r.duration_seconds for r in runs])
    total_cost = float(costs.sum())
    return ArmStatistics(
        arm=arms[0],
        runs=len(runs),
        successes=successes,
        success_rate=successes / len(runs),
        success_rate_interval=wilson_interval(successes, len(runs), confidence_level=level),
        total_cost_usd=total_cost,
        avg_cost_usd=total_cost / len(runs),
        median_cost_usd=float(np.median(costs)),
        median_duration_seconds=float(np.median(durations)),
        p95_duration_seconds=latency_percentiles(durations).p95,
        median_total_tokens=float(np.median([r.total_tokens for r in runs])),
        median_non_cache_tokens=float(np.median([r.non_cache_tokens for r in runs])),
        solved_per_dollar=successes / total_cost if total_cost > 0 else None,
    )


@dataclass(frozen=True, repr=False)
class PairedDeltas:
    """Per-pair deltas ``treatment - control``, keyed by ``(task_id, repeat)`` in sorted order.

    ``values`` maps each name in :data:`DELTA_NAMES` to a float array of length ``n_pairs``.
    """

    keys: tuple[tuple[str, int], ...]
    values: dict[str, npt.NDArray[np.float64]]

    @property
    def n_pairs(self) -> int:
        """Number of pairs."""
        return len(self.keys)

    def mean(self, name: str) -> float:
        """Mean of one delta."""
        return float(self.values[name].mean())

    def median(self, name: str) -> float:
        """Median of one delta."""
        return float(np.median(self.values[name]))

    def matrix(self) -> npt.NDArray[np.float64]:
        """``(n_pairs, len(DELTA_NAMES))`` array of all deltas."""
        return np.column_stack([self.values[name] for name in DELTA_NAMES])

    def __repr__(self) -> str:
        return f"PairedDeltas(n_pairs={self.n_pairs})"


def _pair_key(run: RunRecord) -> tuple[str, int]:
    return (run.task_id, run.repeat)


def _by_key(runs: Sequence[RunRecord], side: str) -> dict[tuple[str, int], RunRecord]:
    out: dict[tuple[str, int], RunRecord] = {}
    for run in runs:
        key = (run.task_id, run.repeat)
        if key in out:
            raise ValueError(f"{side} has two runs for task_id={run.task_id!r} repeat={run.repeat}")
        out[key] = run
    return out


def paired_deltas(
    treatment: Iterable[RunRecord | Mapping[str, Any]],
    control: Iterable[RunRecord | Mapping[str, Any]],
) -> PairedDeltas:
    """Pair the two arms' runs on ``(task_id, repeat)`` and compute every delta.

    Parameters
    ----------
    treatment, control : iterable of RunRecord or mapping
        The runs of each arm.

    Returns
    -------
    PairedDeltas

    Raises
    ------
    ValueError
        For empty arms, duplicate ``(task_id, repeat)`` within an arm, or unpaired runs
        (a key present in only one arm): the message lists the first unpaired keys.

    Notes
    -----
    Per pair: ``pass_delta = success_t - success_c`` (success as 0/1),
    ``cost_delta_usd``, ``duration_delta_seconds``, ``token_delta`` (total tokens) and
    ``non_cache_token_delta`` (input + output), all ``treatment - control``.

    Examples
    --------
    >>> base = {"task_id": "t", "repeat": 0, "duration_seconds": 2.0, "total_cost_usd": 0.5,
    ...         "input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 0,
    ...         "cache_write_tokens": 0}
    >>> d = paired_deltas([{**base, "arm": "new", "success": True, "duration_seconds": 1.5}],
    ...                   [{**base, "arm": "old", "success": False}])
    >>> d.keys, d.mean("pass_delta"), d.mean("duration_delta_seconds")
    ((('t', 0),), 1.0, -0.5)
    """
    t_runs = _by_key(validate_run_records(treatment), "treatment")
    c_runs = _by_key(validate_run_records(control), "control")
    only_t = sorted(t_runs.keys() - c_runs.keys())
    only_c = sorted(c_runs.keys() - t_runs.keys())
    if only_t or only_c:
        raise ValueError(
            f"unpaired records: {len(only_t)} (task_id, repeat) only in treatment "
            f"{only_t[:5]}, {len(only_c)} only in control {only_c[:5]}"
        )
    keys = tuple(sorted(t_runs))
    t = [t_runs[k] for k in keys]
    c = [c_runs[k] for k in keys]

    def delta(values: Any) -> npt.NDArray[np.float64]:
        return np.array([values(a) - values(b) for a, b in zip(t, c, strict=True)], dtype=float)

    return PairedDeltas(
        keys=keys,
        values={
            "pass_delta": delta(lambda r: int(r.success)),
            "cost_delta_usd": delta(lambda r: r.total_cost_usd),
            "duration_delta_seconds": delta(lambda r: r.duration_seconds),
            "token_delta": delta(lambda r: r.total_tokens),
            "non_cache_token_delta": delta(lambda r: r.non_cache_tokens),
        },
    )


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


@dataclass(frozen=True)
class Gate:
    """One gate of the decision rule.

    ``favours`` compares the arm statistics ("treatment", "control" or "tie");
    ``ci_favours`` reads the paired bootstrap interval of ``delta`` ("treatment", "control"
    or "inconclusive" when the interval contains 0); empty when no interval was computed.
    """

    name: str
    statistic: str
    treatment_value: float
    control_value: float
    favours: str
    delta: str
    ci_favours: str = ""


def ab_decision(
    treatment: ArmStatistics, control: ArmStatistics
) -> tuple[Decision, tuple[Gate, ...]]:
    """The three-gate decision rule on two arms' statistics.

    Parameters
    ----------
    treatment, control : ArmStatistics

    Returns
    -------
    decision : {"prefer_treatment", "prefer_control", "no_difference", "mixed"}
    gates : tuple of Gate

    Notes
    -----
    Gates: success rate (higher is better), median duration and median non-cache tokens
    (lower is better). "prefer_treatment" when every gate holds for the treatment
    (``>=``/``<=``), "prefer_control" when every gate holds in the opposite direction,
    "no_difference" when all three tie exactly (both would hold), otherwise "mixed"
    ("mixed results - inspect paired deltas";
    docs/decisions.md#ab-decision-rule).

    Examples
    --------
    >>> base = {"task_id": "t", "repeat": 0, "success": True, "duration_seconds": 2.0,
    ...         "total_cost_usd": 0.5, "input_tokens": 100, "output_tokens": 20,
    ...         "cache_read_tokens": 0, "cache_write_tokens": 0}
    >>> a = arm_statistics([{**base, "arm": "new", "duration_seconds": 1.0}])
    >>> b = arm_statistics([{**base, "arm": "old"}])
    >>> ab_decision(a, b)[0], ab_decision(b, a)[0], ab_decision(b, b)[0]
    ('prefer_treatment', 'prefer_control', 'no_difference')
    """
    gates = []
    for name, statistic, delta, direction in _GATES:
        t_value = float(getattr(treatment, statistic))
        c_value = float(getattr(control, statistic))
        sign = direction * _sign(t_value - c_value)
        favours = {1: "treatment", -1: "control", 0: "tie"}[sign]
        gates.append(Gate(name, statistic, t_value, c_value, favours, delta))
    signs = {g.favours for g in gates}
    decision: Decision
    if signs == {"tie"}:
        decision = "no_difference"
    elif "control" not in signs:
        decision = "prefer_treatment"
    elif "treatment" not in signs:
        decision = "prefer_control"
    else:
        decision = "mixed"
    return decision, tuple(gates)


@dataclass(frozen=True, repr=False)
class DeltaStatistics:
    """Mean and median of one paired delta, a bootstrap interval on the mean and a
    sign-flip permutation p-value (two-sided, H0: the delta is symmetric around 0)."""

    name: str
    mean: float
    median: float
    interval: ConfidenceInterval
    p_value: float

    def __repr__(self) -> str:
        return (
            f"DeltaStatistics(name={self.name!r}, mean={self.mean:.4g}, "
            f"median={self.median:.4g}, interval={self.interval.format()}, "
            f"p_value={self.p_value:.4g})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return {
            "name": self.name,
            "mean": self.mean,
            "median": self.median,
            "interval": self.interval.to_dict(),
            "p_value": self.p_value,
        }


_DECISION_TEXT = {
    "prefer_treatment": "prefer {treatment}",
    "prefer_control": "prefer {control}",
    "no_difference": "no difference",
    "mixed": "mixed results - inspect paired deltas",
    "inconclusive": "inconclusive - a gating interval contains 0",
}


@dataclass(frozen=True, repr=False)
class PairedComparison:
    """Result of :func:`paired_comparison`: arm statistics, paired deltas with intervals and
    p-values, the point decision of the three gates and the interval-aware verdict."""

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
        return (
            f"PairedComparison(treatment={self.treatment!r}, control={self.control!r}, "
            f"n_pairs={self.n_pairs}, decision={self.decision!r}, verdict={self.verdict!r})"
        )

    @property
    def decision_text(self) -> str:
        """The point decision in words (``"prefer with_skelly"``)."""
        return _DECISION_TEXT[self.decision].format(treatment=self.treatment, control=self.control)

    @property
    def verdict_text(self) -> str:
        """The interval-aware verdict in words."""
        return _DECISION_TEXT[self.verdict].format(treatment=self.treatment, control=self.control)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output (``None`` for ``solved_per_dollar`` at zero cost)."""
        return {
            "treatment": self.treatment,
            "control": self.control,
            "n_pairs": self.n_pairs,
            "arms": {
                self.treatment: self.treatment_stats.to_dict(),
                self.control: self.control_stats.to_dict(),
            },
            "deltas": {name: d.to_dict() for name, d in self.deltas.items()},
            "gates": [vars(g) for g in self.gates],
            "decision": self.decision,
            "decision_text": self.decision_text,
            "verdict": self.verdict,
            "verdict_text": self.verdict_text,
            "bootstrap": {
                "n_resamples": self.n_resamples,
                "confidence_level": self.confidence_level,
                "seed": self.seed,
                "method": self.method,
            },
        }

    def arm_rows(self) -> list[list[str]]:
        """Header + rows of the per-arm table."""
        fields = [
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


def _chunk_rows(n: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(n, 1))


def bootstrap_means(
    data: npt.NDArray[np.float64], n_resamples: int, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    """Means of every column of ``data`` (n, m) over ``n_resamples`` paired resamples.

    Rows are resampled with replacement, the same rows for every column (a paired
    bootstrap). Each chunk of resamples is a sparse 0/1 selection matrix (one row per
    resample, ``n`` drawn row indices, repeats summed by the product) multiplied by
    ``data``: one pass over the drawn indices serves all columns, so 10,000 pairs x 10,000
    resamples take about half a second.
    """
    from scipy import sparse

    n = data.shape[0]
    out = np.empty((n_resamples, data.shape[1]), dtype=np.float64)
    step = _chunk_rows(n)
    index_dtype = np.int64 if step * n >= 2**31 else np.int32
    ones = np.ones(step * n, dtype=np.float64)
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        idx = rng.integers(0, n, size=size * n, dtype=index_dtype)
        indptr = np.arange(0, size * n + 1, n, dtype=index_dtype)
        selection = sparse.csr_matrix((ones[: size * n], idx, indptr), shape=(size, n))
        out[start : start + size] = (selection @ data) / n
    return out


def sign_flip_p_values(
    data: npt.NDArray[np.float64], n_resamples: int, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    """Two-sided paired sign-flip permutation p-values of the mean of every column.

    ``p = (1 + #{|mean(s * d)| >= |mean(d)|}) / (1 + n_resamples)`` over random sign vectors
    ``s`` (shared by the columns); the ``+1`` keeps p above 0 (Phipson & Smyth, 2010).
    """
    n, m = data.shape
    observed = np.abs(data.mean(axis=0))
    total = data.sum(axis=0)
    tolerance = 1e-12 * (np.abs(data).sum(axis=0) / n) + 1e-300
    hits = np.zeros(m, dtype=np.int64)
    step = _chunk_rows(n)
    n_bytes = (n + 7) // 8
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        raw = rng.integers(0, 256, size=(size, n_bytes), dtype=np.uint8)
        bits = np.unpackbits(raw, axis=1, count=n).astype(np.float64)
        flipped = np.abs(2.0 * (bits @ data) - total) / n
        hits += (flipped >= observed - tolerance).sum(axis=0)
    return np.asarray((hits + 1) / (n_resamples + 1), dtype=np.float64)


def _arm_name(runs: Sequence[RunRecord], side: str) -> str:
    arms = sorted({r.arm for r in runs})
    if len(arms) != 1:
        raise ValueError(f"{side} records must all belong to one arm, got arms {arms}")
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
        Treatment runs (one arm, e.g. ``with_skelly``).
    b : iterable of RunRecord or mapping
        Control runs (one arm, e.g. ``without_skelly``), paired with ``a`` on
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
    resamples = check_int("n_resamples", n_resamples, minimum=100, maximum=MAX_RESAMPLES)
    level = check_confidence_level(confidence_level)
    seed_value = check_seed(seed)
    t_runs = validate_run_records(a)
    c_runs = validate_run_records(b)
    t_name, c_name = _arm_name(t_runs, "a (treatment)"), _arm_name(c_runs, "b (control)")
    if sorted(t_runs, key=_pair_key) == sorted(c_runs, key=_pair_key):
        raise ValueError(
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
    means = bootstrap_means(data, resamples, rng)
    p_values = sign_flip_p_values(data, resamples, rng)
    alpha = 1.0 - level
    lows, highs = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    results: dict[str, DeltaStatistics] = {}
    for j, name in enumerate(DELTA_NAMES):
        column = data[:, j]
        if np.all(column == column[0]):  # constant: no sampling variability at all
            low = high = float(column[0])
        else:
            low, high = float(lows[j]), float(highs[j])
        results[name] = DeltaStatistics(
            name=name,
            mean=float(column.mean()),
            median=float(np.median(column)),
            interval=ConfidenceInterval(low, high, level),
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


def split_arms(
    records: Iterable[RunRecord | Mapping[str, Any]],
    *,
    treatment: str | None = None,
    control: str | None = None,
) -> tuple[tuple[RunRecord, ...], tuple[RunRecord, ...]]:
    """Split mixed records into ``(treatment_runs, control_runs)``.

    Without names: ``with_skelly`` (treatment) / ``without_skelly`` (control) when
    those are the two arms, otherwise the first arm in record order is the control and the
    second the treatment. Exactly two arms are required.

    Parameters
    ----------
    records : iterable of RunRecord or mapping
        Runs of both arms.
    treatment, control : str, optional
        Arm names; when only one is given the other is the remaining arm.

    Returns
    -------
    tuple
        ``(treatment_runs, control_runs)``, each a tuple of RunRecord in record order.

    Raises
    ------
    ValueError
        For other than two arms, an unknown arm name or the same name twice.

    Examples
    --------
    >>> base = {"task_id": "t", "repeat": 0, "success": True, "duration_seconds": 1.0,
    ...         "total_cost_usd": 0.0, "input_tokens": 1, "output_tokens": 1,
    ...         "cache_read_tokens": 0, "cache_write_tokens": 0}
    >>> t, c = split_arms([{**base, "arm": "baseline"}, {**base, "arm": "candidate"}])
    >>> t[0].arm, c[0].arm
    ('candidate', 'baseline')
    """
    runs = validate_run_records(records)
    arms = list(dict.fromkeys(r.arm for r in runs))
    if treatment is None and control is None:
        if set(arms) == {"with_skelly", "without_skelly"}:
            treatment, control = "with_skelly", "without_skelly"
        elif len(arms) == 2:
            control, treatment = arms
        else:
            raise ValueError(f"records must hold exactly two arms, got {arms}")
    elif treatment is None or control is None:
        others = [arm for arm in arms if arm not in (treatment, control)]
        if len(others) != 1:
            raise ValueError(
                f"cannot infer the other arm: arms are {arms}, treatment={treatment!r}, "
                f"control={control!r}"
            )
        treatment = treatment if treatment is not None else others[0]
        control = control if control is not None else others[0]
    for name, value in (("treatment", treatment), ("control", control)):
        if value not in arms:
            raise ValueError(f"{name} arm {value!r} not found; arms are {arms}")
    if treatment == control:
        raise ValueError(f"treatment and control must differ, got {treatment!r} twice")
    extra = [arm for arm in arms if arm not in (treatment, control)]
    if extra:
        raise ValueError(f"records must hold exactly two arms, got {arms}")
    return (
        tuple(r for r in runs if r.arm == treatment),
        tuple(r for r in runs if r.arm == control),
    )
