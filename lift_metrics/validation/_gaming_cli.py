"""``lift-metrics validate METRIC --gaming``: the gaming check from the command line."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from lift_metrics.errors import InputValueError

#: the built-in metrics the gaming check knows how to feed, and the outputs each is fed
GAMING_METRICS: dict[str, str] = {
    "code_quality": "code",
    "reference_score": "code",
    "ir_quality": "ir",
}


def add_gaming_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--gaming`` and ``--trick`` to the ``validate`` parser."""
    parser.add_argument(
        "--gaming",
        action="store_true",
        help="instead of agreement with labels, run the gaming check: score honest correct "
        "and wrong outputs and outputs that compute nothing (dead code, comments, lookup "
        "tables, an always-equal object, ...) on the shipped tasks, with and without their "
        "tests, and report which tricks score like a correct output (exit 1 when one does); "
        "with --call dspy, also call the metric under a trace as DSPy's bootstrapping does "
        "and report which outputs it accepts as demonstrations (exit 1 when a trick or wrong "
        "output is accepted). "
        "METRIC: code_quality, reference_score, ir_quality (fed the expected IR and its "
        "mutations) or an import path (a DSPy metric: --call dspy; a class is made with no "
        "arguments; --gaming-kind ir for an IR metric). Writes DIR/gaming.json",
    )
    parser.add_argument(
        "--gaming-kind",
        choices=("code", "ir"),
        default=None,
        help="with --gaming and an import-path metric: feed it code (default) or IRs",
    )
    parser.add_argument(
        "--trick",
        action="append",
        metavar="NAME",
        help="with --gaming: check only this output (repeatable; default all)",
    )


def _metric(spec: str, args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    from lift_metrics._builtin_metrics import builtin_scorer
    from lift_metrics.validation._import import import_metric

    if spec in GAMING_METRICS:
        if args.call not in (None, "item") or args.gaming_kind is not None:
            raise InputValueError("--call and --gaming-kind apply to import-path metrics only")
        return builtin_scorer(spec), {"kind": GAMING_METRICS[spec]}
    if ":" not in spec:
        raise InputValueError(
            f"with --gaming, METRIC must be one of {tuple(GAMING_METRICS)} or "
            f"'package.module:attribute', got {spec!r}"
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    metric = import_metric(spec)
    if isinstance(metric, type):
        try:
            metric = metric()
        except Exception as exc:
            raise InputValueError(
                f"{spec!r} is a class that cannot be made without arguments "
                f"({type(exc).__name__}: {exc}); name an instance instead"
            ) from exc
    calling = {
        "kind": args.gaming_kind or "code",
        "call": args.call or "item",
        "prediction_fields": tuple(args.prediction_field or ()) or None,
    }
    return metric, calling


def run_gaming(args: argparse.Namespace, metrics: list[str]) -> int:
    """Run the gaming check for each metric; print the tables; return the exit code."""
    from lift_metrics._io import atomic_write_json, check_output_dir
    from lift_metrics.validation._gaming import IR_KINDS, format_gaming, gaming_check
    from lift_metrics.validation._gaming_tricks import CODE_TRICKS

    resolved = [(spec, *_metric(spec, args)) for spec in metrics]  # all checked first
    if args.trick:
        for _, _, calling in resolved:
            known = ["expected", *IR_KINDS] if calling["kind"] == "ir" else list(CODE_TRICKS)
            unknown = [name for name in args.trick if name not in known]
            if unknown:
                raise InputValueError(f"--trick must name one of {sorted(known)}, got {unknown}")
    check_output_dir(args.out, option="--out")
    reports = []
    for spec, metric, calling in resolved:
        report = gaming_check(
            metric, tricks=args.trick, name=spec, num_threads=args.threads, **calling
        )
        reports.append(report)
        print(format_gaming(report))
    args.out.mkdir(parents=True, exist_ok=True)
    path = atomic_write_json(args.out / "gaming.json", [r.to_dict() for r in reports])
    print(f"report: {path}")
    return 0 if all(r.passed for r in reports) else 1
