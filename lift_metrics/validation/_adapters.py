"""Callables that score labelled items with the package's metrics, and metric look-up by name."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lift_metrics._checks import normalize_weights
from lift_metrics._test_cases import as_test_cases
from lift_metrics.errors import InputTypeError, InputValueError

BUILTIN_METRICS: tuple[str, ...] = ("ir_quality", "code_quality", "end_to_end", "reference_score")

FIELD_METRICS: tuple[str, ...] = ("chrf", "bleu", "codebleu", "exact_match")
"""The field's reference metrics ``lift-metrics validate --baselines`` adds (see
:class:`FieldMetricScorer`)."""


def _field(item: Any, key: str, scorer: str) -> Any:
    if not isinstance(item, Mapping):
        raise InputTypeError(f"{scorer} scores mapping items, got {type(item).__name__}")
    if key not in item:
        raise InputValueError(f"{scorer}: the item has no field {key!r} (it has {sorted(item)})")
    return item[key]


class _BreakdownScorer:
    """A scorer whose score is its :meth:`breakdown`'s ``score``."""

    def breakdown(self, item: Any) -> Any:
        """Return the metric's breakdown of one item."""
        raise NotImplementedError

    def __call__(self, item: Any) -> float:
        return float(self.breakdown(item).score)

    def group(self, item: Any) -> str | None:
        """Return the entry point, when given (pairs built on one function share a fold)."""
        value = item.get("entry_point") if isinstance(item, Mapping) else None
        return None if value is None else str(value)


class IRPairScorer(_BreakdownScorer):
    """Score an IR pair ``{"predicted": IR-JSON, "expected": IR-JSON}`` with ``ir_quality``.

    Calls ``ir_quality(IR.model_validate(predicted), IR.model_validate(expected),
    weights=..., embedder=...)``; the item keys are those of ``datasets/labels/ir_pairs.jsonl``.

    Parameters
    ----------
    weights : mapping, optional
        ``intent``/``signature``/``structure``/``constraints``; default 0.3 / 0.3 / 0.2 / 0.2.
    embedder : Embedder, optional
        Default the bundled all-MiniLM-L6-v2.
    similarity_floor : float, default 0.0
        Passed to ``ir_quality`` (opt-in rescaling of the intent cosine; 0 is the default
        metric). :func:`~lift_metrics.validation.load_profile` reads one with its weights.

    Examples
    --------
    >>> ir = {"intent": {"description": "Add a and b."}, "signature": {"name": "add"}}
    >>> scorer = IRPairScorer(weights={"intent": 0, "signature": 1, "structure": 1,
    ...                                "constraints": 1})
    >>> scorer({"predicted": ir, "expected": ir})
    1.0
    """

    name = "ir_quality"
    __name__ = "ir_quality"
    similarity_component = "intent"

    def __init__(
        self,
        *,
        weights: Mapping[str, float] | None = None,
        embedder: Any = None,
        similarity_floor: float = 0.0,
    ) -> None:
        from lift_metrics.ir import DEFAULT_IR_WEIGHTS
        from lift_metrics.similarity import check_similarity_floor

        self.weights = normalize_weights("weights", weights, DEFAULT_IR_WEIGHTS)
        self.embedder = embedder
        self.similarity_floor = check_similarity_floor(similarity_floor)
        self.components: tuple[str, ...] = tuple(DEFAULT_IR_WEIGHTS)
        self.default_weights: dict[str, float] = dict(DEFAULT_IR_WEIGHTS)

    def __repr__(self) -> str:
        floor = f", similarity_floor={self.similarity_floor:g}" if self.similarity_floor else ""
        return f"IRPairScorer(weights={self.weights}{floor})"

    def _pair(self, item: Any) -> tuple[Any, Any]:
        from lift_metrics.ir import IR

        predicted = _field(item, "predicted", "ir_quality")
        expected = _field(item, "expected", "ir_quality")
        as_ir = IR.model_validate_json if isinstance(predicted, str) else IR.model_validate
        as_expected = IR.model_validate_json if isinstance(expected, str) else IR.model_validate
        return as_ir(predicted), as_expected(expected)

    def breakdown(self, item: Any) -> Any:
        """Return the :class:`~lift_metrics.ir.IRQualityBreakdown` of one item."""
        from lift_metrics.ir import ir_quality_breakdown

        predicted, expected = self._pair(item)
        return ir_quality_breakdown(
            predicted,
            expected,
            weights=self.weights,
            embedder=self.embedder,
            similarity_floor=self.similarity_floor,
        )

    def group(self, item: Any) -> str | None:
        """Return the expected function's name (pairs built on one function share a fold)."""
        expected = item.get("expected") if isinstance(item, Mapping) else None
        if isinstance(expected, Mapping):
            signature = expected.get("signature")
            if isinstance(signature, Mapping):
                return str(signature.get("name"))
        return None

    def prefetch(self, items: Sequence[Any]) -> None:
        """Embed every intent in one batch (fills the embedder's cache); best effort."""
        if self.weights.get("intent", 0) <= 0:
            return
        from lift_metrics.similarity import resolve_embedder

        texts: list[str] = []
        for item in items:
            try:
                predicted, expected = self._pair(item)
            except Exception:  # a bad item is reported when it is scored
                continue
            texts += [predicted.intent.description, expected.intent.description]
        if texts:
            self.embedder = resolve_embedder(self.embedder)
            self.embedder.embed(list(dict.fromkeys(texts)))


class CodePairScorer(_BreakdownScorer):
    """Score a code pair with ``code_quality`` (item keys of ``code_pairs.jsonl``).

    Calls the code_quality scoring core on ``item["predicted_code"]`` and
    ``item["expected_code"]`` with the item's tests (``[{"inputs": {...}, "expected": v}]``
    cases as ``(kwargs, v)`` pairs, or a check script), ``entry_point`` and ``prompt``
    (both optional).

    Parameters
    ----------
    profile : str, path, CalibrationProfile, CodeQualityOptions or None, default None
        As in :func:`lift_metrics.code.code_quality` (None: ``"validated"``, or the plain
        weighted sum when a weighted-sum option is given).
    weights : mapping, optional
        Weighted-sum weights ``syntax``/``tests``/``semantic``/``style`` (optionally
        ``structural``).
    embedder, sandbox, timeout_s
        Passed to the scoring core.
    similarity_floor : float or None, default None
    wrong_answer_gate : bool or None, default None
    stub_cap : float or None, default None
        Weighted-sum options (0.0 and False count as not given).

    Examples
    --------
    >>> CodePairScorer().options.profile
    'validated'
    >>> CodePairScorer(profile="seed").weights["tests"]
    0.4
    """

    name = "code_quality"
    __name__ = "code_quality"
    similarity_component = "semantic"

    def __init__(
        self,
        *,
        profile: Any = None,
        weights: Mapping[str, float] | None = None,
        embedder: Any = None,
        sandbox: Any = None,
        timeout_s: float | None = None,
        similarity_floor: float | None = None,
        wrong_answer_gate: bool | None = None,
        stub_cap: float | None = None,
    ) -> None:
        from lift_metrics.code import DEFAULT_CODE_QUALITY_WEIGHTS, code_quality_options

        self.options = code_quality_options(
            profile,
            weights=weights,
            similarity_floor=similarity_floor or None,
            wrong_answer_gate=wrong_answer_gate or None,
            stub_cap=stub_cap,
            timeout_s=timeout_s,
        )
        self.weights: dict[str, float] = dict(self.options.weights or {})
        self.embedder = embedder
        self.sandbox = sandbox
        self.timeout_s = self.options.timeout_s
        self.similarity_floor = self.options.similarity_floor
        self.wrong_answer_gate = self.options.wrong_answer_gate
        self.stub_cap = self.options.stub_cap
        # the weighted-sum components, which ``--calibrate`` fits weights on
        self.components: tuple[str, ...] = tuple(DEFAULT_CODE_QUALITY_WEIGHTS)
        self.default_weights: dict[str, float] = dict(DEFAULT_CODE_QUALITY_WEIGHTS)

    def __repr__(self) -> str:
        if self.options.validated:
            return f"CodePairScorer(profile={self.options.profile!r})"
        floor = f", similarity_floor={self.similarity_floor:g}" if self.similarity_floor else ""
        gate = ", wrong_answer_gate=True" if self.wrong_answer_gate else ""
        cap = "" if self.stub_cap is None else f", stub_cap={self.stub_cap:g}"
        return f"CodePairScorer(weights={self.weights}{floor}{gate}{cap})"

    def breakdown(self, item: Any) -> Any:
        """Return the :class:`~lift_metrics.code.CodeQualityBreakdown` of one item."""
        from lift_metrics.code import code_quality_breakdown

        entry_point = item.get("entry_point") if isinstance(item, Mapping) else None
        prompt = item.get("prompt") if isinstance(item, Mapping) else None
        return code_quality_breakdown(
            _field(item, "predicted_code", "code_quality"),
            _field(item, "expected_code", "code_quality"),
            as_test_cases(item.get("tests")),
            profile=self.options,
            embedder=self.embedder,
            sandbox=self.sandbox,
            entry_point=entry_point or None,
            prompt=prompt or None,
        )

    def prefetch(self, items: Sequence[Any]) -> None:
        """Embed every predicted and expected snippet in one batch; best effort."""
        if not self.options.validated and self.weights.get("semantic", 0) <= 0:
            return
        from lift_metrics.similarity import resolve_embedder

        texts = [
            text
            for item in items
            if isinstance(item, Mapping)
            for text in (item.get("predicted_code"), item.get("expected_code"))
            if isinstance(text, str)
        ]
        if texts:
            self.embedder = resolve_embedder(self.embedder)
            self.embedder.embed(list(dict.fromkeys(texts)))


class EndToEndScorer(_BreakdownScorer):
    """Score an end-to-end item with ``end_to_end``.

    Item keys: ``predicted_ir``, ``expected_ir`` (IR JSON objects or text),
    ``predicted_code``, ``expected_code``, ``tests``, optional ``entry_point`` and
    ``latency_ms`` (absent: latency is left out and the other weights rescaled). No labelled
    end-to-end data ships with the package: pass your own file.

    Parameters
    ----------
    weights : mapping, optional
        ``ir``/``code``/``latency``; default 0.4/0.5/0.1.
    ir_weights, code_weights : mapping, optional
    code_profile : optional
        The code part's profile, as ``profile`` in :func:`lift_metrics.code.code_quality`.
    embedder, sandbox, timeout_s
    """

    name = "end_to_end"
    __name__ = "end_to_end"

    def __init__(
        self,
        *,
        weights: Mapping[str, float] | None = None,
        ir_weights: Mapping[str, float] | None = None,
        code_weights: Mapping[str, float] | None = None,
        code_profile: Any = None,
        embedder: Any = None,
        sandbox: Any = None,
        timeout_s: float | None = None,
    ) -> None:
        from lift_metrics.code import code_quality_options
        from lift_metrics.composite import DEFAULT_E2E_WEIGHTS

        self.weights = normalize_weights("weights", weights, DEFAULT_E2E_WEIGHTS)
        self.ir_weights = ir_weights
        self.code_weights = code_weights
        self.code_options = code_quality_options(
            code_profile, weights=code_weights, name="code_profile", weights_name="code_weights"
        )
        self.embedder = embedder
        self.sandbox = sandbox
        self.timeout_s = timeout_s
        self.components: tuple[str, ...] = tuple(DEFAULT_E2E_WEIGHTS)
        self.default_weights: dict[str, float] = dict(DEFAULT_E2E_WEIGHTS)

    def __repr__(self) -> str:
        return f"EndToEndScorer(weights={self.weights})"

    def breakdown(self, item: Any) -> Any:
        """Return the :class:`~lift_metrics.composite.EndToEndBreakdown` of one item."""
        from lift_metrics.composite import end_to_end_breakdown

        latency = item.get("latency_ms") if isinstance(item, Mapping) else None
        return end_to_end_breakdown(
            predicted_ir=_field(item, "predicted_ir", "end_to_end"),
            expected_ir=_field(item, "expected_ir", "end_to_end"),
            predicted_code=_field(item, "predicted_code", "end_to_end"),
            expected_code=_field(item, "expected_code", "end_to_end"),
            tests=as_test_cases(item.get("tests")),
            latency_ms=None if latency in (None, "") else float(latency),
            weights=self.weights,
            ir_weights=self.ir_weights,
            code_profile=self.code_options,
            embedder=self.embedder,
            sandbox=self.sandbox,
            entry_point=item.get("entry_point") or None,
            prompt=item.get("prompt") or None,
            timeout_s=self.timeout_s,
        )

    def prefetch(self, items: Sequence[Any]) -> None:
        """Nothing to batch ahead (kept for a uniform interface)."""


def _code_pair(item: Any, scorer: str) -> tuple[str, str]:
    """``(predicted, expected)`` code of an item.

    ``predicted_code``/``expected_code`` keys, or ``prediction``/``reference`` (the CoNaLa grades'
    own names).
    """
    if isinstance(item, Mapping) and "predicted_code" not in item and "prediction" in item:
        return str(_field(item, "prediction", scorer)), str(_field(item, "reference", scorer))
    return (
        str(_field(item, "predicted_code", scorer)),
        str(_field(item, "expected_code", scorer)),
    )


class ReferenceScorer(_BreakdownScorer):
    """Score a code pair without tests with :func:`lift_metrics.code.reference_score`.

    Item keys: ``predicted_code`` and ``expected_code`` (or ``prediction`` and
    ``reference``); tests, when the item has them, are not used.

    Examples
    --------
    >>> ReferenceScorer()({"predicted_code": "x = 1", "expected_code": "x = 1"})
    1.0
    """

    name = "reference_score"
    __name__ = "reference_score"

    def __init__(self, *, embedder: Any = None) -> None:
        self.embedder = embedder

    def __repr__(self) -> str:
        return "ReferenceScorer()"

    def breakdown(self, item: Any) -> Any:
        """Return the :class:`~lift_metrics.code.ReferenceScoreBreakdown` of one item."""
        from lift_metrics.code import reference_score_breakdown

        predicted, expected = _code_pair(item, "reference_score")
        return reference_score_breakdown(predicted, expected, embedder=self.embedder)

    def group(self, item: Any) -> str | None:
        """Return the reference snippet (predictions for one task share a fold)."""
        try:
            return _code_pair(item, "reference_score")[1]
        except (TypeError, ValueError):
            return None

    def prefetch(self, items: Sequence[Any]) -> None:
        """Embed every predicted and expected snippet in one batch; best effort."""
        from lift_metrics.similarity import resolve_embedder

        texts: list[str] = []
        for item in items:
            try:
                texts += _code_pair(item, "reference_score")
            except (TypeError, ValueError):
                continue
        if texts:
            self.embedder = resolve_embedder(self.embedder)
            self.embedder.embed(list(dict.fromkeys(texts)))


class FieldMetricScorer:
    """Score a code pair with one of the field's metrics (:data:`FIELD_METRICS`).

    ``chrf``, ``bleu``, ``codebleu`` and ``exact_match`` call
    :func:`lift_metrics.code.chrf_score`, :func:`~lift_metrics.code.bleu_score`,
    :func:`~lift_metrics.code.codebleu_score` and :func:`~lift_metrics.code.exact_match` on
    the item's ``predicted_code``/``expected_code`` (or ``prediction``/``reference``).

    Examples
    --------
    >>> FieldMetricScorer("exact_match")({"prediction": "x = 1", "reference": "x = 1"})
    1.0
    """

    def __init__(self, metric: str) -> None:
        from lift_metrics.code import bleu_score, chrf_score, codebleu_score, exact_match

        functions = {
            "chrf": chrf_score,
            "bleu": bleu_score,
            "codebleu": codebleu_score,
            "exact_match": exact_match,
        }
        if metric not in functions:
            raise InputValueError(f"metric must be one of {FIELD_METRICS}, got {metric!r}")
        self.name = self.__name__ = metric
        self.function = functions[metric]

    def __repr__(self) -> str:
        return f"FieldMetricScorer({self.name!r})"

    def __call__(self, item: Any) -> float:
        predicted, expected = _code_pair(item, self.name)
        return float(self.function(predicted, expected))


def builtin_scorer(
    name: str,
    *,
    weights: Mapping[str, float] | None = None,
    similarity_floor: float = 0.0,
    wrong_answer_gate: bool = False,
    stub_cap: float | None = None,
) -> IRPairScorer | CodePairScorer | EndToEndScorer | ReferenceScorer:
    """Return the item scorer for a metric name.

    The name is ``"ir_quality"``, ``"code_quality"``, ``"end_to_end"`` or ``"reference_score"``
    (which takes none of the options).

    ``code_quality`` scores with its default ``"validated"`` profile unless weighted-sum
    options are given (``weights``, a ``similarity_floor`` above 0, ``wrong_answer_gate``,
    ``stub_cap``: the plain weighted sum with them). ``similarity_floor`` applies to
    ``ir_quality`` and ``code_quality``; ``end_to_end`` takes none. A
    :class:`~lift_metrics.validation.CalibrationProfile` gives them all:
    ``builtin_scorer(name, **profile.metric_options())``.

    Raises
    ------
    ValueError
        An unknown ``name``, or an option given to a metric that does not take it.

    Examples
    --------
    >>> builtin_scorer("code_quality").options.profile
    'validated'
    >>> builtin_scorer("code_quality", weights={"syntax": 0, "tests": 1, "semantic": 0,
    ...                                         "style": 0}).weights["tests"]
    1.0
    >>> builtin_scorer("ir_quality", similarity_floor=0.44).similarity_floor
    0.44
    >>> builtin_scorer("code_quality", stub_cap=0.1).stub_cap
    0.1
    """
    if not isinstance(name, str):
        raise InputTypeError(f"name must be a metric name (str), got {type(name).__name__}")
    if name not in BUILTIN_METRICS:
        raise InputValueError(f"metric must be one of {BUILTIN_METRICS}, got {name!r}")
    if name != "code_quality" and (wrong_answer_gate is not False or stub_cap is not None):
        given = "wrong_answer_gate" if wrong_answer_gate is not False else "stub_cap"
        raise InputValueError(f"{given} applies to code_quality only, not to {name!r}")
    if name == "reference_score":
        if weights is not None or similarity_floor:
            raise InputValueError("reference_score takes no weights or similarity_floor")
        return ReferenceScorer()
    if name == "ir_quality":
        return IRPairScorer(weights=weights, similarity_floor=similarity_floor)
    if name == "code_quality":
        return CodePairScorer(
            weights=weights,
            similarity_floor=similarity_floor,
            wrong_answer_gate=wrong_answer_gate,
            stub_cap=stub_cap,
        )
    if similarity_floor:
        raise InputValueError("similarity_floor applies to ir_quality and code_quality only")
    return EndToEndScorer(weights=weights)


def import_metric(spec: str) -> Callable[..., Any]:
    """Import a metric named ``"package.module:attribute"`` (dotted attributes allowed).

    Raises
    ------
    ValueError
        If ``spec`` has no ``:``, names no callable, or its module cannot be imported (it
        is missing, or importing it raises).

    Examples
    --------
    >>> import_metric("lift_metrics.ir:ir_quality").__name__
    'ir_quality'
    """
    if not isinstance(spec, str):
        raise InputTypeError(
            f"spec must be a str 'package.module:attribute', got {type(spec).__name__}"
        )
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise InputValueError(
            f"a metric import path must look like 'package.module:attribute', got {spec!r}"
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # not found, or the module itself fails on import
        detail = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise InputValueError(
            f"cannot import module {module_name!r} of metric {spec!r} "
            f"({type(exc).__name__}: {detail})"
        ) from exc
    value: object = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise InputValueError(f"{module_name!r} has no attribute {attribute!r}") from None
    if not callable(value):
        raise InputValueError(f"{spec!r} is not callable (got {type(value).__name__})")
    return value
