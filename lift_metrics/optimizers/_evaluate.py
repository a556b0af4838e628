"""Evaluating a DSPy program over examples: per-example timeout, latency, usage, N runs.

Each example runs under a timeout (a timed-out
example is marked and scores 0; the run goes on), latency and billed tokens/cost are recorded
per example, and with ``runs > 1`` every example gets the mean and standard deviation of its
scores over the runs (tokens and cost are summed). Aggregate statistics come from
:mod:`lift_metrics.stats` (``summarize``); nothing here re-derives a formula.
"""

from __future__ import annotations

import contextvars
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lift_metrics._checks import check_int, check_positive, score_value
from lift_metrics._io import atomic_write_json, atomic_write_text
from lift_metrics._progress import ProgressBar
from lift_metrics._usage import BudgetExceeded, UsageRecorder, UsageTotals
from lift_metrics.dspy_metrics import record_measurement
from lift_metrics.errors import InputValueError
from lift_metrics.lm import PromptTooLongError, cancel_scope, refused_prompts
from lift_metrics.optimizers._eval_results import (
    Evaluation,
    ExampleResult,
    ExampleSummary,
    usage_fields,
)

#: The most repetitions one evaluation may ask for (each run evaluates every example again).
MAX_RUNS = 1000

__all__ = ["evaluate_program", "save_evaluation"]

_POLL_S = 0.02
_MAX_TEXT = 4000


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text[:500]


def _outputs(prediction: Any) -> dict[str, Any]:
    """Return a JSON-friendly snapshot of a prediction's fields (long texts cut)."""
    out: dict[str, Any] = {}
    keys = list(prediction.keys()) if hasattr(prediction, "keys") else []
    for key in keys:
        value = prediction[key]
        if hasattr(value, "model_dump_json"):
            value = value.model_dump_json()
        if isinstance(value, str) and len(value) > _MAX_TEXT:
            value = value[:_MAX_TEXT] + "…"
        if value is None or isinstance(value, str | int | float | bool):
            out[key] = value
    return out


class _Job:
    """One example in flight on a daemon thread.

    Python cannot kill threads: a timed-out job is cancelled (a local-LM generation stops at
    its next token, later LM calls are refused) and abandoned, its result discarded.
    """

    def __init__(self, index: int, target: Callable[[], Any]) -> None:
        self.index = index
        self.started = time.perf_counter()
        self.result: Any = None
        self.failure: BaseException | None = None
        self.refusals: list[str] = []  # local-LM calls refused for a too-long prompt
        self.done = threading.Event()
        self.cancel = threading.Event()
        context = contextvars.copy_context()  # carries dspy.context(...) into the thread

        def cancellable() -> Any:
            with cancel_scope(self.cancel), refused_prompts() as refusals:
                self.refusals = refusals
                return target()

        def run() -> None:
            try:
                self.result = context.run(cancellable)
            except BaseException as exc:  # handed to the coordinating thread
                self.failure = exc
            finally:
                self.done.set()

        self.thread = threading.Thread(target=run, name=f"lift-eval-{index}", daemon=True)
        self.thread.start()


def evaluate_program(
    program: Any,
    examples: Sequence[Any],
    *,
    metrics: Mapping[str, Callable[..., Any]],
    runs: int = 1,
    timeout_s: float = 120.0,
    num_threads: int = 1,
    progress: bool = False,
    description: str = "evaluating",
    arm: int = 0,
) -> Evaluation:
    """Run ``program`` on every example ``runs`` times and score it with ``metrics``.

    Parameters
    ----------
    program : callable
        A DSPy module (or any callable) taking the example's inputs as keywords.
    examples : sequence of dspy.Example
        Examples with inputs marked (``example.inputs()``); ``task_id`` names rows.
    metrics : mapping of str to callable
        ``name -> metric(example, prediction)``; the first is the primary metric. A metric
        may return a number, a bool or a ``dspy.Prediction`` with ``score``.
    runs : int, default 1
        Repetitions, from 1 to :data:`MAX_RUNS` (1000). Run ``r > 0`` uses
        ``lm.copy(rollout_id=r)`` so that DSPy's cache does not hand back run 0's answers
        (with temperature 0 the LM may answer the same anyway).
    arm : int, default 0
        Which arm of a comparison this is. Run ``r`` of arm ``a`` uses rollout id
        ``a * MAX_RUNS + r``, so that the arms never read each other's cached LM answers: a
        program that asks what the other arm asked would otherwise get its answers in no
        time and for free, and win on latency and cost without running (the runner's
        baseline is arm 0, the optimized program arm 1). A rerun of the same arm still
        reads its own cached answers.
    timeout_s : float, default 120
        Wall-clock limit per example for the program call and its scoring. A timed-out
        example scores 0 on every metric, is marked ``timed_out`` and the run goes on. Its
        local-LM generation stops at the next token and its later local-LM calls are
        refused, so its thread ends; a remote LM request already sent runs to its end.
        An interrupted evaluation (Ctrl-C) stops its examples' generations the same way.
    num_threads : int, default 1
        Examples evaluated at once.
    progress : bool, default False
        Show a rich progress bar.
    description : str
        Label of the progress bar.

    Returns
    -------
    Evaluation

    Raises
    ------
    ValueError
        For empty ``examples`` or ``metrics``, or a non-positive ``runs``, ``timeout_s`` or
        ``num_threads``.
    BudgetExceeded
        When the run's budget stops an LM call; ``exc.partial`` holds the
        :class:`Evaluation` of the examples that finished (``complete=False``).
    lift_metrics.lm.PromptTooLongError
        When the local LM refused a call of an example because its prompt does not fit the
        model's context with room for the answer (prompt tokens + ``max_tokens`` > ``n_ctx``):
        the program cannot be evaluated with this LM. The message names the example, the
        prompt's length and the limit; the examples still running are stopped.

    Notes
    -----
    A program or metric that raises scores 0 with the error kept in ``ExampleResult.error``.
    Latency is the wall time of the program call in ms; usage comes from DSPy's usage
    tracker (one :class:`~lift_metrics._usage.UsageRecorder` per example).
    Statistics over examples use :func:`lift_metrics.stats.summarize` (population std).

    Examples
    --------
    >>> import dspy
    >>> class Echo(dspy.Module):
    ...     def forward(self, prompt):
    ...         return dspy.Prediction(answer=prompt.upper())
    >>> data = [dspy.Example(prompt="a", answer="A", task_id="t1").with_inputs("prompt"),
    ...         dspy.Example(prompt="b", answer="x", task_id="t2").with_inputs("prompt")]
    >>> exact = lambda ex, pred: float(ex.answer == pred.answer)
    >>> ev = evaluate_program(Echo(), data, metrics={"exact": exact})
    >>> ev.scores, ev.mean_score
    ([1.0, 0.0], 0.5)
    """
    if not metrics:
        raise InputValueError("metrics must name at least one metric, got an empty mapping")
    if len(examples) == 0:
        raise InputValueError(
            "examples must not be empty: an evaluation of no examples is no result"
        )
    runs = check_int("runs", runs, minimum=1, maximum=MAX_RUNS)
    arm = check_int("arm", arm, minimum=0)
    timeout_s = check_positive("timeout_s", timeout_s)
    num_threads = check_int("num_threads", num_threads, minimum=1)
    names = tuple(metrics)
    started = time.perf_counter()
    all_runs: list[tuple[ExampleResult, ...]] = []
    with ProgressBar(description, len(examples) * runs, enabled=progress, stderr=False) as bar:
        for run in range(runs):
            try:
                results = _one_run(
                    program,
                    examples,
                    metrics,
                    run,
                    arm * MAX_RUNS + run,
                    timeout_s,
                    num_threads,
                    bar.advance,
                )
            except BudgetExceeded as exc:
                partial_run: list[ExampleResult] = exc.partial or []
                done = [*all_runs, tuple(partial_run)] if partial_run else all_runs
                exc.partial = _assemble(
                    names, done, timeout_s, time.perf_counter() - started, str(exc)
                )
                raise
            all_runs.append(tuple(results))
    return _assemble(names, all_runs, timeout_s, time.perf_counter() - started, None)


def _run_lm_context(rollout: int) -> Any:
    import contextlib

    from dspy.dsp.utils.settings import settings

    lm = settings.lm
    if rollout == 0 or lm is None or not hasattr(lm, "copy"):
        return contextlib.nullcontext()
    copy = lm.copy(rollout_id=rollout)
    if hasattr(copy, "_warned_zero_temp_rollout"):
        # DSPy warns that a rollout id does not change what a temperature-0 LM generates;
        # it is used here for its other effect, a cache entry of its own
        copy._warned_zero_temp_rollout = True
    return settings.context(lm=copy)


def _one_run(
    program: Any,
    examples: Sequence[Any],
    metrics: Mapping[str, Callable[..., Any]],
    run: int,
    rollout: int,
    timeout_s: float,
    num_threads: int,
    advance: Callable[[], None],
) -> list[ExampleResult]:
    results: dict[int, ExampleResult] = {}
    pending = list(range(len(examples)))
    active: list[_Job] = []
    with _run_lm_context(rollout):
        try:
            while pending or active:
                while pending and len(active) < num_threads:
                    index = pending.pop(0)
                    active.append(_Job(index, _task(program, examples[index], metrics)))
                time.sleep(_POLL_S) if active else None
                for job in list(active):
                    if job.done.is_set():
                        active.remove(job)
                        if isinstance(job.failure, BudgetExceeded):
                            raise job.failure
                        if job.failure is not None and not isinstance(job.failure, Exception):
                            raise job.failure  # KeyboardInterrupt, SystemExit
                        if job.refusals:  # every such example would score 0: no result
                            task_id = _task_id(examples[job.index], job.index)
                            raise PromptTooLongError(f"example {task_id}: {job.refusals[0]}")
                        results[job.index] = _finish(job, examples, metrics, run)
                        advance()
                    elif time.perf_counter() - job.started > timeout_s:
                        job.cancel.set()  # its LM generation stops; the thread then ends
                        active.remove(job)
                        results[job.index] = _timed_out(job.index, examples, metrics, run)
                        advance()
        except BudgetExceeded as exc:
            exc.partial = [results[i] for i in sorted(results)]
            raise
        finally:  # Ctrl-C, a budget stop: examples still running stop generating too
            for job in active:
                job.cancel.set()
    return [results[i] for i in range(len(examples))]


def _task(program: Any, example: Any, metrics: Mapping[str, Callable[..., Any]]) -> Any:
    def work() -> tuple[Any, float, Any, dict[str, float], str | None]:
        from dspy.dsp.utils.settings import settings

        recorder = UsageRecorder(parent=settings.usage_tracker)
        with settings.context(usage_tracker=recorder):
            begin = time.perf_counter()
            error: str | None = None
            try:
                prediction = program(**example.inputs())
            except Exception as exc:
                prediction, error = None, _one_line(exc)
            latency_ms = (time.perf_counter() - begin) * 1000.0
        if prediction is not None:  # the metrics read these, not the prediction's fields
            usage = recorder.totals()
            record_measurement(
                prediction, latency_ms=latency_ms, cost_usd=usage.cost_usd, lm_calls=usage.lm_calls
            )
        scores: dict[str, float] = {}
        for name, metric in metrics.items():
            if prediction is None:
                scores[name] = 0.0
                continue
            try:
                score, missing = score_value(metric(example, prediction))
            except Exception as exc:
                score, missing = None, _one_line(exc)
            if score is None:  # scored 0 in the means; the reason is kept with the example
                scores[name] = 0.0
                error = error or f"metric {name}: {missing}"
            else:
                scores[name] = score
        return prediction, latency_ms, recorder.totals(), scores, error

    return work


def _task_id(example: Any, index: int) -> str:
    value = example.get("task_id") if hasattr(example, "get") else None
    return str(value) if value is not None else f"#{index}"


def _finish(
    job: _Job, examples: Sequence[Any], metrics: Mapping[str, Any], run: int
) -> ExampleResult:
    if job.failure is not None:  # an Exception escaped the task itself
        return _failed(job.index, examples, metrics, run, _one_line(job.failure), False)
    prediction, latency_ms, usage, scores, error = job.result
    return ExampleResult(
        index=job.index,
        task_id=_task_id(examples[job.index], job.index),
        run=run,
        scores=scores,
        timed_out=False,
        error=error,
        latency_ms=latency_ms,
        **usage_fields(usage),
        outputs={} if prediction is None else _outputs(prediction),
    )


def _failed(
    index: int,
    examples: Sequence[Any],
    metrics: Mapping[str, Any],
    run: int,
    error: str,
    timed_out: bool,
    latency_ms: float = 0.0,
) -> ExampleResult:
    return ExampleResult(
        index=index,
        task_id=_task_id(examples[index], index),
        run=run,
        scores=dict.fromkeys(metrics, 0.0),
        timed_out=timed_out,
        error=error,
        latency_ms=latency_ms,
        **usage_fields(UsageTotals()),
    )


def _timed_out(
    index: int, examples: Sequence[Any], metrics: Mapping[str, Any], run: int
) -> ExampleResult:
    return _failed(index, examples, metrics, run, "timed out", True, latency_ms=math.inf)


def _assemble(
    names: tuple[str, ...],
    runs: list[tuple[ExampleResult, ...]],
    timeout_s: float,
    wall_time_s: float,
    stop_reason: str | None,
) -> Evaluation:
    from lift_metrics.stats import summarize

    by_index: dict[int, list[ExampleResult]] = {}
    for run in runs:
        for result in run:
            by_index.setdefault(result.index, []).append(result)
    summaries = []
    for index in sorted(by_index):
        rows = by_index[index]
        means: dict[str, float] = {}
        stds: dict[str, float] = {}
        for name in names:
            stats = summarize([r.scores[name] for r in rows])
            means[name], stds[name] = stats.mean, stats.std_dev
        finite = [r.latency_ms for r in rows if math.isfinite(r.latency_ms)]
        summaries.append(
            ExampleSummary(
                index=index,
                task_id=rows[0].task_id,
                mean_scores=means,
                std_scores=stds,
                timed_out_runs=sum(r.timed_out for r in rows),
                mean_latency_ms=summarize(finite).mean if finite else math.inf,
                total_tokens=sum(r.total_tokens for r in rows),
                cost_usd=sum(r.cost_usd for r in rows),
            )
        )
    statistics = (
        {name: summarize([s.mean_scores[name] for s in summaries]) for name in names}
        if summaries
        else {}
    )
    return Evaluation(
        metric_names=names,
        runs=tuple(runs),
        examples=tuple(summaries),
        statistics=statistics,
        timeout_s=timeout_s,
        wall_time_s=wall_time_s,
        complete=stop_reason is None,
        stop_reason=stop_reason,
    )


def save_evaluation(
    evaluation: Evaluation,
    folder: str | Path,
    *,
    stem: str = "evaluation",
    provenance: Mapping[str, Any] | None = None,
    title: str = "Evaluation",
) -> list[Path]:
    """Write an evaluation atomically.

    ``{stem}_run{r}.json`` per run, ``{stem}.json`` (the aggregate, with ``provenance``) and
    ``{stem}.md``; return the paths written.

    Examples
    --------
    >>> import tempfile, dspy
    >>> ev = evaluate_program(lambda prompt: dspy.Prediction(a=prompt),
    ...                       [dspy.Example(prompt="x").with_inputs("prompt")],
    ...                       metrics={"one": lambda ex, pred: 1.0})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     [p.name for p in save_evaluation(ev, tmp, stem="base")]
    ['base_run1.json', 'base.json', 'base.md']
    """
    target = Path(folder)
    written = []
    for run in range(len(evaluation.runs)):
        written.append(
            atomic_write_json(target / f"{stem}_run{run + 1}.json", evaluation.run_dict(run))
        )
    aggregate = {**evaluation.to_dict(), "provenance": dict(provenance or {})}
    written.append(atomic_write_json(target / f"{stem}.json", aggregate))
    written.append(atomic_write_text(target / f"{stem}.md", evaluation.to_markdown(title=title)))
    return written
