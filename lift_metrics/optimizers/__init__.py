"""Optimizing DSPy programs offline: runners, the reference pipeline, evaluation, tasks.

Runners for MIPROv2, COPRO and GEPA (``run_optimizer``), the reference pipeline
(``LiftPipeline``: prompt -> IR -> code), evaluation and the task dataset. The local LM lives
in :mod:`lift_metrics.lm`. Importing this package stays light: dspy and xllamacpp load when a
pipeline or an LM is created.

run_optimizer       a run configuration (TOML) in, an OptimizationResult out
load_config         read and check a run configuration (TOML) without running it
RunConfig           a checked run configuration
evaluate_program    score a program over examples with metrics, timeouts and repeated runs
save_evaluation     write an evaluation's records and summary
LiftPipeline        the reference dspy.Module: natural-language prompt -> IR -> Python code
choose_code         keep one of several sampled code answers, without tests (best of N)
log_run_to_mlflow   log a finished run (config, trials, evaluations, comparison) to MLflow
UsageRecorder       DSPy usage tracker of one unit of work: billed calls, tokens, priced cost
Budget              caps on a run's billed LM usage
load_tasks          the shipped task dataset (datasets/tasks) as dspy.Examples, by split
task_records        the same records as validated plain dicts

Importable from here but outside ``__all__``: the result types the functions above return
(``OptimizationResult``, ``MetricDelta``, ``Evaluation``, ``CodeChoice``, ``TrackedRun``);
the local-LM names whose home is :mod:`lift_metrics.lm` (``local_lm``, ``LocalEngine``,
``resolve_lm``, ``default_model_path``, ``default_n_threads``); the errors whose home is
:mod:`lift_metrics.errors` (``BudgetExceeded``, ``TrackingError``); and the internals
``SPLITS``, ``DIFFICULTIES``, ``default_tasks_path``, ``io_tests_from_json`` and
``probe_inputs``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lift_metrics._tasks import (
    DIFFICULTIES as DIFFICULTIES,
    SPLITS as SPLITS,
    default_tasks_path as default_tasks_path,
    io_tests_from_json as io_tests_from_json,
    load_tasks,
    task_records,
)
from lift_metrics.lm import (
    LocalEngine as LocalEngine,
    default_model_path as default_model_path,
    default_n_threads as default_n_threads,
    local_lm as local_lm,
    resolve_lm as resolve_lm,
)

# loaded on first access: the pipeline imports dspy at module level
_LAZY: dict[str, str] = {
    "Budget": "lift_metrics._usage",
    "BudgetExceeded": "lift_metrics.errors",
    "CodeChoice": "lift_metrics.optimizers._select",
    "Evaluation": "lift_metrics.optimizers._eval_results",
    "LiftPipeline": "lift_metrics.optimizers._pipeline",
    "MetricDelta": "lift_metrics.optimizers._result",
    "OptimizationResult": "lift_metrics.optimizers._result",
    "RunConfig": "lift_metrics.optimizers._config",
    "TrackedRun": "lift_metrics.optimizers._tracking",
    "TrackingError": "lift_metrics.errors",
    "UsageRecorder": "lift_metrics._usage",
    "choose_code": "lift_metrics.optimizers._select",
    "evaluate_program": "lift_metrics.optimizers._evaluate",
    "load_config": "lift_metrics.optimizers._config",
    "log_run_to_mlflow": "lift_metrics.optimizers._tracking",
    "probe_inputs": "lift_metrics.optimizers._select",
    "run_optimizer": "lift_metrics.optimizers._runner",
    "save_evaluation": "lift_metrics.optimizers._evaluate",
}

if TYPE_CHECKING:  # pragma: no cover
    from lift_metrics._usage import Budget, UsageRecorder
    from lift_metrics.optimizers._config import RunConfig, load_config
    from lift_metrics.optimizers._evaluate import evaluate_program, save_evaluation
    from lift_metrics.optimizers._pipeline import LiftPipeline
    from lift_metrics.optimizers._runner import run_optimizer
    from lift_metrics.optimizers._select import choose_code
    from lift_metrics.optimizers._tracking import log_run_to_mlflow


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lift_metrics.optimizers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Budget",
    "LiftPipeline",
    "RunConfig",
    "UsageRecorder",
    "choose_code",
    "evaluate_program",
    "load_config",
    "load_tasks",
    "log_run_to_mlflow",
    "run_optimizer",
    "save_evaluation",
    "task_records",
]
