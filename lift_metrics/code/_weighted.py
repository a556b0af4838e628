"""The weighted-sum profiles (``"seed"``, ``"shipped"``, custom weights) of code_quality."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from lift_metrics.code._breakdown import CodeQualityBreakdown
from lift_metrics.code._features import CodeFeatures, code_features
from lift_metrics.code._gate import GATED_COMPONENTS, gate_by_wrong_answers
from lift_metrics.code._options import CodeQualityOptions
from lift_metrics.code._semantic import semantic_reason, similarity_score
from lift_metrics.code._stub import stub_kind
from lift_metrics.code._style import style_parts
from lift_metrics.code._tests import (
    ExecutedTests,
    NormalizedTests,
    SandboxLike,
    resolve_sandbox,
    run_tests,
)
from lift_metrics.similarity import (
    Embedder,
    resolve_embedder,
    sequence_similarity,
)

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _background() -> ThreadPoolExecutor:
    """Threads that wait on the sandbox while the calling thread computes embeddings."""
    global _executor
    if _executor is None:
        with _executor_lock:
            if _executor is None:
                _executor = ThreadPoolExecutor(
                    max_workers=min(32, (os.cpu_count() or 1) + 4),
                    thread_name_prefix="lift-metrics-tests",
                )
    return _executor


def _run_concurrently(
    execute: Callable[[], ExecutedTests] | None,
    similarity: Callable[[], float] | None,
    *,
    overlap: bool,
) -> tuple[ExecutedTests | None, float | None]:
    """Run the tests and the embedding; the sandbox waits in a thread while the model computes."""
    if execute is not None and similarity is not None and overlap:
        pending = _background().submit(execute)
        try:
            semantic = similarity()
        finally:
            executed = pending.result()
        return executed, semantic
    return (
        None if execute is None else execute(),
        None if similarity is None else similarity(),
    )


def _style(
    candidate: CodeFeatures, predicted: str, expected: str
) -> tuple[dict[str, float], str | None]:
    """Return the style component, its three parts, and the reason it is below 1 (if it is)."""
    imports, naming, docstrings, _ = style_parts(predicted, expected)
    style = (imports + naming + docstrings) / 3.0
    parts = {
        "style": style,
        "style.imports": imports,
        "style.naming": naming,
        "style.docstrings": docstrings,
    }
    if not candidate.parses:
        return parts, "style: 0 because the code does not parse"
    if style >= 1.0:
        return parts, None
    details = [f"imports {imports:.2f}", f"naming {naming:.2f}", f"docstrings {docstrings:.2f}"]
    if candidate.badly_named:
        shown = ", ".join(candidate.badly_named[:5])
        more = len(candidate.badly_named) - 5
        details.append(f"badly named: {shown}" + (f" (+{more} more)" if more > 0 else ""))
    return parts, "style: " + "; ".join(details)


def _weighted(
    predicted: str,
    expected: str,
    normalized: NormalizedTests,
    options: CodeQualityOptions,
    entry: str | None,
    embedder: Embedder | None,
    sandbox: SandboxLike | None,
    prompt: str | None = None,
) -> CodeQualityBreakdown:
    """Return the weighted-sum family: seed, shipped and custom profiles.

    ``prompt`` only gives a check script the task's own helpers (the code is scored as given).
    """
    weight = dict(options.weights or {})
    if weight["semantic"] > 0:
        embedder = resolve_embedder(embedder)
    if sandbox is not None or (
        weight["tests"] > 0 and normalized.count and code_features(predicted).parses
    ):
        sandbox = resolve_sandbox(sandbox)
    reference = code_features(expected)
    candidate = code_features(predicted)

    components: dict[str, float] = {"syntax": 1.0 if candidate.parses else 0.0}
    reasons: list[str] = [] if candidate.parses else [f"syntax: {candidate.error}"]
    if not reference.parses:
        reasons.append(
            f"reference: does not parse ({reference.error}); structural 0 and style's import "
            "part compared with no imports"
        )

    def execute() -> ExecutedTests:
        return run_tests(
            predicted,
            normalized,
            entry_point=entry,
            sandbox=sandbox,
            timeout_s=options.timeout_s,
            prompt=prompt,
        )

    def similarity() -> float:
        return similarity_score(predicted, expected, embedder, options.similarity_floor)

    executed, semantic = _run_concurrently(
        execute if weight["tests"] > 0 else None,
        similarity if weight["semantic"] > 0 else None,
        overlap=normalized.count > 0 and candidate.parses and predicted != expected,
    )
    if executed is not None:
        components["tests"] = executed.rate
        if normalized.count:
            components["tests.wrong_answers"] = executed.wrong / normalized.count
        if executed.rate < 1.0:
            reasons.append(f"tests: {executed.reason}")
    if semantic is not None:
        components["semantic"] = semantic
        semantic_why = semantic_reason(semantic, predicted)
        if semantic_why:
            reasons.append(semantic_why)
    style, style_reason = _style(candidate, predicted, expected if reference.parses else "")
    components.update(style)
    if style_reason:
        reasons.append(style_reason)
    components["structural"] = (
        sequence_similarity(candidate.structure, reference.structure)
        if candidate.parses and reference.parses
        else 0.0
    )
    if weight.get("structural", 0.0) > 0 and components["structural"] < 1.0:
        reasons.append(f"structural: AST similarity {components['structural']:.3f}")

    scored = components
    wrong = components.get("tests.wrong_answers", 0.0)
    if options.wrong_answer_gate and wrong > 0:
        scored = gate_by_wrong_answers(components)
        gated = ", ".join(k for k in GATED_COMPONENTS if weight.get(k, 0.0) > 0) or "nothing"
        reasons.append(
            f"gate: {gated} counted x{1.0 - wrong:.3g} "
            f"({executed.wrong if executed else 0} of {normalized.count} tests returned a "
            "wrong value)"
        )
    score = sum(w * scored.get(key, 0.0) for key, w in weight.items())
    score = min(1.0, max(0.0, score))
    kind = stub_kind(predicted, expected, entry) if candidate.parses else None
    cap = options.stub_cap
    if kind is not None and cap is not None and score > cap:
        score = cap
        reasons.append(f"stub: the entry function is a placeholder ({kind}); capped at {cap:g}")
    return CodeQualityBreakdown(
        score=score,
        components=components,
        weights=weight,
        execution=None if executed is None else executed.execution,
        tests_passed=0 if executed is None else executed.passed,
        tests_total=normalized.count,
        reasons=tuple(reasons),
        stub=kind is not None,
        profile=options.profile,
    )
