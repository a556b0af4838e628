"""The summary of a scoring run: pass@k per k with a bootstrap interval, and tasks by count."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lift_metrics._checks import check_int
from lift_metrics._records import format_scores, record_dict
from lift_metrics.errors import InputValueError
from lift_metrics.scoring._results import SampleResult
from lift_metrics.stats import ConfidenceInterval

__all__ = ["SUMMARY_NAME", "ScoreSummary", "TaskCount", "summarize_results"]

SUMMARY_NAME = "summary.json"
STANDARD_KS: tuple[int, ...] = (1, 10, 100)
_RESAMPLES = 10_000


@dataclass(frozen=True)
class TaskCount:
    """Samples of one task, and how many passed."""

    n: int
    passed: int


@dataclass(frozen=True, repr=False)
class ScoreSummary:
    """What :func:`score_samples` measured.

    Attributes
    ----------
    n_samples : int
        Samples scored (all of the file).
    n_tasks : int
        Tasks with at least one sample (pass@k averages over these).
    pass_at_k : dict of str to float
        ``{"pass@1": ..., "pass@10": ...}``: the unbiased estimator, averaged over tasks.
    intervals : dict of str to ConfidenceInterval
        Percentile bootstrap interval of each pass@k over tasks (10,000 resamples).
    per_task : dict of str to TaskCount
        Samples and passes per task.
    status_counts : dict of str to int
        Samples per status (passed, failed, error, timeout, memory, crashed).
    tasks_without_samples : int
        Tasks of the task set that no sample answers.
    scored_now, resumed : int
        Samples scored by this call, and results kept from an earlier run.
    elapsed_s : float
        Wall-clock time of this call.
    output : Path or None
        The output folder.
    """

    n_samples: int
    n_tasks: int
    pass_at_k: dict[str, float]
    intervals: dict[str, ConfidenceInterval]
    per_task: dict[str, TaskCount]
    status_counts: dict[str, int]
    tasks_without_samples: int
    scored_now: int
    resumed: int
    elapsed_s: float
    output: Path | None = field(default=None)

    def __repr__(self) -> str:
        scores = format_scores(self.pass_at_k, ".4f")
        return f"ScoreSummary(n_samples={self.n_samples}, n_tasks={self.n_tasks}, {scores})"

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``summary.json``); timings are left out so that reruns compare equal."""
        per_task = {
            key: {"n": count.n, "passed": count.passed} for key, count in self.per_task.items()
        }
        return record_dict(
            self,
            "n_samples n_tasks tasks_without_samples pass_at_k intervals status_counts per_task",
            per_task=per_task,
        )

    def format_table(self) -> str:
        """Return a plain-text table: pass@k with intervals, then status counts."""
        rows = [f"{'metric':<10} {'value':>8}  95% bootstrap CI over {self.n_tasks} tasks"]
        for key, value in self.pass_at_k.items():
            rows.append(f"{key:<10} {value:>8.4f}  {self.intervals[key].format()}")
        statuses = ", ".join(f"{name} {count}" for name, count in self.status_counts.items())
        rows.append(f"samples    {self.n_samples:>8}  ({statuses})")
        if self.tasks_without_samples:
            rows.append(f"tasks without samples: {self.tasks_without_samples}")
        return "\n".join(rows)


def _ks_for(counts: Sequence[int], k: Iterable[int] | None) -> list[int]:
    smallest = min(counts)
    if k is None:
        return [value for value in STANDARD_KS if value <= smallest]
    chosen: list[int] = []
    for value in k:
        value = check_int("k", value, minimum=1)
        if value > smallest:
            raise InputValueError(
                f"k={value} needs at least {value} samples of every task; the fewest is {smallest}"
            )
        if value not in chosen:
            chosen.append(value)
    if not chosen:
        raise InputValueError("k must name at least one value")
    return sorted(chosen)


def summarize_results(
    results: Iterable[SampleResult],
    *,
    k: Iterable[int] | None = None,
    n_task_set: int | None = None,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> ScoreSummary:
    r"""pass@k with bootstrap intervals, per-task counts and status counts of ``results``.

    Parameters
    ----------
    results : iterable of SampleResult
        Every sample's result.
    k : iterable of int, optional
        The k of pass@k; default: 1, 10 and 100 where every task has at least k samples.
    n_task_set : int, optional
        Size of the task set (to count tasks without samples).
    confidence_level : float, default 0.95
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    ScoreSummary

    Raises
    ------
    ValueError
        No results, or a k larger than the fewest samples of a task.

    Notes
    -----
    pass@k of a task with n samples, c correct, is the unbiased estimator
    :math:`1 - \binom{n-c}{k} / \binom{n}{k}` (:func:`lift_metrics.stats.pass_at_k`); the
    reported figure is its mean over tasks. The interval resamples tasks with replacement
    (10,000 times) and takes the percentiles of the mean.
    """
    from lift_metrics._checks import check_confidence_level
    from lift_metrics._resampling import bootstrap_means, percentile_interval
    from lift_metrics.stats import pass_at_k

    level = check_confidence_level(confidence_level)
    n_by_task: Counter[str] = Counter()
    c_by_task: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    total = 0
    for result in results:
        n_by_task[result.task_id] += 1
        c_by_task[result.task_id] += int(result.passed)
        statuses[result.status] += 1
        total += 1
    if not total:
        raise InputValueError("results is empty: nothing to summarize")
    task_ids = list(n_by_task)
    n = np.array([n_by_task[t] for t in task_ids], dtype=np.int64)
    c = np.array([c_by_task[t] for t in task_ids], dtype=np.int64)
    ks = _ks_for(n.tolist(), k)
    per_task_scores = np.column_stack([pass_at_k(n, c, value) for value in ks])
    means = per_task_scores.mean(axis=0)
    boot = bootstrap_means(per_task_scores, _RESAMPLES, np.random.default_rng(seed))
    lows, highs = percentile_interval(boot, level)
    order = ("passed", "failed", "error", "timeout", "memory", "crashed")
    status_counts = {name: statuses[name] for name in order if statuses[name]}
    status_counts.update({name: count for name, count in statuses.items() if name not in order})
    return ScoreSummary(
        n_samples=total,
        n_tasks=len(task_ids),
        pass_at_k={f"pass@{value}": float(means[i]) for i, value in enumerate(ks)},
        intervals={
            f"pass@{value}": ConfidenceInterval(float(lows[i]), float(highs[i]), level)
            for i, value in enumerate(ks)
        },
        per_task={t: TaskCount(n_by_task[t], c_by_task[t]) for t in task_ids},
        status_counts=status_counts,
        tasks_without_samples=max(0, (n_task_set or 0) - len(task_ids)),
        scored_now=0,
        resumed=0,
        elapsed_s=0.0,
    )
