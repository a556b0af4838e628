"""``lift-metrics optimize`` and ``lift-metrics evaluate``.

Handlers only parse arguments, call the library and print. Bad input (unknown optimizer,
missing config or dataset file, a config key DSPy does not accept, an unreachable LM server,
a file that is not a GGUF model) raises ``InputValueError``/``FileNotFoundError``, which the
dispatcher prints as one line with exit code 2.
"""

from __future__ import annotations

import argparse
import os
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
    from lift_metrics.optimizers._evaluate_split import evaluate_split

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
    result = evaluate_split(
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
    summary = ", ".join(
        f"{name} {stats.mean:.4f} ± {stats.std_dev:.4f}"
        for name, stats in result.statistics.items()
    )
    print(f"{len(result.examples)} tasks, {result.timed_out_count} timed out: {summary}")
    print(f"results: {output_dir / 'evaluation.json'}; report: {output_dir / 'evaluation.md'}")
    return 0
