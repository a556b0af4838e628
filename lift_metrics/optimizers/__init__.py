"""Optimizing DSPy programs offline: runners, the reference pipeline, evaluation, tasks.

Runners for MIPROv2, COPRO and GEPA (``run_optimizer``), the reference pipeline
(``LiftPipeline``: prompt -> IR -> code), evaluation and the task dataset. The local LM lives
in :mod:`lift_metrics.lm`; its public names are also importable from here.
Importing it stays light: dspy and xllamacpp load when a pipeline or an LM is created.

run_optimizer       a run configuration (TOML) in, an OptimizationResult out
evaluate_program    score a program over examples with metrics, timeouts and repeated runs
LiftPipeline        the reference dspy.Module: natural-language prompt -> IR -> Python code
choose_code         keep one of several sampled code answers, without tests (best of N)
log_run_to_mlflow   log a finished run (config, trials, evaluations, comparison) to MLflow
UsageRecorder       DSPy usage tracker of one unit of work: billed calls, tokens, priced cost

local_lm            a ``dspy.LM`` backed by a GGUF model running in-process (llama.cpp)
LocalEngine         the DSPy engine behind it, for ``dspy.LM(model, engine=...)``
resolve_lm          "local" / a .gguf path / a DSPy model string / a config mapping -> LM
default_model_path  the bundled SmolLM2-135M-Instruct GGUF file
default_n_threads   the llama.cpp thread count used when none is given
load_tasks          the shipped task dataset (datasets/tasks) as dspy.Examples, by split
task_records        the same records as validated plain dicts
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lift_metrics._tasks import (
    DIFFICULTIES,
    SPLITS,
    default_tasks_path,
    io_tests_from_json,
    load_tasks,
    task_records,
)
from lift_metrics.lm import (
    LocalEngine,
    default_model_path,
    default_n_threads,
    local_lm,
    resolve_lm,
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
    from lift_metrics.errors import BudgetExceeded, TrackingError
    from lift_metrics.optimizers._config import RunConfig, load_config
    from lift_metrics.optimizers._eval_results import Evaluation
    from lift_metrics.optimizers._evaluate import evaluate_program, save_evaluation
    from lift_metrics.optimizers._pipeline import LiftPipeline
    from lift_metrics.optimizers._result import MetricDelta, OptimizationResult
    from lift_metrics.optimizers._runner import run_optimizer
    from lift_metrics.optimizers._select import CodeChoice, choose_code, probe_inputs
    from lift_metrics.optimizers._tracking import TrackedRun, log_run_to_mlflow


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lift_metrics.optimizers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Budget",
    "BudgetExceeded",
    "CodeChoice",
    "DIFFICULTIES",
    "Evaluation",
    "LiftPipeline",
    "LocalEngine",
    "MetricDelta",
    "OptimizationResult",
    "RunConfig",
    "SPLITS",
    "TrackedRun",
    "TrackingError",
    "UsageRecorder",
    "choose_code",
    "default_model_path",
    "default_n_threads",
    "default_tasks_path",
    "evaluate_program",
    "io_tests_from_json",
    "load_config",
    "load_tasks",
    "local_lm",
    "log_run_to_mlflow",
    "probe_inputs",
    "resolve_lm",
    "run_optimizer",
    "save_evaluation",
    "task_records",
]
