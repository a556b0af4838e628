"""The scoring job: samples x tasks -> resumable per-sample results and a pass@k summary."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lift_metrics._checks import check_int, check_positive
from lift_metrics._io import atomic_write_json
from lift_metrics.scoring._backend import JobResult, LocalBackend, ScoringBackend, ScoringJob
from lift_metrics.scoring._samples import Sample, SampleError, load_samples, samples_from_records
from lift_metrics.scoring._tasks import ScoringTask, load_tasks
from lift_metrics.stats import ConfidenceInterval

RESULTS_NAME = "results.jsonl"
SUMMARY_NAME = "summary.json"
RUN_NAME = "run.json"
STANDARD_KS: tuple[int, ...] = (1, 10, 100)
_FLUSH_LINES = 256
_FLUSH_SECONDS = 1.0
_RESAMPLES = 10_000


@dataclass(frozen=True)
class SampleResult:
    """The verdict on one sample (one line of ``results.jsonl``).

    Attributes
    ----------
    line : int
        Line of the sample in the samples file.
    digest : str
        Content hash of the sample (a resumed run refuses a changed file).
    task_id : str
    sample_id : str or None
    passed : bool
        Every test passed.
    status : str
        ``passed``, ``failed`` (a test failed or raised), ``error`` (does not parse, no such
        function, raised while loading), ``timeout``, ``memory`` or ``crashed``.
    tests_passed, tests_total : int
        Test cases that passed, and all of them (1 for a check script).
    outcomes : tuple of dict
        Per test: ``index``, ``passed``, ``actual_repr``, ``error``.
    elapsed_ms : float
        Wall-clock time of the execution.
    reason : str
        One line on why the status is what it is.
    code_quality : float or None
        :func:`lift_metrics.code.code_quality` against the task's reference, when asked for
        and the task has one.
    """

    line: int
    digest: str
    task_id: str
    sample_id: str | None
    passed: bool
    status: str
    tests_passed: int
    tests_total: int
    outcomes: tuple[dict[str, Any], ...]
    elapsed_ms: float
    reason: str
    code_quality: float | None = None

    def __repr__(self) -> str:
        return (
            f"SampleResult(line={self.line}, task_id={self.task_id!r}, status={self.status!r}, "
            f"tests={self.tests_passed}/{self.tests_total})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON object written to ``results.jsonl``."""
        out: dict[str, Any] = {
            "line": self.line,
            "digest": self.digest,
            "task_id": self.task_id,
            "sample_id": self.sample_id,
            "passed": self.passed,
            "status": self.status,
            "tests_passed": self.tests_passed,
            "tests_total": self.tests_total,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "reason": self.reason,
            "outcomes": list(self.outcomes),
        }
        if self.code_quality is not None:
            out["code_quality"] = self.code_quality
        return out

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> SampleResult:
        """Read one line of ``results.jsonl`` back (KeyError/TypeError when malformed)."""
        return cls(
            line=int(record["line"]),
            digest=str(record["digest"]),
            task_id=str(record["task_id"]),
            sample_id=record["sample_id"],
            passed=bool(record["passed"]),
            status=str(record["status"]),
            tests_passed=int(record["tests_passed"]),
            tests_total=int(record["tests_total"]),
            outcomes=tuple(record["outcomes"]),
            elapsed_ms=float(record["elapsed_ms"]),
            reason=str(record["reason"]),
            code_quality=record.get("code_quality"),
        )


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
        scores = ", ".join(f"{key}={value:.4f}" for key, value in self.pass_at_k.items())
        return f"ScoreSummary(n_samples={self.n_samples}, n_tasks={self.n_tasks}, {scores})"

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``summary.json``); timings are left out so that reruns compare equal."""
        return {
            "n_samples": self.n_samples,
            "n_tasks": self.n_tasks,
            "tasks_without_samples": self.tasks_without_samples,
            "pass_at_k": dict(self.pass_at_k),
            "intervals": {key: ci.to_dict() for key, ci in self.intervals.items()},
            "status_counts": dict(self.status_counts),
            "per_task": {
                key: {"n": count.n, "passed": count.passed} for key, count in self.per_task.items()
            },
        }

    def format_table(self) -> str:
        """A plain-text table: pass@k with intervals, then status counts."""
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
            raise ValueError(
                f"k={value} needs at least {value} samples of every task; the fewest is {smallest}"
            )
        if value not in chosen:
            chosen.append(value)
    if not chosen:
        raise ValueError("k must name at least one value")
    return sorted(chosen)


def summarize_results(
    results: Iterable[SampleResult],
    *,
    k: Iterable[int] | None = None,
    n_task_set: int | None = None,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> ScoreSummary:
    """pass@k with bootstrap intervals, per-task counts and status counts of ``results``.

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
    :math:`1 - \\binom{n-c}{k} / \\binom{n}{k}` (:func:`lift_metrics.stats.pass_at_k`); the
    reported figure is its mean over tasks. The interval resamples tasks with replacement
    (10,000 times) and takes the percentiles of the mean.
    """
    from lift_metrics.stats import bootstrap_means, check_confidence_level, pass_at_k

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
        raise ValueError("results is empty: nothing to summarize")
    task_ids = list(n_by_task)
    n = np.array([n_by_task[t] for t in task_ids], dtype=np.int64)
    c = np.array([c_by_task[t] for t in task_ids], dtype=np.int64)
    ks = _ks_for(n.tolist(), k)
    per_task_scores = np.column_stack([pass_at_k(n, c, value) for value in ks])
    means = per_task_scores.mean(axis=0)
    boot = bootstrap_means(per_task_scores, _RESAMPLES, np.random.default_rng(seed))
    tail = (1.0 - level) / 2.0
    lows = np.quantile(boot, tail, axis=0)
    highs = np.quantile(boot, 1.0 - tail, axis=0)
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


def _tasks_digest(tasks: Mapping[str, ScoringTask]) -> str:
    """A hash of everything about the tasks that decides a verdict."""
    import hashlib

    digest = hashlib.sha256()
    for task in tasks.values():
        digest.update(repr((task.task_id, task.prompt, task.entry_point, task.tests)).encode())
    return digest.hexdigest()[:16]


def _check_settings(path: Path, settings: Mapping[str, Any], results: Path) -> None:
    """Refuse to resume results computed against other tasks or another time limit."""
    if not path.exists() or not results.exists():
        return
    try:
        earlier = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = None
    if not isinstance(earlier, dict):
        raise ValueError(f"{path}: unreadable; score into a new output folder or turn resume off")
    for key, label in (("tasks_digest", "other tasks"), ("timeout_s", "another time limit")):
        if earlier.get(key) != settings[key]:
            raise ValueError(
                f"{results.parent}: its results were scored against {label} "
                f"({key} {earlier.get(key)!r}, now {settings[key]!r}); score into a new output "
                "folder or turn resume off"
            )


# -- the output file ----------------------------------------------------------------------------
def read_results(
    path: Path, samples: Mapping[int, Sample], samples_label: str
) -> list[SampleResult]:
    """Read an earlier run's results; drop a truncated last line (a killed run's).

    Raises ValueError when a result does not belong to the current samples (a changed file).
    """
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):  # a line cut short by a kill: scored again
        with path.open("r+b") as handle:
            handle.truncate(end)
            handle.flush()
            os.fsync(handle.fileno())
        data = data[:end]
    results: list[SampleResult] = []
    seen: set[int] = set()
    for number, raw in enumerate(data.splitlines(), start=1):
        where = f"{path}: line {number}"
        if not raw.strip():
            continue
        try:
            result = SampleResult.from_dict(json.loads(raw))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{where}: not a result written by this command ({type(exc).__name__}: {exc}); "
                "score into a new output folder"
            ) from None
        sample = samples.get(result.line)
        if sample is None or sample.digest != result.digest:
            raise ValueError(
                f"{where}: the sample on line {result.line} of {samples_label} changed since it "
                "was scored; score into a new output folder or turn resume off"
            )
        if result.line in seen:
            raise ValueError(f"{where}: line {result.line} of {samples_label} is scored twice")
        seen.add(result.line)
        results.append(result)
    return results


class _Appender:
    """Appends result lines in batches: one write, flush and fsync per batch."""

    def __init__(self, path: Path) -> None:
        self._handle = path.open("ab")
        self._buffer: list[bytes] = []
        self._last = time.monotonic()

    def add(self, result: SampleResult) -> None:
        line = json.dumps(result.to_dict(), ensure_ascii=False, allow_nan=False)
        self._buffer.append(line.encode("utf-8") + b"\n")
        if len(self._buffer) >= _FLUSH_LINES or time.monotonic() - self._last >= _FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self._buffer:
            # cleared first: an interrupt between the two may lose lines (scored again on
            # resume), never write them twice
            data = b"".join(self._buffer)
            self._buffer.clear()
            self._handle.write(data)
            self._handle.flush()
            os.fsync(self._handle.fileno())
        self._last = time.monotonic()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._handle.close()


def _result_from(job: JobResult, sample: Sample, quality: float | None) -> SampleResult:
    passed_count = sum(1 for outcome in job.outcomes if outcome.get("passed"))
    return SampleResult(
        line=sample.line,
        digest=sample.digest,
        task_id=sample.task_id,
        sample_id=sample.sample_id,
        passed=job.status == "passed",
        status=job.status,
        tests_passed=passed_count,
        tests_total=len(job.outcomes),
        outcomes=job.outcomes,
        elapsed_ms=job.elapsed_ms,
        reason=job.reason,
        code_quality=quality,
    )


def _resolve_samples(samples: Any) -> tuple[list[Sample], str]:
    if isinstance(samples, str | os.PathLike):
        return load_samples(samples), str(samples)
    if isinstance(samples, Iterable) and not isinstance(samples, str | bytes | Mapping):
        return samples_from_records(samples), "samples"
    raise TypeError(
        f"samples must be a path or a list of sample dicts, got {type(samples).__name__}"
    )


def _resolve_tasks(tasks: Any) -> dict[str, ScoringTask]:
    if isinstance(tasks, str | os.PathLike):
        return load_tasks(tasks)
    if isinstance(tasks, Mapping):
        return dict(tasks)
    if isinstance(tasks, Iterable):
        found: dict[str, ScoringTask] = {}
        for task in tasks:
            if not isinstance(task, ScoringTask):
                raise TypeError(f"tasks must hold ScoringTask objects, got {type(task).__name__}")
            found[task.task_id] = task
        return found
    raise TypeError(
        f"tasks must be a path, a task set name or ScoringTasks, got {type(tasks).__name__}"
    )


def _check_known(samples: list[Sample], tasks: Mapping[str, ScoringTask], label: str) -> None:
    for sample in samples:
        if sample.task_id not in tasks:
            known = ", ".join(list(tasks)[:3])
            raise SampleError(
                f"{label}: line {sample.line}: unknown task_id {sample.task_id!r} "
                f"(the tasks have {len(tasks)} ids, e.g. {known})"
            )


def score_samples(
    samples: str | os.PathLike[str] | Iterable[Mapping[str, Any] | Sample],
    tasks: str | os.PathLike[str] | Mapping[str, ScoringTask] | Iterable[ScoringTask],
    *,
    output: str | os.PathLike[str] | None = None,
    k: Iterable[int] | None = None,
    concurrency: int | None = None,
    timeout_s: float = 3.0,
    backend: ScoringBackend | None = None,
    resume: bool = True,
    code_quality: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ScoreSummary:
    """Score generated programs against their tasks' tests; pass@k with intervals.

    Parameters
    ----------
    samples : path-like or iterable of dict
        A JSON Lines file in the human-eval / EvalPlus format (see :func:`load_samples`), or
        the same records in memory.
    tasks : str, path-like, or ScoringTask objects
        ``"humaneval"``, ``"project"`` or a task file (see :func:`load_tasks`).
    output : path-like, optional
        Folder for ``results.jsonl`` (one line per sample, appended in fsynced batches),
        ``summary.json`` and ``run.json`` (a hash of the tasks and the time limit, checked on
        resume); None keeps results in memory only (no resume).
    k : iterable of int, optional
        The k of pass@k; default: 1, 10 and 100 where every task has at least k samples.
    concurrency : int, optional
        Executions at a time for the default local backend (default: twice the CPUs).
    timeout_s : float, default 3.0
        Wall-clock limit of one sample's execution (all its tests), as in human-eval.
    backend : ScoringBackend, optional
        Where jobs run; default :class:`LocalBackend` (``concurrency`` sandbox workers).
    resume : bool, default True
        Keep the results already in ``output`` and score only the other samples. A result
        whose sample changed (same line, other content), or results scored against other
        tasks or another ``timeout_s``, are refused with an error.
    code_quality : bool, default False
        Also compute :func:`lift_metrics.code.code_quality` against the task's reference,
        where there is one (runs the tests a second time and embeds both programs: slow).
    progress : callable, optional
        Called as ``progress(done, total)`` after each result.

    Returns
    -------
    ScoreSummary

    Raises
    ------
    SampleError
        Before anything is written or run: a malformed sample (named by its line), an
        unknown task id, a repeated sample id.
    ValueError
        A bad task file, a k larger than the fewest samples of a task, results in
        ``output`` that belong to another samples file.
    KeyboardInterrupt
        Passed on after the results received so far are written: rerun to resume.

    Notes
    -----
    A sample's program is the task's prompt followed by the completion (human-eval), or the
    solution. Every sample runs in a fresh sandboxed process (see
    :class:`lift_metrics.sandbox.Sandbox`). Results are keyed by the sample's line and a
    hash of its content, so a rerun never scores a sample twice and notices an edited file.

    Examples
    --------
    >>> summary = score_samples(
    ...     [{"task_id": "t001", "solution": "def add(a, b):\\n    return a + b\\n"},
    ...      {"task_id": "t001", "solution": "def add(a, b):\\n    return a - b\\n"}],
    ...     "project")
    >>> summary.pass_at_k, summary.status_counts
    ({'pass@1': 0.5}, {'passed': 1, 'failed': 1})
    """
    started = time.monotonic()
    limit_s = check_positive("timeout_s", timeout_s)
    sample_list, label = _resolve_samples(samples)
    task_map = _resolve_tasks(tasks)
    _check_known(sample_list, task_map, label)
    counts = Counter(sample.task_id for sample in sample_list)
    _ks_for(list(counts.values()), k)  # a bad k fails before anything runs
    if backend is not None and not isinstance(backend, ScoringBackend):
        raise TypeError(
            f"backend must have run(jobs) and close() methods, got {type(backend).__name__}"
        )
    by_line = {sample.line: sample for sample in sample_list}
    done: dict[int, SampleResult] = {}
    results_path: Path | None = None
    if output is not None:
        folder = Path(output)
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"output {str(folder)!r} exists and is not a folder")
        results_path = folder / RESULTS_NAME
        settings = {"tasks_digest": _tasks_digest(task_map), "timeout_s": limit_s}
        if resume:
            _check_settings(folder / RUN_NAME, settings, results_path)
            for result in read_results(results_path, by_line, label):
                done[result.line] = result
        folder.mkdir(parents=True, exist_ok=True)
        if not resume:
            results_path.write_bytes(b"")
        atomic_write_json(folder / RUN_NAME, settings)
    resumed = len(done)
    todo = [sample for sample in sample_list if sample.line not in done]
    if output is not None and todo:  # a summary only ever describes a finished run
        (Path(output) / SUMMARY_NAME).unlink(missing_ok=True)

    def jobs() -> Iterator[ScoringJob]:
        for sample in todo:
            task = task_map[sample.task_id]
            code = task.program(sample.kind, sample.text)
            yield ScoringJob(sample.line, code, task.tests, task.entry_point, limit_s)

    owned = backend is None
    runner: ScoringBackend = LocalBackend(concurrency=concurrency) if backend is None else backend
    appender = _Appender(results_path) if results_path is not None else None
    total = len(sample_list)
    if progress is not None:
        progress(len(done), total)
    stream = runner.run(jobs())
    try:
        for job_result in stream:
            sample = by_line[job_result.key]
            quality = None
            if code_quality:
                quality = _quality(sample, task_map[sample.task_id], limit_s)
            result = _result_from(job_result, sample, quality)
            done[result.line] = result
            if appender is not None:
                appender.add(result)
            if progress is not None:
                progress(len(done), total)
    finally:
        close = getattr(stream, "close", None)
        if callable(close):
            close()
        if appender is not None:
            appender.close()
        if owned:
            runner.close()
    missing = [line for line in by_line if line not in done]
    if missing:
        raise RuntimeError(
            f"the backend returned no result for {len(missing)} samples (first: line {missing[0]})"
        )
    ordered = [done[sample.line] for sample in sample_list]
    summary = dataclasses.replace(
        summarize_results(ordered, k=k, n_task_set=len(task_map)),
        scored_now=total - resumed,
        resumed=resumed,
        elapsed_s=time.monotonic() - started,
        output=None if output is None else Path(output),
    )
    if output is not None:
        atomic_write_json(Path(output) / SUMMARY_NAME, summary.to_dict())
    return summary


def _quality(sample: Sample, task: ScoringTask, timeout_s: float) -> float | None:
    if task.reference is None:
        return None
    from lift_metrics.code import code_quality

    program = task.program(sample.kind, sample.text)
    return float(
        code_quality(
            program, task.reference, task.tests, entry_point=task.entry_point, timeout_s=timeout_s
        )
    )
