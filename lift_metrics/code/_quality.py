"""The code_quality metric (seed 002): syntax, tests, semantic similarity and style."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lift_metrics._checks import normalize_weights
from lift_metrics.code._features import CodeFeatures, check_code, code_features
from lift_metrics.code._semantic import check_similarity_floor, rescale_similarity
from lift_metrics.code._stub import check_stub_cap, stub_kind
from lift_metrics.code._style import style_parts
from lift_metrics.code._tests import (
    ExecutedTests,
    SandboxLike,
    TestCases,
    check_entry_point,
    check_timeout,
    normalize_tests,
    resolve_sandbox,
    run_tests,
)
from lift_metrics.similarity import (
    Embedder,
    resolve_embedder,
    sequence_similarity,
    text_similarity,
)

if TYPE_CHECKING:  # pragma: no cover
    from lift_metrics.sandbox import ExecutionResult

DEFAULT_CODE_QUALITY_WEIGHTS: Mapping[str, float] = {
    "syntax": 0.2,
    "tests": 0.4,
    "semantic": 0.3,
    "style": 0.1,
}
"""Seed 002's weights. Add a ``"structural"`` key to a weights mapping to score it too."""

GATED_COMPONENTS: tuple[str, ...] = ("semantic", "style", "structural")
"""The resemblance components that ``wrong_answer_gate`` scales (syntax and tests are not)."""


def check_wrong_answer_gate(value: Any) -> bool:
    """Validate a ``wrong_answer_gate`` option: True or False.

    Examples
    --------
    >>> check_wrong_answer_gate(True)
    True
    """
    if not isinstance(value, bool):
        raise TypeError(f"wrong_answer_gate must be True or False, got {value!r}")
    return value


def gate_by_wrong_answers(components: Mapping[str, float]) -> dict[str, float]:
    """The components with ``semantic``, ``style`` and ``structural`` scaled by the tests.

    Parameters
    ----------
    components : mapping of str to float
        A :class:`CodeQualityBreakdown`'s ``components``; ``tests.wrong_answers`` (the
        fraction of tests that returned a wrong value) is read, absent meaning 0.

    Returns
    -------
    dict of str to float
        A copy in which each component of :data:`GATED_COMPONENTS` present is multiplied by
        ``1 - tests.wrong_answers``; the others are unchanged. This is the opt-in
        ``wrong_answer_gate`` of :func:`code_quality`, and what ``lift-metrics validate
        --calibrate --wrong-answer-gate`` fits weights on.

    Examples
    --------
    >>> gate_by_wrong_answers({"syntax": 1.0, "tests": 0.5, "semantic": 0.9,
    ...                        "tests.wrong_answers": 0.5})
    {'syntax': 1.0, 'tests': 0.5, 'semantic': 0.45, 'tests.wrong_answers': 0.5}
    """
    keep = 1.0 - float(components.get("tests.wrong_answers", 0.0))
    return {
        key: value * keep if key in GATED_COMPONENTS else value for key, value in components.items()
    }


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


@dataclass(frozen=True, repr=False)
class CodeQualityBreakdown:
    """A code_quality score with the components, test outcomes and reasons behind it.

    Attributes
    ----------
    score : float
        The weighted score in [0, 1] (what :func:`code_quality` returns).
    components : dict of str to float
        Every computed component in [0, 1]: ``syntax``, ``tests``, ``semantic``, ``style``
        (a component whose weight is 0 is not computed, so an embedder or a sandbox is not
        started for nothing) and always ``structural`` when the prediction is scored against
        a parsable reference (cheap, and handy to compare with ``semantic``), plus the three
        parts of ``style``: ``style.imports``, ``style.naming``, ``style.docstrings``, and
        ``tests.wrong_answers`` when the tests ran: the fraction of tests in which the code
        returned a wrong value (what the opt-in ``wrong_answer_gate`` uses). These are the
        values before the gate and the stub cap.
    weights : dict of str to float
        The normalised weights used (they sum to 1).
    execution : ExecutionResult or None
        The sandbox's result with per-test outcomes; ``None`` when no process was started
        (no tests, code that does not parse, or a tests weight of 0).
    tests_passed, tests_total : int
        Tests passed and tests given (an assertion script counts as one).
    reasons : tuple of str
        One line for each component below 1.0 saying why (and one for a gate or cap used).
    stub : bool
        Whether the predicted entry function is a placeholder (:func:`~lift_metrics.code.
        is_stub`); computed whether or not ``stub_cap`` is used.
    """

    score: float
    components: dict[str, float]
    weights: dict[str, float]
    execution: ExecutionResult | None
    tests_passed: int
    tests_total: int
    reasons: tuple[str, ...] = field(default=())
    stub: bool = False

    def __float__(self) -> float:
        return self.score

    def __repr__(self) -> str:
        parts = ", ".join(
            f"{key}={value:.3g}" for key, value in self.components.items() if "." not in key
        )
        return f"CodeQualityBreakdown(score={self.score:.4g}, {parts})"

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (the execution with its per-test outcomes included)."""
        execution = None if self.execution is None else self.execution.to_dict()
        return {
            "score": self.score,
            "components": dict(self.components),
            "weights": dict(self.weights),
            "tests_passed": self.tests_passed,
            "tests_total": self.tests_total,
            "execution": execution,
            "reasons": list(self.reasons),
            "stub": self.stub,
        }


def _weights(weights: Mapping[str, Any] | None) -> dict[str, float]:
    defaults = dict(DEFAULT_CODE_QUALITY_WEIGHTS)
    if isinstance(weights, Mapping) and "structural" in weights:
        defaults["structural"] = 0.0
    return normalize_weights("weights", weights, defaults)


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
    """The style component, its three parts, and the reason it is below 1 (if it is)."""
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


def code_quality_breakdown(
    predicted: str,
    expected: str,
    tests: TestCases,
    *,
    weights: Mapping[str, float] | None = None,
    embedder: Embedder | None = None,
    sandbox: SandboxLike | None = None,
    entry_point: str | None = None,
    timeout_s: float | None = None,
    similarity_floor: float = 0.0,
    wrong_answer_gate: bool = False,
    stub_cap: float | None = None,
) -> CodeQualityBreakdown:
    """Score generated code like :func:`code_quality` and say why.

    Parameters and raised errors are those of :func:`code_quality`.

    Returns
    -------
    CodeQualityBreakdown
        ``score`` plus ``components``, normalised ``weights``, the sandbox ``execution`` with
        per-test outcomes, ``tests_passed``/``tests_total``, ``reasons`` and ``stub``.

    Examples
    --------
    Without a neural model (``structural`` instead of ``semantic``):

    >>> reference = "def add(a, b):\\n    return a + b\\n"
    >>> no_model = {"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1, "structural": 0.3}
    >>> result = code_quality_breakdown("def add(a, b) return a + b", reference, [],
    ...                                 weights=no_model)
    >>> result.score, result.components["syntax"], result.components["tests"], result.execution
    (0.0, 0.0, 0.0, None)
    >>> result.reasons[0]
    "syntax: SyntaxError: expected ':' (line 1)"

    A placeholder with the opt-in stub cap:

    >>> stub = "def add(a, b):\\n    raise NotImplementedError\\n"
    >>> capped = code_quality_breakdown(stub, reference, [], weights=no_model, stub_cap=0.1)
    >>> capped.stub, capped.score
    (True, 0.1)
    """
    check_code("predicted", predicted)
    check_code("expected", expected)
    normalized = normalize_tests(tests)
    weight = _weights(weights)
    entry = check_entry_point(entry_point)
    timeout = check_timeout(timeout_s)
    floor = check_similarity_floor(similarity_floor)
    gate = check_wrong_answer_gate(wrong_answer_gate)
    cap = check_stub_cap(stub_cap)
    if weight["semantic"] > 0:
        embedder = resolve_embedder(embedder)
    if sandbox is not None or (
        weight["tests"] > 0 and normalized.count and code_features(predicted).parses
    ):
        sandbox = resolve_sandbox(sandbox)
    reference = code_features(expected)
    if not reference.parses:
        raise ValueError(f"expected must be valid Python, but it does not parse: {reference.error}")
    candidate = code_features(predicted)

    components: dict[str, float] = {"syntax": 1.0 if candidate.parses else 0.0}
    reasons: list[str] = [] if candidate.parses else [f"syntax: {candidate.error}"]

    def execute() -> ExecutedTests:
        return run_tests(
            predicted, normalized, entry_point=entry, sandbox=sandbox, timeout_s=timeout
        )

    def similarity() -> float:
        return rescale_similarity(text_similarity(predicted, expected, embedder=embedder), floor)

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
        if semantic < 1.0:
            reasons.append(f"semantic: embedding similarity {semantic:.3f}")
    style, style_reason = _style(candidate, predicted, expected)
    components.update(style)
    if style_reason:
        reasons.append(style_reason)
    components["structural"] = (
        sequence_similarity(candidate.structure, reference.structure) if candidate.parses else 0.0
    )
    if weight.get("structural", 0.0) > 0 and components["structural"] < 1.0:
        reasons.append(f"structural: AST similarity {components['structural']:.3f}")

    scored = components
    wrong = components.get("tests.wrong_answers", 0.0)
    if gate and wrong > 0:
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
    )


def code_quality(
    predicted: str,
    expected: str,
    tests: TestCases,
    *,
    weights: Mapping[str, float] | None = None,
    embedder: Embedder | None = None,
    sandbox: SandboxLike | None = None,
    entry_point: str | None = None,
    timeout_s: float | None = None,
    similarity_floor: float = 0.0,
    wrong_answer_gate: bool = False,
    stub_cap: float | None = None,
) -> float:
    """Quality of generated code against a reference and tests, in [0, 1] (seed 002).

    Parameters
    ----------
    predicted : str
        The generated Python code.
    expected : str
        The reference (human-written) code; it must parse.
    tests : list of (dict, object) pairs, or str
        I/O cases ``[(kwargs, expected_output), ...]`` or a HumanEval-style assertion script;
        see :func:`~lift_metrics.code.test_pass_rate`.
    weights : mapping or None, default None
        ``{"syntax": 0.2, "tests": 0.4, "semantic": 0.3, "style": 0.1}`` by default. A
        mapping must have exactly these keys, optionally plus ``"structural"``
        (:func:`~lift_metrics.code.structural_similarity`, the name-blind AST score: use
        ``semantic=0, structural=0.3`` to score without a neural model). Weights are
        rescaled to sum to 1.
    embedder : Embedder or None, default None
        For ``semantic``; ``None`` means the bundled all-MiniLM-L6-v2 (cached by text).
    sandbox : Sandbox or None, default None
        For ``tests``; ``None`` means :func:`lift_metrics.sandbox.get_default_sandbox`.
    entry_point : str or None, default None
        Function the I/O cases call; ``None`` means the only top-level function.
    timeout_s : float or None, default None
        Per-execution time limit; ``None`` means the sandbox's own.
    similarity_floor : float, default 0.0
        Opt-in rescaling of ``semantic``: ``max(0, (cos - floor) / (1 - floor))``
        (:func:`~lift_metrics.code.semantic_similarity`). 0, the default, is seed 002's
        metric; the calibrated profile ``datasets/labels/calibrated_code_quality.json``
        pairs a floor with fitted weights (:func:`lift_metrics.validation.load_profile`).
    wrong_answer_gate : bool, default False
        Opt-in: multiply ``semantic``, ``style`` and ``structural`` by ``1 - r``, where ``r``
        is the fraction of tests in which the code ran and returned a wrong value. Code whose
        tests refute its logic then keeps little credit for merely looking like the
        reference; code that fails for its interface (a renamed function or parameter, a
        missing argument) or crashes keeps it. False, the default, is seed 002's metric.
    stub_cap : float or None, default None
        Opt-in: the most a prediction whose entry function is a placeholder (body only
        ``pass``/``...``/a docstring, ``raise NotImplementedError``, or ``return`` of a
        constant or of an argument unchanged; :func:`~lift_metrics.code.is_stub`) can
        score, in [0, 1]. None, the default, is seed 002's metric (no cap).

    Returns
    -------
    float
        :math:`\\sum_k w_k c_k` over the weighted components, in [0, 1] (see Notes for the
        opt-in gate and cap).

    Raises
    ------
    TypeError
        If ``predicted`` or ``expected`` is not a str, ``tests`` has the wrong shape,
        ``weights``/``embedder``/``sandbox``/``entry_point`` has the wrong type, or
        ``wrong_answer_gate`` is not a bool.
    ValueError
        If ``weights`` has missing/unknown keys, negative values or a zero sum,
        ``timeout_s <= 0``, ``entry_point`` is not an identifier, ``expected`` does not
        parse, ``similarity_floor`` is outside [0, 1) or ``stub_cap`` outside [0, 1].

    Notes
    -----
    .. math::

        \\text{code\\_quality} = 0.2\\,\\text{syntax} + 0.4\\,\\text{tests}
            + 0.3\\,\\text{semantic} + 0.1\\,\\text{style}

    with :func:`~lift_metrics.code.syntax_correctness`,
    :func:`~lift_metrics.code.test_pass_rate` (no tests: 1.0, as seed 002 says),
    :func:`~lift_metrics.code.semantic_similarity` and
    :func:`~lift_metrics.code.style_conformance`. A wrong prediction never raises: code that
    does not parse scores 0 on syntax, tests (no process is started) and style, and keeps
    its semantic similarity; a crash, timeout or missing entry point fails the tests. The
    reasons are in :func:`code_quality_breakdown`. Thread-safe: the sandbox runs while the
    calling thread computes the embedding.

    The opt-in options (the calibrated profile
    ``datasets/labels/calibrated_code_quality.json`` sets them) change the score to

    .. math::

        \\min\\Big(\\text{cap},\\ \\sum_{k \\notin G} w_k c_k
            + (1 - r) \\sum_{k \\in G} w_k c_k\\Big)

    with :math:`G` = {semantic, style, structural}, :math:`r` the fraction of tests that
    returned a wrong value (0 without the gate, without tests, or when the code does not
    parse) and the cap applied only to a stub. An assertion script counts as one test; its
    failure is a wrong answer when ``check`` raised ``AssertionError``.

    Examples
    --------
    >>> reference = "def add(a, b):\\n    return a + b\\n"
    >>> code_quality(reference, reference, [])
    0.98333

    A stub passes no real test, yet without tests it keeps its syntax and style points; the
    opt-in cap bounds it (no neural model here):

    >>> stub = "def add(a, b):\\n    return 0\\n"
    >>> no_model = {"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1, "structural": 0.3}
    >>> round(code_quality(stub, reference, [], weights=no_model), 3)
    0.863
    >>> code_quality(stub, reference, [], weights=no_model, stub_cap=0.1)
    0.1
    """
    return code_quality_breakdown(
        predicted,
        expected,
        tests,
        weights=weights,
        embedder=embedder,
        sandbox=sandbox,
        entry_point=entry_point,
        timeout_s=timeout_s,
        similarity_floor=similarity_floor,
        wrong_answer_gate=wrong_answer_gate,
        stub_cap=stub_cap,
    ).score
