"""The code_quality metric: one scoring core, one options object, several profiles.

The default profile, ``"validated"``, ranks code the way people do: tests dominate when
they exist, answers that are not code score near zero, and without tests the score is the
no-test reference score. The weighted-sum family (``"seed"``, ``"shipped"``, custom
``weights``) is the earlier syntax/tests/semantic/style sum, kept for comparison.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from lift_metrics._checks import normalize_weights
from lift_metrics.code._degenerate import degenerate_kind
from lift_metrics.code._extract import (
    complete_with_prompt,
    defines,
    extract_code,
    single_function,
)
from lift_metrics.code._features import CodeFeatures, check_code, code_features
from lift_metrics.code._semantic import check_similarity_floor, rescale_similarity
from lift_metrics.code._stub import check_stub_cap, stub_kind
from lift_metrics.code._style import style_parts
from lift_metrics.code._tests import (
    ExecutedTests,
    NormalizedTests,
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
    from lift_metrics.validation import CalibrationProfile

DEFAULT_CODE_QUALITY_WEIGHTS: Mapping[str, float] = {
    "syntax": 0.2,
    "tests": 0.4,
    "semantic": 0.3,
    "style": 0.1,
}
"""The ``"seed"`` profile's weights. Add a ``"structural"`` key to a weights mapping to score it."""

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
    profile : str
        The profile that scored it (``"validated"``, ``"seed"``, ``"shipped"``, ``"custom"``
        or a profile file's name).
    degenerate : str or None
        Why the answer is not an attempt at the code asked for
        (:func:`~lift_metrics.code.degenerate_kind`); ``None`` when it is one. The
        validated profile only.
    code : str or None
        The code that was scored and run, after :func:`~lift_metrics.code.extract_code` and
        the prompt for a body-only completion (the validated profile; ``None`` otherwise).

    Notes
    -----
    In the validated profile ``components`` holds ``syntax`` (1 when the scored code
    parses), ``tests`` (the share of tests passed, when there are tests), ``reference`` (the
    no-test reference score) and ``tests.wrong_answers``; ``weights`` is empty (the score is
    not a weighted sum).
    """

    score: float
    components: dict[str, float]
    weights: dict[str, float]
    execution: ExecutionResult | None
    tests_passed: int
    tests_total: int
    reasons: tuple[str, ...] = field(default=())
    stub: bool = False
    profile: str = "validated"
    degenerate: str | None = None
    code: str | None = None

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
            "profile": self.profile,
            "degenerate": self.degenerate,
            "code": self.code,
        }


def _weights(weights: Mapping[str, Any] | None, name: str = "weights") -> dict[str, float]:
    defaults = dict(DEFAULT_CODE_QUALITY_WEIGHTS)
    if isinstance(weights, Mapping) and "structural" in weights:
        defaults["structural"] = 0.0
    return normalize_weights(name, weights, defaults)


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


PROFILES: tuple[str, ...] = ("validated", "seed", "shipped")
"""The named profiles; a path to a profile file or a CalibrationProfile works too."""

FAIL_CEILING = 0.2
"""The most an output that fails every test can score (validated profile)."""
PASS_FLOOR = 0.25
"""The least an output that passes at least one test scores (validated profile)."""
RESEMBLANCE_SPAN = 0.3
"""How much of one passed test's share the reference resemblance can take away."""
DEGENERATE_SCORE = 0.0
"""What an answer that is not code scores (validated profile)."""


@dataclass(frozen=True)
class CodeQualityOptions:
    """How code_quality scores: one frozen object shared by every code scorer.

    Build it with :func:`code_quality_options` (which validates); the pure functions, the
    DSPy objects (:class:`~lift_metrics.dspy_metrics.CodeQuality`, ``EndToEnd``,
    ``Aggregate``, ``TestPassRate``) and the validation scorer all take one.

    Attributes
    ----------
    profile : str
        ``"validated"`` (the default), ``"seed"``, ``"shipped"``, ``"custom"`` (weights
        given) or the name of a profile file.
    weights : dict of str to float or None
        Normalised weights of the weighted-sum family; ``None`` for the validated profile.
    similarity_floor, wrong_answer_gate, stub_cap
        Options of the weighted-sum family (see :func:`code_quality`).
    timeout_s : float or None
        Per-execution time limit for the tests; ``None`` means the sandbox's own.

    Notes
    -----
    The entry point and the prompt describe the task, not the metric: they are per-call
    arguments (the DSPy objects read them from each example).
    """

    profile: str = "validated"
    weights: Mapping[str, float] | None = None
    similarity_floor: float = 0.0
    wrong_answer_gate: bool = False
    stub_cap: float | None = None
    timeout_s: float | None = None

    @property
    def validated(self) -> bool:
        """Whether this is the validated scoring (not a weighted sum)."""
        return self.weights is None

    def metric_options(self) -> dict[str, Any]:
        """The weighted-sum options as keyword arguments (empty for the validated profile)."""
        if self.weights is None:
            return {}
        options: dict[str, Any] = {}
        if self.similarity_floor:
            options["similarity_floor"] = self.similarity_floor
        if self.wrong_answer_gate:
            options["wrong_answer_gate"] = True
        if self.stub_cap is not None:
            options["stub_cap"] = self.stub_cap
        return options


def _load_calibrated(profile: Any, name: str) -> tuple[str, CalibrationProfile]:
    from lift_metrics.validation import CalibrationProfile
    from lift_metrics.validation.profiles import resolve_profile

    label = "custom" if isinstance(profile, CalibrationProfile) else str(profile)
    allowed = f"one of {PROFILES}, a profile file or a CalibrationProfile"
    return label, resolve_profile("code_quality", name, profile, allowed=allowed)


def code_quality_options(
    profile: str | os.PathLike[str] | CalibrationProfile | CodeQualityOptions | None = None,
    *,
    weights: Mapping[str, float] | None = None,
    similarity_floor: float | None = None,
    wrong_answer_gate: bool | None = None,
    stub_cap: float | None = None,
    timeout_s: float | None = None,
    name: str = "profile",
    weights_name: str = "weights",
) -> CodeQualityOptions:
    """Validate code_quality's options into one :class:`CodeQualityOptions`.

    Parameters
    ----------
    profile : str, path, CalibrationProfile, CodeQualityOptions or None, default None
        ``"validated"``, ``"seed"``, ``"shipped"`` (``datasets/labels/
        calibrated_code_quality.json``), the path of a profile file, a
        :class:`~lift_metrics.validation.CalibrationProfile` or ready options. None means
        ``"validated"``, unless a weighted-sum option is given (then ``"custom"``: the plain
        weighted sum with those options).
    weights, similarity_floor, wrong_answer_gate, stub_cap
        Weighted-sum options (see :func:`code_quality`). They cannot be combined with
        ``"validated"`` nor with a calibrated profile (its file sets them); with ``"seed"``
        they override the profile's. A floor of 0 and a gate of False are neutral: not given.
    timeout_s : float or None, default None
        Per-execution time limit; ``None`` keeps the profile's (the sandbox's own).
    name, weights_name : str, default "profile", "weights"
        The parameter names used in error messages.

    Returns
    -------
    CodeQualityOptions

    Raises
    ------
    TypeError, ValueError, FileNotFoundError
        An unknown profile name or a missing file, weighted options given with
        ``"validated"`` or a calibrated profile, or an invalid option value.

    Examples
    --------
    >>> code_quality_options().profile
    'validated'
    >>> seed = code_quality_options("seed")
    >>> seed.profile, seed.weights["tests"]
    ('seed', 0.4)
    >>> code_quality_options(stub_cap=0.1).profile
    'custom'
    >>> code_quality_options("shipped").stub_cap
    0.1
    """
    timeout = check_timeout(timeout_s)
    # 0.0 and False are the neutral values of the floor and the gate: not given
    weighted = {
        key: value
        for key, value in (
            ("weights", weights),
            ("similarity_floor", similarity_floor),
            ("wrong_answer_gate", wrong_answer_gate),
            ("stub_cap", stub_cap),
        )
        if value is not None
        and not (key == "wrong_answer_gate" and value is False)
        and not (key == "similarity_floor" and type(value) in (int, float) and value == 0)
    }
    if isinstance(profile, CodeQualityOptions):
        if weighted:
            raise ValueError(
                f"give {name} as CodeQualityOptions or the options {sorted(weighted)}, not both"
            )
        if timeout is None:
            return profile
        return CodeQualityOptions(**{**profile.__dict__, "timeout_s": timeout})
    if profile is None:
        profile = "custom" if weighted else "validated"
    if profile == "validated":
        if weighted:
            raise ValueError(
                f"{name}='validated' is not a weighted sum; it takes none of {sorted(weighted)} "
                "(use profile='seed' with them, or leave them out)"
            )
        return CodeQualityOptions(timeout_s=timeout)
    if profile in ("seed", "custom"):
        return CodeQualityOptions(
            profile=str(profile),
            weights=_weights(weights, weights_name),
            similarity_floor=check_similarity_floor(similarity_floor or 0.0),
            wrong_answer_gate=check_wrong_answer_gate(
                False if wrong_answer_gate is None else wrong_answer_gate
            ),
            stub_cap=check_stub_cap(stub_cap),
            timeout_s=timeout,
        )
    from lift_metrics.validation import CalibrationProfile

    if not isinstance(profile, str | os.PathLike | CalibrationProfile):
        raise TypeError(
            f"{name} must be one of {PROFILES}, a profile file, a CalibrationProfile or "
            f"CodeQualityOptions, got {type(profile).__name__}"
        )
    if isinstance(profile, str) and profile not in PROFILES and not os.path.exists(profile):
        raise ValueError(
            f"{name} must be one of {PROFILES} or the path of a profile file, got {profile!r}"
        )
    if weighted:
        raise ValueError(
            f"give {name} or the weighted-sum options {sorted(weighted)}, not both: the "
            f"profile sets them; got {name}={profile!r}"
        )
    label, calibrated = _load_calibrated(profile, name)
    options = calibrated.metric_options()
    return CodeQualityOptions(
        profile=label,
        weights=_weights(options["weights"], f"{name} weights"),
        similarity_floor=check_similarity_floor(options.get("similarity_floor", 0.0)),
        wrong_answer_gate=check_wrong_answer_gate(options.get("wrong_answer_gate", False)),
        stub_cap=check_stub_cap(options.get("stub_cap")),
        timeout_s=timeout,
    )


def _weighted(
    predicted: str,
    expected: str,
    normalized: NormalizedTests,
    options: CodeQualityOptions,
    entry: str | None,
    embedder: Embedder | None,
    sandbox: SandboxLike | None,
) -> CodeQualityBreakdown:
    """The weighted-sum family: seed, shipped and custom profiles."""
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
            predicted, normalized, entry_point=entry, sandbox=sandbox, timeout_s=options.timeout_s
        )

    def similarity() -> float:
        cosine = text_similarity(predicted, expected, embedder=embedder)
        return rescale_similarity(cosine, options.similarity_floor)

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


def read_answer(text: str, entry_point: str | None, prompt: str | None) -> str:
    """The code to score and run: extracted, and completed by the prompt when body-only."""
    return complete_with_prompt(extract_code(text, entry_point=entry_point), prompt, entry_point)


def run_answer(
    predicted: str,
    tests: NormalizedTests,
    *,
    entry_point: str | None,
    prompt: str | None,
    sandbox: SandboxLike | None,
    timeout_s: float | None,
) -> CodeQualityBreakdown:
    """Only the tests of an answer, read as the validated profile reads it (internal).

    For the pass/fail metrics: ``score`` is the share of tests passed (0 for a degenerate
    answer, which is not run); ``components`` holds ``syntax`` and ``tests``.
    """
    code = read_answer(predicted, entry_point, prompt)
    kind = degenerate_kind(predicted, entry_point=entry_point, prompt=prompt, function=True)
    components: dict[str, float] = {"syntax": 1.0 if code_features(code).parses else 0.0}
    if kind is not None:
        components["tests"] = 0.0
        return CodeQualityBreakdown(
            score=0.0,
            components=components,
            weights={},
            execution=None,
            tests_passed=0,
            tests_total=tests.count,
            reasons=(f"tests: not run: degenerate: {kind}",),
            profile="tests",
            degenerate=kind,
            code=code,
        )
    box = resolve_sandbox(sandbox) if components["syntax"] else None
    executed = run_tests(code, tests, entry_point=entry_point, sandbox=box, timeout_s=timeout_s)
    components["tests"] = executed.rate
    return CodeQualityBreakdown(
        score=executed.rate,
        components=components,
        weights={},
        execution=executed.execution,
        tests_passed=executed.passed,
        tests_total=tests.count,
        reasons=() if executed.rate >= 1.0 else (f"tests: {executed.reason}",),
        profile="tests",
        code=code,
    )


def validated_score(passed: int, total: int, resemblance: float) -> float:
    """The validated profile's score from the tests passed and the reference resemblance.

    Parameters
    ----------
    passed, total : int
        Tests passed (k) and tests given (n >= 1).
    resemblance : float
        The no-test reference score r in [0, 1].

    Returns
    -------
    float
        ``0.2 r`` when ``k = 0``; else ``0.25 + 0.75 (k - 1 + p) / n`` with
        ``p = 1 - 0.3 (1 - r)``.

    Examples
    --------
    >>> validated_score(0, 5, 1.0), validated_score(5, 5, 1.0)
    (0.2, 1.0)
    >>> round(validated_score(1, 5, 0.0), 3)  # one test passed beats any all-failing output
    0.355
    """
    r = min(1.0, max(0.0, float(resemblance)))
    if passed <= 0:
        return FAIL_CEILING * r
    position = 1.0 - RESEMBLANCE_SPAN * (1.0 - r)
    return min(1.0, PASS_FLOOR + (1.0 - PASS_FLOOR) * (passed - 1 + position) / total)


def _validated(
    predicted: str,
    expected: str,
    normalized: NormalizedTests,
    options: CodeQualityOptions,
    entry: str | None,
    prompt: str | None,
    embedder: Embedder | None,
    sandbox: SandboxLike | None,
) -> CodeQualityBreakdown:
    """The validated profile (see :func:`code_quality`'s Notes)."""
    from lift_metrics.code._reference import reference_score

    has_tests = normalized.count > 0
    code = read_answer(predicted, entry, prompt)
    reference_code = read_answer(expected, entry, prompt)
    candidate = code_features(code)
    reference = code_features(reference_code)
    # a function is asked for when there are tests, an entry point, or a reference that is
    # one function definition (snippet references, as in CoNaLa, are not)
    asked = entry if entry is not None else single_function(reference_code)
    wants_function = has_tests or asked is not None
    components: dict[str, float] = {"syntax": 1.0 if candidate.parses else 0.0}
    reasons: list[str] = []
    if code != predicted:
        reasons.append("read: code extracted from the answer (fences, prose or prompt)")
    if not reference.parses:
        reasons.append(f"reference: does not parse ({reference.error}); its text is compared")

    def result(score: float, **extra: Any) -> CodeQualityBreakdown:
        executed: ExecutedTests | None = extra.get("executed")
        return CodeQualityBreakdown(
            score=min(1.0, max(0.0, score)),
            components=components,
            weights={},
            execution=None if executed is None else executed.execution,
            tests_passed=0 if executed is None else executed.passed,
            tests_total=normalized.count,
            reasons=tuple(reasons),
            stub=bool(extra.get("stub", False)),
            profile=options.profile,
            degenerate=extra.get("degenerate"),
            code=code,
        )

    kind = degenerate_kind(predicted, entry_point=asked, prompt=prompt, function=wants_function)
    stub = candidate.parses and stub_kind(code, reference_code, asked) is not None
    if kind is None and wants_function and not has_tests and candidate.parses:
        if asked is not None and not defines(code, asked):
            kind = f"no function {asked!r} defined"
        else:
            placeholder = stub_kind(code, reference_code, asked)
            if placeholder is not None:
                kind = f"the entry function is a placeholder ({placeholder})"
    if kind is not None:
        components["reference"] = 0.0
        if has_tests:
            components["tests"] = 0.0
        reasons.append(f"degenerate: {kind}; scored {DEGENERATE_SCORE:g}")
        return result(DEGENERATE_SCORE, degenerate=kind, stub=stub)

    if has_tests:
        box = resolve_sandbox(sandbox) if candidate.parses else None

        def execute() -> ExecutedTests:
            return run_tests(
                code, normalized, entry_point=entry, sandbox=box, timeout_s=options.timeout_s
            )

        def resemblance() -> float:
            return reference_score(code, reference_code, embedder=embedder)

        ran, measured = _run_concurrently(
            execute, resemblance, overlap=candidate.parses and code != reference_code
        )
        executed = cast(ExecutedTests, ran)  # both were given, so both ran
        r = float(cast(float, measured))
        components["tests"] = executed.rate
        components["tests.wrong_answers"] = executed.wrong / normalized.count
        components["reference"] = r
        score = validated_score(executed.passed, normalized.count, r)
        if executed.passed == 0:
            reasons.append(
                f"tests: {executed.reason}; no test passed, so at most {FAIL_CEILING:g} "
                f"(reference resemblance {r:.3f})"
            )
        elif executed.passed < normalized.count:
            reasons.append(f"tests: {executed.reason}")
        if executed.passed and r < 1.0:
            reasons.append(f"reference: resemblance {r:.3f} to the reference")
        return result(score, executed=executed, stub=stub)

    r = reference_score(code, reference_code, embedder=embedder)
    components["reference"] = r
    score = r
    if not candidate.parses and wants_function:
        score = FAIL_CEILING * r
        reasons.append(
            f"syntax: {candidate.error}; code that cannot run scores at most {FAIL_CEILING:g}"
        )
    elif r < 1.0:
        reasons.append(f"reference: no tests; reference score {r:.3f}")
    return result(score, stub=stub)


def code_quality_breakdown(
    predicted: str,
    expected: str,
    tests: TestCases,
    *,
    profile: str | os.PathLike[str] | CalibrationProfile | CodeQualityOptions | None = None,
    weights: Mapping[str, float] | None = None,
    embedder: Embedder | None = None,
    sandbox: SandboxLike | None = None,
    entry_point: str | None = None,
    prompt: str | None = None,
    timeout_s: float | None = None,
    similarity_floor: float | None = None,
    wrong_answer_gate: bool | None = None,
    stub_cap: float | None = None,
) -> CodeQualityBreakdown:
    """Score generated code like :func:`code_quality` and say why.

    Parameters and raised errors are those of :func:`code_quality`.

    Returns
    -------
    CodeQualityBreakdown
        ``score`` plus ``components``, ``weights`` (empty for the validated profile), the
        sandbox ``execution`` with per-test outcomes, ``tests_passed``/``tests_total``,
        ``reasons``, ``stub``, ``profile``, ``degenerate`` and the scored ``code``.

    Examples
    --------
    >>> reference = "def add(a, b):\\n    return a + b\\n"
    >>> result = code_quality_breakdown("{code}", reference, [], entry_point="add")
    >>> result.score, result.degenerate
    (0.0, "template placeholder '{code}'")

    The ``"seed"`` weighted sum without a neural model (``structural`` instead of ``semantic``):

    >>> no_model = {"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1, "structural": 0.3}
    >>> result = code_quality_breakdown("def add(a, b) return a + b", reference, [],
    ...                                 weights=no_model)
    >>> result.score, result.components["syntax"], result.components["tests"], result.execution
    (0.0, 0.0, 0.0, None)
    >>> result.reasons[0]
    "syntax: SyntaxError: expected ':' (line 1)"
    """
    check_code("predicted", predicted)
    check_code("expected", expected)
    if prompt is not None:
        check_code("prompt", prompt)
    normalized = normalize_tests(tests)
    entry = check_entry_point(entry_point)
    options = code_quality_options(
        profile,
        weights=weights,
        similarity_floor=similarity_floor,
        wrong_answer_gate=wrong_answer_gate,
        stub_cap=stub_cap,
        timeout_s=timeout_s,
    )
    if embedder is not None and not callable(getattr(embedder, "embed", None)):
        raise TypeError(f"embedder must have an embed(texts) method, got {type(embedder).__name__}")
    if sandbox is not None:
        sandbox = resolve_sandbox(sandbox)
    return score_code(
        predicted,
        expected,
        normalized,
        options,
        entry_point=entry,
        prompt=prompt,
        embedder=embedder,
        sandbox=sandbox,
    )


def score_code(
    predicted: str,
    expected: str,
    tests: NormalizedTests,
    options: CodeQualityOptions,
    *,
    entry_point: str | None,
    prompt: str | None,
    embedder: Embedder | None,
    sandbox: SandboxLike | None,
) -> CodeQualityBreakdown:
    """The scoring core on validated inputs (internal; every code scorer calls it)."""
    if options.validated:
        return _validated(
            predicted, expected, tests, options, entry_point, prompt, embedder, sandbox
        )
    return _weighted(predicted, expected, tests, options, entry_point, embedder, sandbox)


def code_quality(
    predicted: str,
    expected: str,
    tests: TestCases,
    *,
    profile: str | os.PathLike[str] | CalibrationProfile | CodeQualityOptions | None = None,
    weights: Mapping[str, float] | None = None,
    embedder: Embedder | None = None,
    sandbox: SandboxLike | None = None,
    entry_point: str | None = None,
    prompt: str | None = None,
    timeout_s: float | None = None,
    similarity_floor: float | None = None,
    wrong_answer_gate: bool | None = None,
    stub_cap: float | None = None,
) -> float:
    """Quality of generated code against a reference and tests, in [0, 1].

    Parameters
    ----------
    predicted : str
        The generated answer: plain code, code in Markdown fences or among prose, or (with
        ``prompt``) a body-only completion.
    expected : str
        The reference (human-written) code. It need not parse (a fragment is scored on its
        text, and the reasons say so).
    tests : list of (dict, object) pairs, or str
        I/O cases ``[(kwargs, expected_output), ...]`` or a HumanEval-style assertion script;
        see :func:`~lift_metrics.code.test_pass_rate`. ``[]`` means no tests.
    profile : str, path, CalibrationProfile, CodeQualityOptions or None, default None
        ``"validated"`` (the default; see Notes), ``"seed"`` (the plain weighted sum
        ``0.2 syntax + 0.4 tests + 0.3 semantic + 0.1 style``), ``"shipped"`` (that sum with
        the weights, floor, gate and cap fitted in ``datasets/labels/
        calibrated_code_quality.json``), a profile file, a
        :class:`~lift_metrics.validation.CalibrationProfile`, or options from
        :func:`code_quality_options`.
    weights : mapping or None, default None
        Weighted-sum family only: ``syntax``/``tests``/``semantic``/``style``, optionally
        plus ``structural`` (:func:`~lift_metrics.code.structural_similarity`; use
        ``semantic=0, structural=0.3`` to score without a neural model); rescaled to sum to
        1. Giving it (or the three options below) without a profile selects the plain
        weighted sum with it (docs/code.md#profiles).
    embedder : Embedder or None, default None
        For the reference score and ``semantic``; ``None`` means the bundled
        all-MiniLM-L6-v2 (cached by text).
    sandbox : Sandbox or None, default None
        For the tests; ``None`` means :func:`lift_metrics.sandbox.get_default_sandbox`.
    entry_point : str or None, default None
        The function asked for, which the I/O cases call; ``None`` means the only top-level
        function. Given without tests, the answer must define it with a body.
    prompt : str or None, default None
        HumanEval-style prompt (signature and docstring). When given and the answer does
        not define the entry function itself, ``prompt + answer`` is scored (if it parses),
        so a body-only completion is read as the whole function. An answer that only echoes
        the prompt is degenerate.
    timeout_s : float or None, default None
        Per-execution time limit; ``None`` means the sandbox's own.
    similarity_floor : float or None, default None
        Weighted-sum family only: rescale ``semantic`` to ``max(0, (cos - floor) / (1 -
        floor))``; None means 0.
    wrong_answer_gate : bool or None, default None
        Weighted-sum family only: multiply ``semantic``, ``style`` and ``structural`` by
        ``1 - r`` (``r``: the share of tests that returned a wrong value).
    stub_cap : float or None, default None
        Weighted-sum family only: the most a placeholder entry function
        (:func:`~lift_metrics.code.is_stub`) can score.

    Returns
    -------
    float
        The score in [0, 1].

    Raises
    ------
    TypeError
        If ``predicted``/``expected``/``prompt`` is not a str, ``tests`` has the wrong
        shape, or another option has the wrong type.
    ValueError
        For an unknown profile, weighted-sum options given with ``"validated"`` or a
        calibrated profile, bad weights, ``timeout_s <= 0``, or an ``entry_point`` that is
        not an identifier.
    lift_metrics.sandbox.SandboxUnavailableError
        When the sandbox cannot run at all (a score that could not be computed is an error,
        never a 0).

    Notes
    -----
    The validated profile reads the answer as a person would
    (:func:`~lift_metrics.code.extract_code`, then ``prompt + answer`` for a body-only
    completion) and then:

    1. **Not code** (:func:`~lift_metrics.code.degenerate_kind`): empty text, a template
       placeholder (``{code}``) or prose scores 0; where a function is asked for (tests or
       an entry point), so do import lines only, a bare name, and the prompt or signature
       echoed with no body. Without tests but with an entry point, a missing entry function
       or a placeholder body (:func:`~lift_metrics.code.is_stub`) is degenerate too.
    2. **With tests** (n tests, k passed, r = the no-test reference score of the code
       against ``expected``, :func:`lift_metrics.code.reference_score`):

       .. math::

           s = \\begin{cases} 0.2\\,r & k = 0 \\\\
               0.25 + 0.75\\,\\dfrac{k - 1 + (1 - 0.3\\,(1 - r))}{n} & k \\ge 1 \\end{cases}

       An output that fails every test (wrong value, exception, timeout, crash, memory
       limit, ``sys.exit``, missing entry point, code that does not parse) scores at most
       0.2; one that passes a test at least 0.25 + 0.525 / n; one more passed test always
       scores higher whatever the resemblance; a correct solution identical to the
       reference scores 1.0. An assertion script counts as one test.
    3. **Without tests**: ``s = r``. Code that does not parse where a function is asked for
       cannot run: ``0.2 r``.

    The ``"seed"`` profile's weighted sum gives a ``pass`` stub 0.58 on average over the 164
    HumanEval problems with their check scripts (0.51 to 0.60; 0.564 on problem 0): no test
    passes, but syntax, style and the embedding resemblance still count. It also counts no
    tests as all tests passed. It is kept for comparison, not as an objective. A wrong
    prediction never raises; the reasons are in :func:`code_quality_breakdown`. Thread-safe:
    the sandbox runs while the calling thread computes the reference score.

    Examples
    --------
    A fake embedder keeps these examples free of the neural model:

    >>> import numpy as np
    >>> class Parallel:  # every text -> the same unit vector: cosine 1
    ...     def embed(self, texts):
    ...         return np.ones((len(texts), 2)) / np.sqrt(2)
    >>> reference = "def add(a, b):\\n    return a + b\\n"
    >>> tests = [({"a": 1, "b": 2}, 3), ({"a": 2, "b": 2}, 4)]
    >>> code_quality(reference, reference, tests, embedder=Parallel())
    1.0
    >>> fenced = "Sure:\\n```python\\n" + reference + "```\\n"
    >>> code_quality(fenced, reference, tests, embedder=Parallel())
    1.0
    >>> wrong = "def add(a, b):\\n    return a * b\\n"  # passes the second test only
    >>> 0.25 < code_quality(wrong, reference, tests, embedder=Parallel()) <= 0.625
    True
    >>> stub = "def add(a, b):\\n    pass\\n"
    >>> code_quality(stub, reference, tests, embedder=Parallel())
    0.0
    >>> round(code_quality(stub, reference, tests, embedder=Parallel(), profile="seed"), 3)
    0.583
    """
    return code_quality_breakdown(
        predicted,
        expected,
        tests,
        profile=profile,
        weights=weights,
        embedder=embedder,
        sandbox=sandbox,
        entry_point=entry_point,
        prompt=prompt,
        timeout_s=timeout_s,
        similarity_floor=similarity_floor,
        wrong_answer_gate=wrong_answer_gate,
        stub_cap=stub_cap,
    ).score
