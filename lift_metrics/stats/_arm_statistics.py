"""Statistics of one arm's runs and the paired per-task deltas between two arms.

Runs of the two arms are paired on ``(task_id, repeat)``; deltas are ``treatment - control``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lift_metrics._checks import check_confidence_level
from lift_metrics._records import PlainRecord, short_repr
from lift_metrics.errors import InputValueError
from lift_metrics.stats._intervals import (
    ConfidenceInterval,
    wilson_interval,
)
from lift_metrics.stats._runs import RunRecord, validate_run_records
from lift_metrics.stats._summary import latency_percentiles

#: Paired deltas reported by :func:`paired_comparison`, in order.
DELTA_NAMES: tuple[str, ...] = (
    "pass_delta",
    "cost_delta_usd",
    "duration_delta_seconds",
    "token_delta",
    "non_cache_token_delta",
)


@dataclass(frozen=True, repr=False)
class ArmStatistics(PlainRecord):
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
        return short_repr(self, "arm!r runs success_rate:.4g total_cost_usd:.4g")


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
        raise InputValueError(f"records must all belong to one arm, got arms {arms}")
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
            raise InputValueError(
                f"{side} has two runs for task_id={run.task_id!r} repeat={run.repeat}"
            )
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
    t_runs = _by_key(validate_run_records(treatment, name="treatment"), "treatment")
    c_runs = _by_key(validate_run_records(control, name="control"), "control")
    only_t = sorted(t_runs.keys() - c_runs.keys())
    only_c = sorted(c_runs.keys() - t_runs.keys())
    if only_t or only_c:
        raise InputValueError(
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
