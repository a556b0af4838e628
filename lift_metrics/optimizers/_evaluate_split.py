"""``evaluate_split``: one program over one task split, saved with its provenance.

The library side of ``lift-metrics evaluate``. The output folder holds::

    evaluation.json          the aggregate, with provenance and ``settings_hash``
    evaluation_run<r>.json   one file per run
    evaluation.md            the report
    usage.json               billed LM calls, tokens and cost
    cache/                   DSPy's LM cache: a rerun replays finished LM calls
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lift_metrics._checks import check_int
from lift_metrics._io import (
    atomic_write_json,
    check_output_dir,
    existing_file,
    remove_outputs,
    staged_output,
)
from lift_metrics.errors import InputValueError
from lift_metrics.optimizers._provenance import (
    _dataset_provenance,
    _file_hash,
    _lm_description,
    _lm_session,
    _versions,
    json_sha256,
    load_program,
    to_jsonable_safe,
)

if TYPE_CHECKING:
    from lift_metrics.optimizers._config import EvaluationSpec, MetricSpec
    from lift_metrics.optimizers._eval_results import Evaluation

__all__ = ["evaluate_split"]

#: What one evaluation writes in its output folder (glob patterns; the LM cache aside).
_EVALUATION_FILES = ("evaluation.json", "evaluation.md", "evaluation_run*.json", "usage.json")


def evaluate_split(
    *,
    lm_table: Mapping[str, Any],
    program_path: Path | None,
    dataset_path: Path | None,
    split: str,
    limit: int | None,
    metric_spec: MetricSpec,
    evaluation: EvaluationSpec,
    output_dir: Path,
    seed: int,
    progress: bool,
    config_hash: str | None = None,
    pipeline: Mapping[str, Any] | None = None,
) -> Evaluation:
    """Evaluate the pipeline (or a saved program) on one split and save the results.

    Parameters
    ----------
    lm_table : mapping
        The ``[lm]`` table of a run configuration (``model``, ``api_base``, ...).
    program_path : Path, optional
        A program saved by ``lift-metrics optimize`` (``program.json``); ``None`` evaluates
        the unoptimized :class:`~lift_metrics.optimizers.LiftPipeline` built with
        ``pipeline`` (``code_samples``, ``sample_temperature``). A saved program carries its
        own settings.
    dataset_path : Path, optional
        A task file (JSON Lines); ``None`` reads the bundled tasks.
    split : str
        The split evaluated (``"train"``, ``"dev"`` or ``"test"``).
    limit : int, optional
        Evaluate only the first ``limit`` tasks of the split (at least 1).
    metric_spec, evaluation
        The ``[metric]`` and ``[evaluation]`` tables (runs, per-example timeout, threads).
    output_dir : Path
        Where the files go (module docstring); files of an earlier evaluation there are
        deleted before the run starts, other files stay.
    seed : int
        Recorded in the provenance.
    progress : bool
        Show a progress bar.
    config_hash : str, optional
        Hash of the run configuration the settings came from, recorded as given.
    pipeline : mapping, optional
        The ``[pipeline]`` table for the unoptimized pipeline.

    Returns
    -------
    Evaluation

    Raises
    ------
    FileNotFoundError
        A missing program or dataset file (``"program file not found: PATH"``,
        ``"dataset file not found: PATH"``).
    ValueError
        A split with no tasks, a ``limit`` below 1, an output folder that cannot be written,
        an unreachable LM server; all before any LM call.

    Notes
    -----
    The provenance in ``evaluation.json`` holds ``config_hash`` and ``settings_hash``:
    SHA-256 of the effective settings (LM, metric, pipeline, evaluation, split, limit, seed,
    program and dataset hashes), so that two evaluations with equal hashes ran the same
    configuration on the same data.
    """
    from lift_metrics._tasks import default_tasks_path
    from lift_metrics._usage import UsageMeter
    from lift_metrics.lm import resolve_lm
    from lift_metrics.optimizers import _evaluate
    from lift_metrics.optimizers._config import build_metric
    from lift_metrics.optimizers._pipeline import LiftPipeline
    from lift_metrics.optimizers._preflight import _check_reachable
    from lift_metrics.optimizers._setup import _split_examples, evaluation_metrics

    if limit is not None:
        limit = check_int("limit", limit, minimum=1)
    if program_path is not None:
        existing_file(program_path, "program file")
    dataset = _dataset_provenance(
        existing_file(dataset_path or default_tasks_path(), "dataset file")
    )
    examples = _split_examples(split, dataset_path, limit)
    if not examples:
        raise InputValueError(
            f"{dataset['dataset_file']}: no {split} tasks (no record has split {split!r}); an "
            "empty evaluation is not a result"
        )
    check_output_dir(output_dir, option="--output-dir")
    program = (
        LiftPipeline(**(pipeline or {})) if program_path is None else load_program(program_path)
    )
    _check_reachable(lm_table, "lm")
    lm = resolve_lm(dict(lm_table))
    metric = build_metric(metric_spec)
    settings = {
        "lm": _lm_description(lm),
        "program": None if program_path is None else str(program_path),
        "program_hash": None if program_path is None else _file_hash(program_path),
        **dataset,
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
    provenance = {
        **settings,
        "config_hash": config_hash,
        "settings_hash": json_sha256(to_jsonable_safe(settings)),
        "versions": _versions(),
    }
    remove_outputs(output_dir, _EVALUATION_FILES)
    meter = UsageMeter()
    with _lm_session(output_dir / "cache", lm, meter):
        result = _evaluate.evaluate_program(
            program,
            examples,
            metrics=evaluation_metrics(metric_spec.name, metric),
            runs=evaluation.runs,
            timeout_s=evaluation.timeout_s,
            num_threads=evaluation.num_threads,
            progress=progress,
            description=f"evaluating ({split} split)",
        )
    # every result file, or none; evaluation.json, which says the output is whole, lands last
    with staged_output(output_dir, last="evaluation.json") as stage:
        _evaluate.save_evaluation(
            result, stage, stem="evaluation", provenance=provenance, title=f"{split} split"
        )
        meter.settle()
        atomic_write_json(stage / "usage.json", meter.totals())
    return result
