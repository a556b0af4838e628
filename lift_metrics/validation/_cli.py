"""``lift-metrics validate``: agreement of metrics with hand-labelled data, as a CI gate."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from lift_metrics._builtin_metrics import (
    BUILTIN_METRICS,
    FIELD_METRICS,
    builtin_scorer,
)
from lift_metrics._commands import add_command
from lift_metrics.errors import InputValueError, TooFewScoresError
from lift_metrics.validation._calibrate import CalibrationResult
from lift_metrics.validation._calibrate_metric import calibrate_metric
from lift_metrics.validation._cli_output import (
    Outcome,
    exit_code,
    print_calibrations,
    write_reports,
)
from lift_metrics.validation._gaming_cli import add_gaming_arguments, run_gaming
from lift_metrics.validation._import import import_metric
from lift_metrics.validation._labels import (
    SHIPPED_DATASETS,
    SHIPPED_LABELS,
    LabelledItem,
    item_categories,
    load_labels,
    shipped_dataset_path,
    shipped_labels_path,
)
from lift_metrics.validation._validate import ValidationResult, check_level, check_target
from lift_metrics.validation._validate_metric import validate_field_baselines, validate_metric
from lift_metrics.validation.profiles import (
    SHIPPED_PROFILES,
    CalibrationProfile,
    load_profile,
    shipped_profile_path,
    weights_file_metric,
)

_DEFAULT_METRICS = ("ir_quality", "code_quality")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``validate`` command; its numeric options are checked as they are parsed."""
    from lift_metrics._checks import check_unit_interval
    from lift_metrics.cli import at_least, checked

    parser = add_command(subparsers, "validate", _run)
    parser.add_argument("metrics", nargs="*", metavar="METRIC", help="metric(s) to validate")
    add_gaming_arguments(parser)
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        metavar="FILE",
        help="labelled data (.jsonl or .csv); default the shipped labels of the metric",
    )
    parser.add_argument(
        "--labels",
        choices=sorted(SHIPPED_DATASETS),
        default=None,
        help="a human-graded dataset shipped with the package, instead of --data: 'conala' "
        "is 1,200 CoNaLa snippets graded 0-4 by programmers (Evtikhiev et al. 2023; "
        "datasets/conala/README.md); sets the label field and the item fields, and "
        "turns on --baselines. reference_score's model was fitted on this file, so its "
        "figure here is in-sample; benchmarks/bench_reference_score.py gives the "
        "cross-validated one",
    )
    parser.add_argument(
        "--baselines",
        action="store_true",
        help="also report the field's reference metrics on the same items: "
        f"{', '.join(FIELD_METRICS)} (CodeBLEU only when the codebleu package is "
        "installed); items need predicted_code/expected_code (or prediction/reference)",
    )
    parser.add_argument(
        "--split",
        choices=("heldout", "calibration", "all"),
        default=None,
        help="which items to report on (default heldout when the data has splits, else all)",
    )
    parser.add_argument(
        "--target",
        type=checked(check_target),
        default=0.8,
        help="Pearson target, in [-1, 1] (default 0.8)",
    )
    parser.add_argument(
        "--confidence-level",
        type=checked(check_level),
        default=0.95,
        help="interval level, in (0, 1) (default 0.95)",
    )
    parser.add_argument(
        "--require-ci",
        action="store_true",
        help="fail unless the interval's lower bound reaches the target (stricter gate)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("validation-report"),
        metavar="DIR",
        help="directory for validation.md, validation.json and the PNG plots",
    )
    parser.add_argument(
        "--weights",
        type=Path,
        action="append",
        default=None,
        metavar="FILE",
        help="weights file (.json/.toml, as written by --calibrate) for the metric it names; "
        "a similarity_floor in the file is used too",
    )
    parser.add_argument(
        "--shipped-profile",
        action="store_true",
        help="also report each built-in metric with its calibrated profile shipped in "
        "datasets/labels/ (fitted weights + similarity floor, fitted on the calibration split "
        "only), next to the default",
    )
    parser.add_argument(
        "--similarity-floor",
        default=None,
        metavar="FLOOR|auto",
        help="with --calibrate: rescale the embedding similarity (intent / semantic) as "
        "max(0, (cos - FLOOR) / (1 - FLOOR)) before fitting and save FLOOR with the weights; "
        "'auto' sets FLOOR to the 95th percentile of the cosine between the calibration "
        "split's references of different functions (labels not used)",
    )
    parser.add_argument(
        "--wrong-answer-gate",
        action="store_true",
        help="with --calibrate, code_quality: scale semantic, style and structural by 1 - the "
        "fraction of tests that returned a wrong value before fitting, and save the option "
        "with the weights (other metrics are fitted as without it)",
    )
    parser.add_argument(
        "--stub-cap",
        type=checked(check_unit_interval),
        default=None,
        metavar="CAP",
        help="with --calibrate, code_quality: cap at CAP the score of a prediction whose entry "
        "function is a placeholder (pass, ..., raise NotImplementedError, return a constant "
        "or an argument) while fitting, and save CAP with the weights",
    )
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="also fit the weights on the calibration split, report them on --split, and "
        "save them to DIR/weights_METRIC.json (built-in metrics only)",
    )
    parser.add_argument(
        "--objective",
        choices=("pearson", "squared_error"),
        default="pearson",
        help="what --calibrate optimises",
    )
    parser.add_argument(
        "--folds",
        type=at_least(2),
        default=5,
        help="cross-validation folds (at least 2)",
    )
    parser.add_argument(
        "--score-field", default="human_score", help="field with the label (default human_score)"
    )
    parser.add_argument(
        "--field",
        action="append",
        default=None,
        metavar="KEY=COLUMN",
        help="map a data field to an item key (repeatable); default: all fields as they are",
    )
    parser.add_argument(
        "--json-field",
        action="append",
        default=None,
        metavar="COLUMN",
        help="CSV column whose cells hold JSON (repeatable)",
    )
    parser.add_argument(
        "--call",
        choices=("item", "kwargs", "dspy"),
        default=None,
        help="how an import-path metric is called: metric(item), metric(**item) or "
        "metric(example, prediction) (default item)",
    )
    parser.add_argument(
        "--prediction-field",
        action="append",
        default=None,
        metavar="NAME",
        help="with --call dspy: item field belonging to the prediction (repeatable)",
    )
    parser.add_argument(
        "--threads",
        type=at_least(1),
        default=1,
        help="score items in N threads",
    )
    parser.add_argument(
        "--allow-missing",
        type=at_least(0),
        default=0,
        metavar="N",
        help="pass even when up to N items per metric could not be scored (default 0: any "
        "missing score fails with exit 1; the report says why each is missing)",
    )


def _field_map(entries: Sequence[str] | None) -> dict[str, str] | None:
    if not entries:
        return None
    mapping: dict[str, str] = {}
    for entry in entries:
        key, sep, column = entry.partition("=")
        if not sep or not key or not column:
            raise InputValueError(f"--field must look like KEY=COLUMN, got {entry!r}")
        mapping[key] = column
    return mapping


def _weights_by_metric(
    files: Sequence[Path] | None, metrics: Sequence[str]
) -> dict[str, CalibrationProfile]:
    chosen: dict[str, CalibrationProfile] = {}
    for file in files or ():
        named = weights_file_metric(file)
        if named is None:
            if len(metrics) != 1:
                raise InputValueError(
                    f'{file} names no metric; add metric = "NAME" or validate one metric'
                )
            named = metrics[0]
        if named not in metrics:
            raise InputValueError(
                f"{file} holds weights for {named!r}, which is not being validated"
            )
        chosen[named] = load_profile(file, metric=named)
    return chosen


def _floor_option(value: str | None) -> float | Literal["auto"] | None:
    if value is None or value == "auto":
        return None if value is None else "auto"
    try:
        floor = float(value)
    except ValueError:
        raise InputValueError(
            f"--similarity-floor must be a number in [0, 1) or 'auto', got {value!r}"
        ) from None
    if not 0.0 <= floor < 1.0:
        raise InputValueError(f"--similarity-floor must be in [0, 1), got {value!r}")
    return floor


def _load(args: argparse.Namespace, data: Path) -> tuple[list[LabelledItem], str]:
    items = load_labels(
        data,
        score_field=args.score_field,
        fields=_field_map(args.field),
        json_fields=tuple(args.json_field or ()),
    )
    split = args.split
    if split is None:
        split = "heldout" if any(item.split for item in items) else "all"
    if split != "all":
        without = [item for item in items if item.split is None]
        if without:
            raise InputValueError(
                f"{data}:{without[0].line}: item {without[0].id!r} has no split; use --split all"
            )
        items = [item for item in items if item.split == split]
        if not items:
            raise InputValueError(f"{data}: no items in split {split!r}")
    return items, split


def _code_options(args: argparse.Namespace, spec: str) -> dict[str, Any]:
    """Return the code_quality-only options given on the command line, for ``spec``."""
    if spec != "code_quality":
        return {}
    options: dict[str, Any] = {}
    if args.wrong_answer_gate:
        options["wrong_answer_gate"] = True
    if args.stub_cap is not None:
        options["stub_cap"] = args.stub_cap
    return options


def _calibrate(
    args: argparse.Namespace, spec: str, data: Path, reported: list[LabelledItem]
) -> tuple[CalibrationResult, ValidationResult, Callable[[Path], Path]]:
    """Fit ``spec`` on the calibration split of ``data`` (:func:`calibrate_metric`).

    Returns the fit, the fitted metric's result on the reported items and a writer of the
    weights file that takes the folder to write into (the command's staging folder), so the
    weights file lands together with the report or not at all.
    """
    every = load_labels(
        data,
        score_field=args.score_field,
        fields=_field_map(args.field),
        json_fields=tuple(args.json_field or ()),
    )
    fit_items = [item for item in every if item.split == "calibration"]
    if len(fit_items) < 2 * args.folds:
        raise InputValueError(
            f"--calibrate needs at least {2 * args.folds} items with split 'calibration' "
            f"in {data}, got {len(fit_items)}"
        )
    if any(item.split == "calibration" for item in reported):
        print(
            "warning: the reported split includes calibration items; the fitted weights' "
            "figure on it is not an out-of-sample estimate",
            file=sys.stderr,
        )
    calibration = calibrate_metric(
        spec,
        fit_items,
        objective=args.objective,
        folds=args.folds,
        similarity_floor=_floor_option(args.similarity_floor),
        **_code_options(args, spec),
    )
    fitted = calibration.scorer()
    fitted.prefetch([item.item for item in reported])
    result = validate_metric(
        fitted,
        reported,
        target=args.target,
        confidence_level=args.confidence_level,
        name=f"{spec} (calibrated)",
        errors="missing",
        num_threads=args.threads,
    )

    def write(folder: Path) -> Path:
        return calibration.save(
            folder / f"weights_{spec}.json",
            fitted_on=f"{data.name} split=calibration",
            reported_split_pearson=result.pearson,
        )

    return calibration.fit, result, write


def _use_shipped_dataset(args: argparse.Namespace) -> Any:
    """Apply ``--labels`` (its file, score field, fields and baselines); return its dataset."""
    if args.labels is None:
        return None
    if args.data is not None:
        raise InputValueError("--labels and --data are exclusive: give one")
    dataset = SHIPPED_DATASETS[args.labels]
    args.data = shipped_dataset_path(args.labels)
    if args.score_field == "human_score":
        args.score_field = dataset.score_field
    if args.field is None:
        args.field = [f"{key}={column}" for key, column in dataset.fields.items()]
    args.baselines = True
    return dataset


def _check_metrics(args: argparse.Namespace, metrics: list[str]) -> None:
    """Refuse bad metrics; import the import-path metrics (before any scoring)."""
    for spec in metrics:
        if spec not in BUILTIN_METRICS and ":" not in spec:
            raise InputValueError(
                f"METRIC must be one of {BUILTIN_METRICS} or 'package.module:attribute', "
                f"got {spec!r}"
            )
        if spec not in BUILTIN_METRICS:  # a missing module fails before any scoring
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            import_metric(spec)
    if args.calibrate and any(spec not in BUILTIN_METRICS for spec in metrics):
        raise InputValueError("--calibrate works for the built-in metrics only")
    if "reference_score" in metrics and (args.calibrate or args.weights):
        raise InputValueError(
            "--calibrate and --weights do not apply to reference_score (its model ships "
            "fitted; see benchmarks/fit_reference_model.py)"
        )


def _check_calibration_options(args: argparse.Namespace, metrics: list[str]) -> None:
    """Refuse the calibration-only options without ``--calibrate`` or a metric they fit."""
    if args.similarity_floor is not None:
        if not args.calibrate:
            raise InputValueError("--similarity-floor applies with --calibrate only")
        if {"end_to_end", "aggregate"} & set(metrics):
            raise InputValueError("--similarity-floor applies to ir_quality and code_quality only")
        _floor_option(args.similarity_floor)
    if args.wrong_answer_gate or args.stub_cap is not None:
        flag = "--wrong-answer-gate" if args.wrong_answer_gate else "--stub-cap"
        if not args.calibrate:
            raise InputValueError(f"{flag} applies with --calibrate only")
        if "code_quality" not in metrics:
            raise InputValueError(f"{flag} applies to code_quality, which is not being validated")


def _data_for(args: argparse.Namespace, spec: str) -> Path:
    """Return the labelled data ``spec`` is validated on (``--data`` or its shipped labels)."""
    if args.data is not None:
        return Path(args.data)
    if spec in SHIPPED_LABELS:
        return shipped_labels_path(spec)
    raise InputValueError(f"no labelled data ships for {spec!r}: pass --data FILE")


def _metric_for(
    args: argparse.Namespace,
    spec: str,
    weights: dict[str, CalibrationProfile],
    items: list[LabelledItem],
) -> tuple[Any, dict[str, Any]]:
    """Return the metric ``spec`` names and the keyword arguments to validate it with."""
    if spec in BUILTIN_METRICS:
        if args.call not in (None, "item"):
            raise InputValueError("--call applies to import-path metrics only")
        profile = weights.get(spec)
        scorer = builtin_scorer(spec, **({} if profile is None else profile.metric_options()))
        scorer.prefetch([item.item for item in items])
        return scorer, {}
    if spec in weights:
        raise InputValueError("--weights applies to the built-in metrics only")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    calling = {"call": args.call or "item", "prediction_fields": tuple(args.prediction_field or ())}
    return import_metric(spec), calling


def _validate_one(
    args: argparse.Namespace,
    spec: str,
    weights: dict[str, CalibrationProfile],
    outcome: Outcome,
) -> None:
    """Validate ``spec`` (and its shipped profile, calibration and baselines when asked)."""
    data = _data_for(args, spec)
    items, outcome.split_shown = _load(args, data)
    metric, calling = _metric_for(args, spec, weights, items)
    try:
        result = validate_metric(
            metric,
            items,
            target=args.target,
            confidence_level=args.confidence_level,
            name=spec,
            errors="missing",
            num_threads=args.threads,
            **calling,
        )
    except TooFewScoresError as exc:
        outcome.unscored.append(exc)
        return
    categories = item_categories(items)
    outcome.add(result, data, categories)
    if args.shipped_profile and spec in SHIPPED_PROFILES:
        shipped = load_profile(shipped_profile_path(spec), metric=spec)
        profiled = builtin_scorer(spec, **shipped.metric_options())
        profiled.prefetch([item.item for item in items])
        name = f"{spec} (shipped profile)"
        outcome.add(
            validate_metric(
                profiled,
                items,
                target=args.target,
                confidence_level=args.confidence_level,
                name=name,
                errors="missing",
                num_threads=args.threads,
            ),
            data,
            categories,
        )
    if args.calibrate:
        fit, fitted_result, write_weights = _calibrate(args, spec, data, items)
        outcome.calibrations[result.metric] = (fit, fitted_result)
        outcome.weight_writers.append(write_weights)
    if args.baselines and str(data) not in outcome.baseline_done:
        outcome.baseline_done.add(str(data))
        baselines, notes = validate_field_baselines(
            items,
            target=args.target,
            confidence_level=args.confidence_level,
            num_threads=args.threads,
        )
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        for baseline in baselines:
            outcome.add(baseline, data, categories)


def _run(args: argparse.Namespace) -> int:
    """How well metrics agree with hand-labelled data (Pearson with CI); a CI gate.

    Score labelled items with each metric and report Pearson's r with its confidence interval,
    Spearman, Kendall tau-b, the calibration line and, with several rating fields,
    Krippendorff's alpha among raters. Writes a Markdown report, a JSON file and one scatter
    plot per metric to --out. METRIC is ir_quality, code_quality, end_to_end, aggregate
    (end_to_end with the items' cost_usd and latency_ms), reference_score (code against a
    reference, no tests), test_pass_rate (the tests alone, no reference) or an import path
    'package.module:attribute' (default: ir_quality and code_quality on the shipped labels;
    with --labels conala, reference_score).
    --baselines adds the field's metrics (chrF, BLEU, CodeBLEU, exact match) as extra rows.
    Example: 'lift-metrics validate --labels conala' reports reference_score and the field's
    metrics on programmers' grades of CoNaLa snippets (datasets/conala/README.md). Exit code 1
    when a metric misses its target, 2 on bad input.
    """
    from lift_metrics._io import check_output_dir
    from lift_metrics.validation._report import format_table

    started = time.perf_counter()
    if args.gaming:
        return run_gaming(args, list(args.metrics or ("code_quality",)))
    if args.trick or args.gaming_kind:
        raise InputValueError("--trick and --gaming-kind apply with --gaming only")
    dataset = _use_shipped_dataset(args)
    metrics = list(args.metrics or (dataset.metrics if dataset else _DEFAULT_METRICS))
    _check_metrics(args, metrics)
    _check_calibration_options(args, metrics)
    weights = _weights_by_metric(args.weights, metrics)
    check_output_dir(args.out, option="--out")  # before any scoring
    outcome = Outcome()
    for spec in metrics:
        _validate_one(args, spec, weights, outcome)
    saved = write_reports(args, outcome)
    print(format_table(outcome.results))
    print_calibrations(outcome)
    for path in saved:
        print(f"weights written to {path}")
    elapsed = time.perf_counter() - started
    print(f"report: {args.out / 'validation.md'} ({elapsed:.1f} s)")
    return exit_code(args, outcome)
