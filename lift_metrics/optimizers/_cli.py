"""``lift-metrics optimize`` and ``lift-metrics evaluate``.

Handlers only parse arguments, call the library and print. Bad input (unknown optimizer,
missing config or dataset file, a config key DSPy does not accept, an unreachable LM server,
a file that is not a GGUF model) raises ``InputValueError``/``FileNotFoundError``, which the
dispatcher prints as one line with exit code 2.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lift_metrics._commands import add_command
from lift_metrics.errors import InputValueError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``optimize`` and ``evaluate`` commands."""
    optimize = add_command(subparsers, "optimize", _optimize)
    optimize.add_argument("config", help="run configuration (TOML; see optimizers/README.md)")
    optimize.add_argument("--output-dir", help="override the config's output_dir")
    optimize.add_argument(
        "--check",
        action="store_true",
        help="validate the config, the data and the LM server, then stop (no LM call)",
    )
    optimize.add_argument("--quiet", action="store_true", help="no progress bars or table")
    optimize.add_argument(
        "--mlflow",
        nargs="?",
        const=True,
        default=False,
        metavar="URI",
        help="log the run to MLflow: a tracking URI, or none for a SQLite store under "
        "OUTPUT_DIR/mlflow (needs pip install 'lift-metrics[tracking]')",
    )

    evaluate = add_command(subparsers, "evaluate", _evaluate)
    evaluate.add_argument(
        "--config",
        help="take LM, metric, dataset and evaluation settings from this run configuration",
    )
    evaluate.add_argument(
        "--program", help="a program saved by 'optimize' (program.json); default: unoptimized"
    )
    evaluate.add_argument("--split", choices=("train", "dev", "test"), help="default: test")
    evaluate.add_argument("--limit", type=int, help="evaluate the first N tasks of the split")
    evaluate.add_argument("--dataset", help="a task file (JSON Lines); default: the shipped one")
    evaluate.add_argument("--lm", help="'local', a .gguf path or a DSPy model string")
    evaluate.add_argument("--api-base", help="OpenAI-compatible server for --lm")
    evaluate.add_argument(
        "--metric",
        choices=("end_to_end", "aggregate", "ir_quality", "code_quality"),
        help="primary metric (default end_to_end)",
    )
    evaluate.add_argument("--runs", type=int, help="repetitions (per-example mean and std)")
    evaluate.add_argument("--timeout-s", type=float, help="per-example timeout in seconds")
    evaluate.add_argument("--num-threads", type=int, help="examples evaluated at once")
    evaluate.add_argument("--output-dir", default=None, help="default: runs/evaluate")
    evaluate.add_argument("--quiet", action="store_true", help="no progress bar")


def _optimize(args: argparse.Namespace) -> int:
    """Optimize the reference pipeline with MIPROv2, COPRO or GEPA (a TOML config).

    Evaluate the reference pipeline on the test split, optimize it with the configured DSPy
    optimizer, evaluate the result and compare with bootstrap intervals. Ready configs:
    optimizers/quick.toml, mipro.toml, copro.toml, gepa.toml.
    """
    from lift_metrics.optimizers._config import load_config
    from lift_metrics.optimizers._preflight import preflight
    from lift_metrics.optimizers._runner import run_optimizer

    config = load_config(args.config)
    if args.output_dir:
        config = config.replace(output_dir=Path(args.output_dir))
    if args.mlflow is not False:  # --mlflow alone is True; --mlflow "" must not mean "off"
        from lift_metrics.optimizers._tracking import check_tracking_uri, require_mlflow

        if args.mlflow is not True:  # the URI first: importing MLflow takes seconds
            try:
                args.mlflow = check_tracking_uri(args.mlflow)
            except InputValueError as exc:
                raise InputValueError(f"--mlflow: {exc}") from None
        try:
            require_mlflow()
        except ImportError as exc:
            raise InputValueError(str(exc)) from exc
    if args.check:
        preflight(config)
        print(f"{args.config}: OK ({config!r})")
        return 0
    from lift_metrics.cli import CommandError
    from lift_metrics.optimizers._tracking import TrackingError

    try:
        result = run_optimizer(config, progress=not args.quiet, mlflow=args.mlflow)
    except TrackingError as exc:  # after the run: its files are complete
        raise CommandError(str(exc)) from exc
    if args.quiet:
        print(repr(result))
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    """Evaluate the reference pipeline (or a saved optimized program) on a split.

    Run a program over a task split with a per-example timeout, N runs, latency, tokens and cost
    per example; write JSON (one file per run + the aggregate, with provenance) and a Markdown
    report.
    """
    from lift_metrics.optimizers._config import MetricSpec, RunConfig, load_config

    if args.config:
        config = load_config(args.config)
    else:
        config = RunConfig.from_mapping(
            {"optimizer": {"name": "mipro"}, "lm": {"model": "local"}, "name": "evaluate"}
        )
    lm_table = dict(config.lm)
    if args.lm is not None:
        if not args.lm.strip():
            raise InputValueError(
                "--lm must name a model ('local', a .gguf path or a DSPy model string), got ''"
            )
        lm_table = {"model": args.lm}
    if args.api_base is not None:
        if not args.api_base.strip():
            raise InputValueError("--api-base must be a server URL, got ''")
        lm_table["api_base"] = args.api_base
    dataset = config.dataset
    if args.dataset:
        dataset = dataset.model_copy(update={"path": Path(os.path.expanduser(args.dataset))})
    split = args.split or dataset.test
    limit = args.limit if args.limit is not None else dataset.test_limit
    if limit is not None and limit < 1:
        raise InputValueError(f"--limit must be a positive integer, got {limit}")
    evaluation = config.evaluation
    changes = {
        key: value
        for key, value in (
            ("runs", args.runs),
            ("timeout_s", args.timeout_s),
            ("num_threads", args.num_threads),
        )
        if value is not None
    }
    if changes:
        merged = {**evaluation.to_dict(), **changes}
        try:
            evaluation = RunConfig.from_mapping(
                {"optimizer": {"name": "mipro"}, "lm": "local", "evaluation": merged}
            ).evaluation
        except InputValueError as exc:  # name the option, not the config key it overrides
            message = str(exc)
            for key in changes:
                message = message.replace(f"[evaluation] {key}", "--" + key.replace("_", "-"))
            raise InputValueError(message) from None
    metric_spec = config.metric
    if args.metric:
        metric_spec = MetricSpec(name=args.metric)
    output_dir = Path(args.output_dir) if args.output_dir else Path("runs/evaluate")
    evaluate_split(
        lm_table=lm_table,
        program_path=None if args.program is None else Path(args.program),
        dataset_path=dataset.path,
        split=split,
        limit=limit,
        metric_spec=metric_spec,
        evaluation=evaluation,
        output_dir=output_dir,
        seed=config.seed,
        progress=not args.quiet,
        config_hash=config.config_hash if args.config else None,
        pipeline=config.pipeline,
    )
    return 0


_EVALUATION_FILES = ("evaluation.json", "evaluation.md", "evaluation_run*.json", "usage.json")


def _clear_previous_evaluation(output_dir: Path) -> None:
    """Delete an earlier evaluation's files in ``output_dir`` and a killed one's temporary files.

    A run stopped before it saves then leaves no result that looks like its own. The LM cache
    (``cache/``) is kept.
    """
    if not output_dir.is_dir():
        return
    for pattern in _EVALUATION_FILES:
        for path in [*output_dir.glob(pattern), *output_dir.glob(f".{pattern}.*.tmp")]:
            if path.is_file() or path.is_symlink():
                path.unlink()


def evaluate_split(
    *,
    lm_table: dict[str, Any],
    program_path: Path | None,
    dataset_path: Path | None,
    split: str,
    limit: int | None,
    metric_spec: Any,
    evaluation: Any,
    output_dir: Path,
    seed: int,
    progress: bool,
    config_hash: str | None = None,
    pipeline: Mapping[str, Any] | None = None,
) -> Any:
    """Evaluate the pipeline (optionally loaded from ``program_path``) and save the results.

    Without ``program_path`` the pipeline is built with the ``[pipeline]`` settings
    ``pipeline`` (``code_samples``, ``sample_temperature``); a saved program carries its own.

    Files of an earlier evaluation in ``output_dir`` are deleted before the run starts.
    The provenance holds ``config_hash`` (of the ``--config`` file, when one was given) and
    ``settings_hash``: SHA-256 of the effective settings (LM, metric, evaluation, split,
    limit, program and dataset hashes), so that two evaluations with equal hashes ran the same
    configuration on the same data.
    """
    import hashlib
    import json

    from dspy.adapters import JSONAdapter
    from dspy.dsp.utils.settings import settings

    from lift_metrics._io import atomic_write_json, check_output_dir, existing_file, staged_output
    from lift_metrics._tasks import default_tasks_path, load_tasks
    from lift_metrics._usage import UsageMeter
    from lift_metrics.lm import resolve_lm
    from lift_metrics.optimizers._config import build_metric
    from lift_metrics.optimizers._evaluate import evaluate_program, save_evaluation
    from lift_metrics.optimizers._pipeline import LiftPipeline
    from lift_metrics.optimizers._preflight import _check_reachable
    from lift_metrics.optimizers._provenance import (
        _file_hash,
        _lm_cache,
        _lm_description,
        _versions,
        load_program,
        to_jsonable_safe,
    )
    from lift_metrics.optimizers._setup import evaluation_metrics

    if program_path is not None:
        existing_file(program_path, "program file")
    dataset_file = dataset_path or default_tasks_path()
    existing_file(dataset_file, "dataset file")
    examples = load_tasks(split, path=dataset_path)
    if not examples:
        raise InputValueError(
            f"{dataset_file}: no {split} tasks (no record has split {split!r}); an empty "
            "evaluation is not a result"
        )
    if limit is not None:
        examples = examples[:limit]
    check_output_dir(output_dir, option="--output-dir")
    program = (
        LiftPipeline(**(pipeline or {})) if program_path is None else load_program(program_path)
    )
    _check_reachable(lm_table, "lm")
    lm = resolve_lm(lm_table)
    metric = build_metric(metric_spec)
    metrics = evaluation_metrics(metric_spec.name, metric)
    provenance = {
        "lm": _lm_description(lm),
        "program": None if program_path is None else str(program_path),
        "program_hash": None if program_path is None else _file_hash(program_path),
        "dataset_file": str(dataset_file),
        "dataset_hash": _file_hash(Path(dataset_file)),
        "split": split,
        "limit": limit,
        "metric": metric_spec.to_dict(),
        "pipeline": {
            "code_max_tokens": program.code_max_tokens,
            "code_samples": program.code_samples,
            "sample_temperature": program.sample_temperature,
        },
        "evaluation": evaluation.to_dict(),
        "seed": seed,
    }
    settings_text = json.dumps(to_jsonable_safe(provenance), sort_keys=True, default=str)
    provenance["config_hash"] = config_hash
    provenance["settings_hash"] = hashlib.sha256(settings_text.encode("utf-8")).hexdigest()
    provenance["versions"] = _versions()
    _clear_previous_evaluation(output_dir)
    meter = UsageMeter()
    with (
        _lm_cache(output_dir / "cache"),
        settings.context(lm=lm, adapter=JSONAdapter(), usage_tracker=meter),
    ):
        result = evaluate_program(
            program,
            examples,
            metrics=metrics,
            runs=evaluation.runs,
            timeout_s=evaluation.timeout_s,
            num_threads=evaluation.num_threads,
            progress=progress,
            description=f"evaluating ({split} split)",
        )
    # every result file, or none; evaluation.json, which says the output is whole, lands last
    with staged_output(output_dir, last="evaluation.json") as stage:
        save_evaluation(
            result, stage, stem="evaluation", provenance=provenance, title=f"{split} split"
        )
        meter.settle()
        atomic_write_json(stage / "usage.json", meter.totals())
    summary = ", ".join(
        f"{name} {stats.mean:.4f} ± {stats.std_dev:.4f}"
        for name, stats in result.statistics.items()
    )
    print(f"{len(result.examples)} tasks, {result.timed_out_count} timed out: {summary}")
    print(f"results: {output_dir / 'evaluation.json'}; report: {output_dir / 'evaluation.md'}")
    return result
