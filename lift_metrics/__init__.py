"""lift-metrics: metrics, a sandbox, validation and statistics for optimizing DSPy programs.

This module is the map of the public API. Every name below is one hop away; names are
loaded on first access so that ``import lift_metrics`` stays light (no torch,
sentence-transformers or dspy until a metric needs them).

Conventions
-----------
Argument order
    Pure metrics take ``(predicted, expected)``: the generated output first, the reference
    second, as Hugging Face ``evaluate`` (``predictions, references``) and sacrebleu
    (``hypothesis, references``) do. This is the reverse of scikit-learn's
    ``(y_true, y_pred)``. The same order holds elsewhere: ``(retrieved, relevant)`` for
    retrieval, ``(scores, labels)`` for validation, ``predicted_*`` before ``expected_*`` for
    the keyword-only composites. The DSPy metric objects are called the way DSPy calls them,
    ``metric(example, prediction, trace=None)``.
Sign of a delta
    A paired statistic of ``(a, b)`` reports ``a - b``, as ``scipy.stats.ttest_rel(a, b)``
    (``stats.paired_bootstrap``, ``stats.paired_comparison``); where the arguments are named,
    the name says the direction (``treatment - control``, ``current - baseline``).
Unknown prices
    A model without a known price is never priced at 0: its cost is NaN and flagged.
Errors
    Bad input (a wrong argument, a malformed file or config, a missing optional piece) raises
    a :class:`LiftMetricsError`: :class:`InputValueError` (also a ``ValueError``) or
    :class:`InputTypeError` (also a ``TypeError``), or one of their subclasses such as
    :class:`IRParseError`; the message is one line naming the parameter, file or key. Any
    other exception is a bug and keeps its traceback: ``lift-metrics`` prints a
    ``LiftMetricsError`` as one line with exit code 2 and nothing else. See docs/errors.md.
Naming
    As scikit-learn: ``*_score``/``*_match``/``*_quality`` are higher-is-better in [0, 1];
    ``*_error``/``*_penalty`` say so in their docstrings. Units are in names
    (``latency_ms``, ``cost_usd``).

Subpackages
-----------
lift_metrics.ir            the IR metrics (intent, signature, structure, constraints)
lift_metrics.code          the code metrics (code_quality, tests, similarity, style, reference)
lift_metrics.composite     end_to_end, aggregate_metric and the provider-route metrics
lift_metrics.dspy_metrics  the metrics as DSPy metric objects (IRQuality, CodeQuality, ...)
lift_metrics.similarity    embedders (bundled MiniLM on ONNX or torch) and similarity scores
lift_metrics.judge         LLM-as-judge modules (answers, code review)
lift_metrics.pricing       model prices per token, cost of a call
lift_metrics.stats         summary statistics, grades, pass@k, regression detection, A/B
lift_metrics.sandbox       running untrusted code against tests
lift_metrics.scoring       scoring generation files (pass@k, resumable, pluggable backends)
lift_metrics.validation    agreement of a metric with hand-labelled examples
lift_metrics.optimizers    MIPROv2 / COPRO / GEPA runners, reference pipeline, evaluation
lift_metrics.lm            the local LM (a GGUF model run in-process) and LM selection
lift_metrics.errors        LiftMetricsError and the input errors every package raises
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Aggregate": "lift_metrics.dspy_metrics",
    "AllTestsPass": "lift_metrics.dspy_metrics",
    "CodeQuality": "lift_metrics.dspy_metrics",
    "CodeQualityOptions": "lift_metrics.code",
    "EndToEnd": "lift_metrics.dspy_metrics",
    "IR": "lift_metrics.ir",
    "IRParseError": "lift_metrics.errors",
    "IRQuality": "lift_metrics.dspy_metrics",
    "InputTypeError": "lift_metrics.errors",
    "InputValueError": "lift_metrics.errors",
    "LiftMetricsError": "lift_metrics.errors",
    "ProviderRoute": "lift_metrics.composite",
    "TestPassRate": "lift_metrics.dspy_metrics",
    "aggregate_metric": "lift_metrics.composite",
    "code_quality": "lift_metrics.code",
    "code_quality_breakdown": "lift_metrics.code",
    "constraint_match": "lift_metrics.ir",
    "constraint_satisfied": "lift_metrics.ir",
    "cost_usd_for_model": "lift_metrics.pricing",
    "degenerate_kind": "lift_metrics.code",
    "end_to_end": "lift_metrics.composite",
    "end_to_end_breakdown": "lift_metrics.composite",
    "extract_code": "lift_metrics.code",
    "intent_match": "lift_metrics.ir",
    "ir_quality": "lift_metrics.ir",
    "ir_quality_breakdown": "lift_metrics.ir",
    "latency_penalty": "lift_metrics.composite",
    "parse_ir": "lift_metrics.ir",
    "reference_score": "lift_metrics.code",
    "reference_score_breakdown": "lift_metrics.code",
    "reference_scores": "lift_metrics.code",
    "route_cost": "lift_metrics.composite",
    "route_quality": "lift_metrics.composite",
    "semantic_similarity": "lift_metrics.code",
    "signature_match": "lift_metrics.ir",
    "structural_similarity": "lift_metrics.code",
    "structure_match": "lift_metrics.ir",
    "style_conformance": "lift_metrics.code",
    "suggest_route_migration": "lift_metrics.composite",
    "syntax_correctness": "lift_metrics.code",
    "test_pass_rate": "lift_metrics.code",
}

__all__ = [
    "Aggregate",
    "AllTestsPass",
    "CodeQuality",
    "CodeQualityOptions",
    "EndToEnd",
    "IR",
    "IRParseError",
    "IRQuality",
    "InputTypeError",
    "InputValueError",
    "LiftMetricsError",
    "ProviderRoute",
    "TestPassRate",
    "aggregate_metric",
    "code_quality",
    "code_quality_breakdown",
    "constraint_match",
    "constraint_satisfied",
    "cost_usd_for_model",
    "degenerate_kind",
    "end_to_end",
    "end_to_end_breakdown",
    "extract_code",
    "intent_match",
    "ir_quality",
    "ir_quality_breakdown",
    "latency_penalty",
    "parse_ir",
    "reference_score",
    "reference_score_breakdown",
    "reference_scores",
    "route_cost",
    "route_quality",
    "semantic_similarity",
    "signature_match",
    "structural_similarity",
    "structure_match",
    "style_conformance",
    "suggest_route_migration",
    "syntax_correctness",
    "test_pass_rate",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from lift_metrics.code import (
        CodeQualityOptions,
        code_quality,
        code_quality_breakdown,
        degenerate_kind,
        extract_code,
        reference_score,
        reference_score_breakdown,
        reference_scores,
        semantic_similarity,
        structural_similarity,
        style_conformance,
        syntax_correctness,
        test_pass_rate,
    )
    from lift_metrics.composite import (
        ProviderRoute,
        aggregate_metric,
        end_to_end,
        end_to_end_breakdown,
        latency_penalty,
        route_cost,
        route_quality,
        suggest_route_migration,
    )
    from lift_metrics.dspy_metrics import (
        Aggregate,
        AllTestsPass,
        CodeQuality,
        EndToEnd,
        IRQuality,
        TestPassRate,
    )
    from lift_metrics.errors import InputTypeError, InputValueError, IRParseError, LiftMetricsError
    from lift_metrics.ir import (
        IR,
        constraint_match,
        constraint_satisfied,
        intent_match,
        ir_quality,
        ir_quality_breakdown,
        parse_ir,
        signature_match,
        structure_match,
    )
    from lift_metrics.pricing import cost_usd_for_model


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'lift_metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value  # cache: the next access skips __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
