"""``run_optimizer``: baseline -> optimize (MIPROv2, COPRO or GEPA) -> optimized -> compare.

One run writes into its own folder (``output_dir`` of the config), every file atomically::

    config.json              the validated config, its hash, provenance
    baseline/                evaluation of the unoptimized pipeline on the test split
    optimized/               evaluation of the optimized pipeline on the test split
    program.json             the optimized program, in DSPy's own format (LiftPipeline().load)
    trials.json              the optimizer's trial history
    comparison.json          paired deltas with bootstrap intervals, the verdict
    code/baseline/, code/optimized/
                             each test task's generated program (<task_id>.py)
    result.json, report.md   the summary
    cache/                   DSPy's LM cache (unless cache_dir is set): a rerun resumes here

A budget stop (:class:`~lift_metrics.errors.BudgetExceeded`) ends the run
cleanly: what finished is saved and ``OptimizationResult.stop_reason`` says why. Ctrl-C or a
killed process leaves only whole files (atomic writes); rerunning the same config replays
finished LM calls from the cache for free. The evaluations never read each other's cached
answers (each is an ``arm`` of :func:`~lift_metrics.optimizers.evaluate_program`): an optimized
program that asks what the baseline asked is timed and billed as it runs.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from lift_metrics._io import (
    atomic_write_json,
    atomic_write_leftovers,
    atomic_write_text,
    remove_outputs,
)
from lift_metrics._usage import UsageMeter, check_budget_prices
from lift_metrics.errors import BudgetExceeded
from lift_metrics.optimizers._code_report import (
    code_summary,
    predictor_summary,
    save_generated_code,
)
from lift_metrics.optimizers._comparison import _comparison, _deltas, _trials, validation_choice
from lift_metrics.optimizers._config import (
    RunConfig,
    build_metric,
    load_config,
)
from lift_metrics.optimizers._eval_results import Evaluation
from lift_metrics.optimizers._evaluate import evaluate_program, save_evaluation
from lift_metrics.optimizers._preflight import preflight
from lift_metrics.optimizers._provenance import (
    _dataset_provenance,
    _lm_description,
    _lm_session,
    _versions,
    save_program,
)
from lift_metrics.optimizers._report import _console, _status, render_report, result_table
from lift_metrics.optimizers._result import MetricDelta, OptimizationResult
from lift_metrics.optimizers._setup import (
    TimedMetric,
    _build_optimizer,
    _compile,
    _examples,
    evaluation_metrics,
)

__all__ = ["MetricDelta", "OptimizationResult", "run_optimizer"]

logger = logging.getLogger(__name__)


_RUN_OUTPUTS = (
    "program.json",
    "trials.json",
    "comparison.json",
    "result.json",
    "report.md",
    "baseline",
    "optimized",
    "code",
)


def _clear_previous(out: Path, config_hash: str) -> None:
    """Remove the outputs of an earlier run in ``out``, and a killed process's temporary files.

    A run stopped early then never sits next to stale files of another run, nor next to the hidden
    temporary files that a killed process left before their atomic rename. The LM cache stays (it is
    what makes a rerun cheap); GEPA's state folder stays only when the config is unchanged (GEPA
    resumes from it).
    """
    previous_hash = None
    try:
        previous = json.loads((out / "config.json").read_text(encoding="utf-8"))
        previous_hash = previous["provenance"]["config_hash"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    names = list(_RUN_OUTPUTS)
    if previous_hash != config_hash:
        names.append("gepa_logs")
    remove_outputs(out, names)
    for leftover in atomic_write_leftovers(out, "config.json"):
        leftover.unlink()


def _resolve_lms(config: RunConfig, lm: Any, prompt_lm: Any) -> tuple[Any, Any]:
    from lift_metrics.lm import resolve_lm

    task = lm if lm is not None else resolve_lm(dict(config.lm))
    if prompt_lm is not None:
        return task, prompt_lm
    if config.prompt_lm is not None:
        return task, resolve_lm(dict(config.prompt_lm))
    return task, task


def run_optimizer(
    config: RunConfig | str | os.PathLike[str],
    *,
    output_dir: str | os.PathLike[str] | None = None,
    lm: Any = None,
    prompt_lm: Any = None,
    progress: bool = True,
    mlflow: bool | str = False,
) -> OptimizationResult:
    """Optimize the reference pipeline with MIPROv2, COPRO or GEPA and measure the change.

    Parameters
    ----------
    config : RunConfig or path-like
        A validated config or a TOML file (format: ``optimizers/README.md``).
    output_dir : path-like, optional
        Overrides the config's ``output_dir``.
    lm, prompt_lm : dspy.BaseLM, optional
        LM objects that override ``[lm]`` / ``[prompt_lm]`` (tests pass ``DummyLM`` here).
        ``prompt_lm`` defaults to the task LM.
    progress : bool, default True
        Rich progress bars and the final table on the terminal.
    mlflow : bool or str, default False
        Log the finished run to MLflow (``lift_metrics.optimizers._tracking``): ``True`` for
        a SQLite store under ``output_dir/mlflow``, a string for a tracking URI. Needs
        ``pip install 'lift-metrics[tracking]'``; both, and the URI (its form, and that a
        server accepts a connection), are checked before any LM call. Tracking happens after
        every file of the run is written.

    Returns
    -------
    OptimizationResult

    Raises
    ------
    TrackingError
        Logging the finished run to MLflow failed (its files are complete on disk).
    FileNotFoundError
        A missing config or dataset file, a missing GGUF model.
    ValueError
        A bad config (one line, before any LM call): unknown key or optimizer, an argument
        DSPy does not accept, a DSPy trap, an unreachable LM server, a file that is not a
        GGUF model.

    Notes
    -----
    Steps: (1) validate the config, check the data and the LM server, build the LMs, the
    metric and the optimizer (no LM call yet); (2) evaluate the unoptimized
    :class:`~lift_metrics.optimizers.LiftPipeline` on the test split; (3) ``compile`` on the
    train (and val) split; (4) evaluate the optimized program on the test split; (5)
    per-metric paired deltas (``lift_metrics.stats.paired_bootstrap``: percentile intervals
    and sign-flip p-values) and ``lift_metrics.stats.paired_comparison`` on the
    per-example runs. The budget covers all steps; when it is spent the current step stops,
    what finished is saved and the later steps are skipped.
    """
    if not isinstance(config, RunConfig):
        config = load_config(config)
    if output_dir is not None:
        config = config.replace(output_dir=Path(output_dir))
    started = time.perf_counter()
    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    preflight(config)
    if mlflow:
        mlflow = _check_mlflow(mlflow)
    task_lm, proposal_lm = _resolve_lms(config, lm, prompt_lm)
    check_budget_prices(
        config.budget,
        {
            m
            for m in (getattr(task_lm, "model", None), getattr(proposal_lm, "model", None))
            if isinstance(m, str)
        },
    )
    metric = TimedMetric(build_metric(config.metric))
    optimizer = _build_optimizer(config, metric, task_lm, proposal_lm)
    train, val, test = _examples(config)
    out = config.output_dir
    provenance = _provenance(config, started_at, (task_lm, proposal_lm), (train, val, test))
    _clear_previous(out, config.config_hash)
    atomic_write_json(out / "config.json", {"config": config.to_dict(), "provenance": provenance})
    meter = UsageMeter(config.budget)
    from lift_metrics._usage import budget_callback
    from lift_metrics.optimizers._pipeline import LiftPipeline

    metrics = {
        name: m if isinstance(m, TimedMetric) else TimedMetric(m)
        for name, m in evaluation_metrics(config.metric.name, metric).items()
    }
    threshold = float(getattr(metric, "threshold", 0.5))
    baseline: Evaluation | None = None
    optimized: Evaluation | None = None
    program: Any = None
    stop_reason: str | None = None
    trials: dict[str, Any] = {"optimizer": config.optimizer.name}
    console = _console(progress)
    eval_kwargs: dict[str, Any] = {
        "metrics": metrics,
        "runs": config.evaluation.runs,
        "timeout_s": config.evaluation.timeout_s,
        "num_threads": config.evaluation.num_threads,
        "progress": progress,
    }
    with _lm_session(config.resolved_cache_dir, task_lm, meter, callbacks=[budget_callback(meter)]):
        baseline, stop_reason = _evaluate_arm(
            LiftPipeline(**config.pipeline), test, "baseline", out, provenance, eval_kwargs
        )
        if stop_reason is None:
            try:
                with _status(console, f"compiling with {config.optimizer.class_name}"):
                    program = _compile(config, optimizer, train, val)
            except BudgetExceeded as exc:
                stop_reason = f"during {config.optimizer.class_name}.compile: {exc}"
            trials = _trials(config.optimizer.name, optimizer, program)
            trials["stopped"] = stop_reason
            atomic_write_json(out / "trials.json", trials)
        if program is not None and stop_reason is None and val:
            trials["validation"], stop_reason = _check_choice(
                config,
                program,
                val,
                {**eval_kwargs, "metrics": dict([next(iter(metrics.items()))])},
            )
            atomic_write_json(out / "trials.json", trials)
            warning = (trials["validation"] or {}).get("warning")
            if warning:
                logger.warning("%s", warning)
                if console is not None:
                    console.print(f"warning: {warning}", soft_wrap=True)
        if program is not None:
            save_program(program, out / "program.json")
            optimized, stopped = _evaluate_arm(
                program, test, "optimized", out, provenance, eval_kwargs
            )
            stop_reason = stopped or stop_reason
    deltas: tuple[MetricDelta, ...] = ()
    comparison = None
    if baseline is not None and optimized is not None and optimized.examples:
        deltas, comparison = _compare(baseline, optimized, threshold, config)
    code = {
        arm: code_summary(ev, test)
        for arm, ev in (("baseline", baseline), ("optimized", optimized))
        if ev is not None
    }
    meter.settle()  # the calls the budget let through are billed before the totals are read
    result = OptimizationResult(
        config=config,
        output_dir=out,
        baseline=baseline,
        optimized=optimized,
        program=program,
        deltas=deltas,
        comparison=comparison,
        trials=trials,
        usage=meter.totals(),
        stop_reason=stop_reason,
        wall_time_s=time.perf_counter() - started,
        metric_time_s=sum(m.seconds for m in metrics.values()),
        code=code,
        predictors={} if program is None else predictor_summary(program),
    )
    atomic_write_json(out / "result.json", {**result.to_dict(), "provenance": provenance})
    atomic_write_text(out / "report.md", render_report(result))
    if console is not None:
        console.print(result_table(result))
        console.print(f"report: {out / 'report.md'}", soft_wrap=True)
    if mlflow:
        tracked = _track(result, None if mlflow is True else str(mlflow))
        if console is not None:
            console.print(f"MLflow run {tracked.run_id}: {tracked.tracking_uri}", soft_wrap=True)
    return result


def _check_mlflow(mlflow: bool | str) -> bool | str:
    """Check that MLflow is installed and the tracking URI usable; return the URI checked."""
    from lift_metrics.optimizers._tracking import check_tracking_uri, require_mlflow

    if mlflow is not True:
        mlflow = check_tracking_uri(str(mlflow))
    require_mlflow()
    return mlflow


def _provenance(
    config: RunConfig, started_at: str, lms: tuple[Any, Any], splits: tuple[list[Any], ...]
) -> dict[str, Any]:
    """Return where a run's inputs come from: config and data hashes, seeds, LMs, versions."""
    task_lm, proposal_lm = lms
    train, val, test = splits
    return {
        "started_at": started_at,
        "config_hash": config.config_hash,
        **_dataset_provenance(config.dataset.path),
        "dataset_sizes": {"train": len(train), "val": len(val), "test": len(test)},
        "task_ids": {"test": [str(e.get("task_id")) for e in test]},
        "seeds": {
            "run": config.seed,
            "optimizer": config.optimizer.init_args.get("seed", config.seed),
            "bootstrap": config.seed,
        },
        "lm": _lm_description(task_lm),
        "prompt_lm": _lm_description(proposal_lm),
        "versions": _versions(),
        "platform": platform.platform(),
        "argv": list(sys.argv),
    }


def _interval_options(config: RunConfig) -> dict[str, Any]:
    """How the run's bootstrap intervals are drawn: resamples, confidence level and seed."""
    return {
        "n_resamples": config.evaluation.n_resamples,
        "level": config.evaluation.confidence_level,
        "seed": config.seed,
    }


def _compare(
    baseline: Any, optimized: Any, threshold: float, config: RunConfig
) -> tuple[tuple[MetricDelta, ...], Any]:
    """Compare the two arms; write ``comparison.json``; return the deltas and the A/B result."""
    deltas = _deltas(baseline, optimized, **_interval_options(config))
    comparison = _comparison(baseline, optimized, threshold, config)
    atomic_write_json(
        config.output_dir / "comparison.json",
        {
            "primary_metric": config.metric.name,
            "threshold": threshold,
            "verdict": deltas[0].verdict if deltas else None,
            "deltas": [d.to_dict() for d in deltas],
            "ab": None if comparison is None else comparison.to_dict(),
        },
    )
    return deltas, comparison


def _track(result: OptimizationResult, tracking_uri: str | None) -> Any:
    """Log the finished run to MLflow.

    A failure becomes one :class:`TrackingError` line (the run's files are already complete:
    tracking comes after result.json and report.md).
    """
    from lift_metrics.errors import TrackingError
    from lift_metrics.optimizers._tracking import default_tracking_uri, log_run_to_mlflow

    try:
        return log_run_to_mlflow(result, tracking_uri=tracking_uri)
    except Exception as exc:
        uri = tracking_uri or default_tracking_uri(result.output_dir)
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise TrackingError(
            f"logging the run to MLflow at {uri} failed ({type(exc).__name__}: {reason}); the "
            f"run's files are complete in {result.output_dir} (log them later with "
            "lift_metrics.optimizers.log_run_to_mlflow)"
        ) from exc


_ARM_TITLES = {
    "baseline": "Baseline (unoptimized) on the test split",
    "optimized": "Optimized on the test split",
}


#: each evaluation's arm (:func:`evaluate_program`): none reads another's cached LM answers,
#: so an arm that asks what another asked is timed and billed as it runs
_ARMS = {"baseline": 0, "optimized": 1, "unoptimized": 2, "chosen": 3}


def _check_choice(
    config: RunConfig, program: Any, val: list[Any], eval_kwargs: dict[str, Any]
) -> tuple[dict[str, Any] | None, str | None]:
    """Score the chosen and the unoptimized program on the validation split, paired.

    The optimizer chose by this split's score; :func:`validation_choice` says whether the
    split could tell the two apart. Returns the record (None when the budget ran out) and
    the reason the run stopped.
    """
    from lift_metrics.optimizers._pipeline import LiftPipeline

    kwargs = {**eval_kwargs, "runs": 1}
    try:
        unoptimized = evaluate_program(
            LiftPipeline(**config.pipeline),
            val,
            description="unoptimized (val split)",
            arm=_ARMS["unoptimized"],
            **kwargs,
        )
        chosen = evaluate_program(
            program, val, description="chosen (val split)", arm=_ARMS["chosen"], **kwargs
        )
    except BudgetExceeded as exc:
        return None, f"while checking the choice on the validation split: {exc}"
    record = validation_choice(unoptimized, chosen, **_interval_options(config))
    return record, None


def _evaluate_arm(
    program: Any,
    test: list[Any],
    arm: str,
    out: Path,
    provenance: Any,
    eval_kwargs: dict[str, Any],
) -> tuple[Evaluation | None, str | None]:
    """Evaluate one arm on the test split and save its code and evaluation files.

    Returns the evaluation (the partial one when the budget ran out, possibly ``None``) and
    the reason the run stopped (``None`` when the budget held).
    """
    stop_reason = None
    try:
        evaluation: Evaluation | None = evaluate_program(
            program, test, description=f"{arm} (test split)", arm=_ARMS[arm], **eval_kwargs
        )
    except BudgetExceeded as exc:
        stop_reason, evaluation = f"during the {arm} evaluation: {exc}", exc.partial
    if evaluation is not None:
        save_generated_code(evaluation, out / "code" / arm)
        save_evaluation(
            evaluation, out / arm, stem=arm, provenance=provenance, title=_ARM_TITLES[arm]
        )
    return evaluation, stop_reason
