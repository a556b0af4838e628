"""Setting up an optimization: the optimizer, its metric, the examples and the program's labels.

Also :class:`TimedMetric`, the metric wrapper that measures how long metrics take.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lift_metrics.errors import InputValueError
from lift_metrics.optimizers._config import (
    RunConfig,
)

__all__ = ["TimedMetric", "evaluation_metrics", "warn_if_val_is_train", "with_pipeline_labels"]


class TimedMetric:
    """A DSPy metric that adds up the wall time spent inside it (thread-safe).

    It keeps DSPy's metric protocol (five positional parameters, which GEPA checks) and
    forwards everything to the wrapped metric; ``seconds`` and ``calls`` say how much of a
    run the metric took.
    """

    def __init__(self, metric: Any) -> None:
        import threading

        self.metric = metric
        self.threshold = getattr(metric, "threshold", 0.5)
        self.seconds = 0.0
        self.calls = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TimedMetric({self.metric!r}, calls={self.calls}, seconds={self.seconds:.3f})"

    def __call__(
        self,
        example: Any,
        prediction: Any,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> Any:
        started = time.perf_counter()
        try:
            return self.metric(example, prediction, trace, pred_name, pred_trace)
        finally:
            elapsed = time.perf_counter() - started
            with self._lock:
                self.seconds += elapsed
                self.calls += 1


def _build_optimizer(config: RunConfig, metric: Any, task_lm: Any, prompt_lm: Any) -> Any:
    import dspy.teleprompt

    spec = config.optimizer
    cls = getattr(dspy.teleprompt, spec.class_name)
    if spec.name == "mipro" and spec.instructions == "candidates":
        cls = _candidate_instructions_mipro()
    kwargs = dict(spec.init_args)
    if spec.name == "mipro":
        kwargs.setdefault("seed", config.seed)
        kwargs["prompt_model"] = prompt_lm
        kwargs["task_model"] = task_lm
    elif spec.name == "copro":
        kwargs["prompt_model"] = prompt_lm
    else:
        kwargs.setdefault("seed", config.seed)
        kwargs["reflection_lm"] = prompt_lm
        kwargs.setdefault("log_dir", str(config.output_dir / "gepa_logs"))
    try:
        return cls(metric=metric, **kwargs)
    except (AssertionError, TypeError, ValueError) as exc:
        raise InputValueError(f"{spec.class_name}: {exc}") from None


def _candidate_instructions_mipro() -> type:
    """MIPROv2 whose instruction candidates are the pipeline's hand-written ones.

    Everything else is DSPy's MIPROv2 (demonstration sets, Bayesian search over
    instruction x demonstration choices, evaluation); only step 2, proposing instructions
    with the prompt model, is replaced: each predictor gets its own instruction followed by
    :data:`~lift_metrics.optimizers._signatures.CANDIDATE_INSTRUCTIONS` for its name, at most
    ``num_candidates`` of them. No LM call is made for instructions.
    """
    from dspy.teleprompt import MIPROv2

    from lift_metrics.optimizers._signatures import CANDIDATE_INSTRUCTIONS

    class CandidateInstructionsMIPROv2(MIPROv2):  # type: ignore[misc]  # dspy is untyped: mypy sees its classes as Any
        def _propose_instructions(
            self, program: Any, *args: Any, num_instruct_candidates: int = 1, **kwargs: Any
        ) -> dict[int, list[str]]:
            out: dict[int, list[str]] = {}
            for index, (name, predictor) in enumerate(program.named_predictors()):
                own = predictor.signature.instructions
                norm = " ".join(own.split())
                extra = [c for c in CANDIDATE_INSTRUCTIONS.get(name, ()) if c != norm]
                out[index] = [own, *extra][: max(1, num_instruct_candidates)]
            return out

    return CandidateInstructionsMIPROv2


def warn_if_val_is_train(train: Sequence[Any], val: Sequence[Any]) -> int:
    """Warn when GEPA's validation examples are among its training examples.

    GEPA's reflection reads feedback on training examples and keeps the candidates that score
    best on the validation set: on the same examples, a prompt that memorises them is
    selected, and the validation score says nothing about new inputs. Examples are matched
    by :meth:`lift_metrics.dspy_metrics.IRQuality.example_id` (``id``, ``task_id`` or a hash
    of the inputs).

    Returns
    -------
    int
        How many validation examples are training examples (a UserWarning when > 0).
    """
    from lift_metrics.dspy_metrics import IRQuality

    seen = {IRQuality.example_id(e) for e in train} - {None}
    shared = sum(IRQuality.example_id(e) in seen for e in val)
    if shared:
        warnings.warn(
            f"GEPA's validation set is its training set ({shared} of {len(val)} validation "
            "examples are training examples): candidates are chosen on examples whose "
            "feedback the reflection read, so the validation score does not show how the "
            "program does on new inputs; give [dataset] val a held-out split",
            UserWarning,
            stacklevel=2,
        )
    return shared


def _compile(config: RunConfig, optimizer: Any, train: list[Any], val: list[Any]) -> Any:
    from lift_metrics.optimizers._pipeline import LiftPipeline

    if config.optimizer.name == "gepa":
        warn_if_val_is_train(train, val)
    kwargs = dict(config.optimizer.compile_args)
    kwargs["trainset"] = train
    if config.optimizer.name != "copro":
        kwargs["valset"] = val
    return optimizer.compile(LiftPipeline(**config.pipeline), **kwargs)


def with_pipeline_labels(example: Any) -> Any:
    """Return the example plus ``ir``, ``header`` and ``body`` labels named as pipeline fields.

    The task examples carry ``expected_ir`` / ``expected_code``; DSPy's labeled
    demonstrations (``max_labeled_demos`` of MIPROv2, BootstrapFewShot) copy fields by the
    predictor's own names, so without these labels a labeled demo of the code step would have
    no ``header`` and no ``body``. ``header`` is built from the expected IR as the pipeline
    builds it from a predicted one; ``body`` is the reference solution's body. The metrics
    keep reading ``expected_*``.
    """
    from lift_metrics.ir import IR
    from lift_metrics.optimizers._functions import function_body, function_header

    ir = IR.model_validate(example.expected_ir)
    return example.copy(
        ir=ir,
        header=function_header(ir),
        body=function_body(str(example.expected_code), str(example.entry_point)),
    )


def _split_examples(split: str, path: Path | None, limit: int | None) -> list[Any]:
    """Return the first ``limit`` tasks (all for ``None``) of ``split`` as DSPy examples."""
    from lift_metrics._tasks import load_tasks

    items = load_tasks(split, path=path)
    return items if limit is None else items[:limit]


def _examples(config: RunConfig) -> tuple[list[Any], list[Any], list[Any]]:
    spec = config.dataset
    train = [
        with_pipeline_labels(e) for e in _split_examples(spec.train, spec.path, spec.train_limit)
    ]
    val = [with_pipeline_labels(e) for e in _split_examples(spec.val, spec.path, spec.val_limit)]
    return train, val, _split_examples(spec.test, spec.path, spec.test_limit)


def evaluation_metrics(name: str, primary: Any) -> dict[str, Any]:
    """Return the metrics an evaluation reports.

    The primary one first, then (for the composite ``end_to_end``/``aggregate``) ``ir_quality`` and
    ``code_quality`` with default weights, then ``tests_passed`` (share of the task's tests passed)
    and ``tasks_solved`` (1 when all pass) of
    :class:`~lift_metrics.optimizers._code_report.PassRateMetric`.
    """
    from lift_metrics.dspy_metrics import CodeQuality, IRQuality
    from lift_metrics.optimizers._code_report import PassRateMetric

    metrics = {name: primary}
    if name in ("end_to_end", "aggregate"):
        metrics["ir_quality"] = IRQuality()
        metrics["code_quality"] = CodeQuality()
    metrics["tests_passed"] = PassRateMetric()
    metrics["tasks_solved"] = PassRateMetric(all_or_nothing=True)
    return metrics
