"""ir_quality and its four sub-metrics, with the usability gates (docs/ir.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lift_metrics._checks import normalize_weights
from lift_metrics._records import breakdown_repr, record_dict
from lift_metrics.errors import InputTypeError
from lift_metrics.ir._constraints import constraint_satisfied
from lift_metrics.ir._model import IR, Constraint, normalize_type_hint
from lift_metrics.ir._parse import parse_ir
from lift_metrics.ir._usability import contradicted_constraints, usability_defects
from lift_metrics.similarity import (
    check_similarity_floor,
    rescale_similarity,
    sequence_similarity,
    text_similarity,
)

if TYPE_CHECKING:
    from lift_metrics.similarity import Embedder

__all__ = [
    "DEFAULT_IR_WEIGHTS",
    "IRQualityBreakdown",
    "IR_UNUSABLE_FACTOR",
    "constraint_match",
    "intent_match",
    "ir_quality",
    "ir_quality_breakdown",
    "signature_match",
    "structure_match",
]

#: Default weights: intent 0.3, signature 0.3, structure 0.2, constraints 0.2.
DEFAULT_IR_WEIGHTS: Mapping[str, float] = {
    "intent": 0.3,
    "signature": 0.3,
    "structure": 0.2,
    "constraints": 0.2,
}

#: What each usability defect multiplies the score by: a wrong function name, parameter names
#: that differ from the expected ones in order, a negated/opposite/generic intent, constraints
#: that contradict the IR itself (docs/ir.md#usability).
IR_UNUSABLE_FACTOR = 0.7

IRLike = IR | Mapping[str, Any] | str


def _as_ir(name: str, value: Any) -> IR:
    if isinstance(value, IR):
        return value
    if isinstance(value, Mapping | str | bytes):
        return parse_ir(value)
    raise InputTypeError(
        f"{name} must be an IR, a mapping or a JSON string, got {type(value).__name__}"
    )


def intent_match(
    predicted: IRLike,
    expected: IRLike,
    *,
    embedder: Embedder | None = None,
    similarity_floor: float = 0.0,
) -> float:
    """Cosine similarity of the two intent descriptions' embeddings, clipped to [0, 1].

    Parameters
    ----------
    predicted, expected : IR, mapping or JSON string
        The IRs to compare (non-IR values go through :func:`parse_ir`).
    embedder : Embedder, optional
        Any object with ``embed(texts) -> (n, dim)`` L2-normalised rows. Default: the
        process-wide bundled all-MiniLM-L6-v2
        (:func:`lift_metrics.similarity.get_default_embedder`), whose embedding cache is
        shared with ``semantic_similarity``.
    similarity_floor : float, default 0.0
        Opt-in rescaling ``max(0, (cos - floor) / (1 - floor))``
        (:func:`lift_metrics.similarity.rescale_similarity`), so that intents of nearby but
        different tasks do not score most of the points. 0 keeps the plain cosine, where
        they do.

    Returns
    -------
    float
        In [0, 1]; negative cosine scores 0.

    Raises
    ------
    ValueError
        If ``similarity_floor`` is outside [0, 1).

    Notes
    -----
    Delegates to :func:`lift_metrics.similarity.text_similarity` (one implementation of the
    cosine). Loading the default model imports torch on first use.
    """
    floor = check_similarity_floor(similarity_floor)
    p, e = _as_ir("predicted", predicted), _as_ir("expected", expected)
    cosine = text_similarity(p.intent.description, e.intent.description, embedder=embedder)
    return rescale_similarity(float(cosine), floor)


def _signature_parts(p: IR, e: IR) -> tuple[float, float, float, list[str], list[str]]:
    """Return the name, parameter and return-type scores, the reasons and the hints.

    Hints say the same as reasons but quote only the predicted IR (see
    :attr:`IRQualityBreakdown.hints`).
    """
    reasons: list[str] = []
    hints: list[str] = []
    ps, es = p.signature, e.signature
    name_score = 1.0 if ps.name == es.name else 0.0
    if not name_score:
        reasons.append(f"function name {ps.name!r}, expected {es.name!r}")
        hints.append(f"function name {ps.name!r} is not the expected name")
    p_list = [(q.name, normalize_type_hint(q.type_hint)) for q in ps.parameters]
    e_list = [(q.name, normalize_type_hint(q.type_hint)) for q in es.parameters]
    param_score = _ordered_parameter_score(p_list, e_list)
    if param_score < 1.0:
        missing = sorted(set(e_list) - set(p_list), key=str)
        extra = sorted(set(p_list) - set(e_list), key=str)
        detail = []
        hint = []
        if missing:
            detail.append("missing " + ", ".join(_show_param(x) for x in missing))
            hint.append(f"{len(missing)} expected parameter(s) missing or typed differently")
        if extra:
            detail.append("unexpected " + ", ".join(_show_param(x) for x in extra))
            hint.append("unexpected " + ", ".join(_show_param(x) for x in extra))
        if not missing and not extra:
            detail.append("in another order")
            hint.append("in another order")
        reasons.append(f"parameters (ordered match {param_score:.2f}): {'; '.join(detail)}")
        hints.append(f"parameters (ordered match {param_score:.2f}): {'; '.join(hint)}")
    p_ret, e_ret = normalize_type_hint(ps.return_type), normalize_type_hint(es.return_type)
    return_score = 1.0 if p_ret == e_ret else 0.5
    if return_score < 1.0:
        reasons.append(f"return type {p_ret}, expected {e_ret} (0.5 partial credit)")
        hints.append(f"return type {p_ret} is not the expected type (0.5 partial credit)")
    return name_score, param_score, return_score, reasons, hints


def _ordered_parameter_score(
    predicted: list[tuple[str, str | None]], expected: list[tuple[str, str | None]]
) -> float:
    """Position by position: same name 0.5, plus 0.5 for the same type (0.25 when one is unknown).

    Divided by the longer list's length; two empty lists match (1.0).
    """
    longest = max(len(predicted), len(expected))
    if longest == 0:
        return 1.0
    total = 0.0
    for (p_name, p_hint), (e_name, e_hint) in zip(predicted, expected, strict=False):
        if p_name != e_name:
            continue
        if p_hint == e_hint:
            total += 1.0
        elif p_hint is None or e_hint is None:
            total += 0.75
        else:
            total += 0.5
    return total / longest


def _show_param(param: tuple[str, str | None]) -> str:
    name, hint = param
    return name if hint is None else f"{name}: {hint}"


def signature_match(predicted: IRLike, expected: IRLike) -> float:
    """Mean of name match, ordered parameter match and return-type match.

    Parameters
    ----------
    predicted, expected : IR, mapping or JSON string

    Returns
    -------
    float
        ``(name + params + ret) / 3`` in [0, 1]; the lowest possible value is 1/6.

    Notes
    -----
    * name: 1 if the function names are equal, else 0;
    * params: the parameter lists compared position by position, since the caller passes
      its arguments by position and by name: at each position, 0 for another name, else 0.5
      for the name plus 0.5 for the same type, 0.25 when one of the two types is unknown
      (``null``), 0 for another type; the sum is divided by the longer list's length. Two
      empty lists give 1.0 (two zero-argument signatures match,
      docs/decisions.md#jaccard-of-two-empty-sets-is-1); a reordered list matches nowhere
      (docs/decisions.md#parameters-are-compared-in-order);
    * ret: 1 if the normalised return types are equal, else 0.5 (partial credit,
      docs/decisions.md#wrong-return-type-keeps-05).

    Type hints are normalised with :func:`lift_metrics.ir.normalize_type_hint`.
    :func:`ir_quality` also counts a wrong name and a parameter list with other names or
    another order as usability defects (docs/ir.md#usability).

    Examples
    --------
    >>> a = {"intent": "", "signature": {"name": "f", "return_type": "int",
    ...      "parameters": [{"name": "x", "type_hint": "List[int]"}]}}
    >>> b = {"intent": "", "signature": {"name": "f", "return_type": "str",
    ...      "parameters": [{"name": "x", "type_hint": "list[int]"}]}}
    >>> signature_match(a, b)  # (1 + 1 + 0.5) / 3
    0.8333333333333334
    """
    name_score, param_score, return_score, _, _ = _signature_parts(
        _as_ir("predicted", predicted), _as_ir("expected", expected)
    )
    return (name_score + param_score + return_score) / 3


def _effect_kinds(ir: IR) -> list[str]:
    return [effect.kind.value for effect in ir.effects]


def structure_match(predicted: IRLike, expected: IRLike) -> float:
    """Normalised Levenshtein similarity of the two effect-kind sequences (order matters).

    Parameters
    ----------
    predicted, expected : IR, mapping or JSON string

    Returns
    -------
    float
        ``1 - distance(P, E) / max(len(P), len(E))`` in [0, 1]; 1.0 when both IRs list
        no effects.

    Notes
    -----
    ``distance`` is the edit distance (insertions, deletions, substitutions, each cost 1)
    between the sequences of effect kinds, computed by
    :func:`lift_metrics.similarity.sequence_similarity` (rapidfuzz on the lists of
    kind names). Targets and descriptions are not compared.

    Examples
    --------
    >>> base = {"intent": "", "signature": {"name": "f"}}
    >>> p = {**base, "effects": [{"kind": "reads"}, {"kind": "returns"}]}
    >>> e = {**base, "effects": [{"kind": "reads"}, {"kind": "raises"}, {"kind": "returns"}]}
    >>> round(structure_match(p, e), 4)  # one insertion over three effects
    0.6667
    """
    p = _effect_kinds(_as_ir("predicted", predicted))
    e = _effect_kinds(_as_ir("expected", expected))
    return sequence_similarity(p, e)


def _failed_constraints(p: IR, e: IR) -> list[Constraint]:
    return [c for c in e.constraints if not constraint_satisfied(p, c)]


def constraint_match(predicted: IRLike, expected: IRLike) -> float:
    r"""Share of the expected constraints the prediction meets, times the share of its own it keeps.

    Parameters
    ----------
    predicted, expected : IR, mapping or JSON string

    Returns
    -------
    float
        In [0, 1]; 1.0 when the expected IR has no constraints (nothing is asked) and the
        predicted IR breaks none of its own.

    Notes
    -----
    .. math::

        \frac{|\{c \in E_c : P \models c\}|}{|E_c|} \cdot
        \frac{|\{c \in P_c : P \models c\}|}{|P_c|}

    Each constraint is decided by :func:`constraint_satisfied`. A predicted constraint that
    the predicted IR itself breaks (``param_count: 99`` next to two parameters) is a
    contradiction: it lowers this score, and :func:`ir_quality` counts it as a usability
    defect (docs/ir.md#usability). Either factor is 1.0 for an empty list.

    Examples
    --------
    >>> p = {"intent": "", "signature": {"name": "f", "return_type": "int"}}
    >>> e = {"intent": "", "signature": {"name": "f"},
    ...      "constraints": [{"kind": "return_type", "type_hint": "int"},
    ...                      {"kind": "param_count", "count": 1}]}
    >>> constraint_match(p, e)
    0.5
    """
    p, e = _as_ir("predicted", predicted), _as_ir("expected", expected)
    return _constraint_score(p, e)[0]


def _constraint_score(p: IR, e: IR) -> tuple[float, list[Constraint], list[Constraint]]:
    failed, contradicted = _failed_constraints(p, e), contradicted_constraints(p)
    met = 1.0 - len(failed) / len(e.constraints) if e.constraints else 1.0
    consistent = 1.0 - len(contradicted) / len(p.constraints) if p.constraints else 1.0
    return met * consistent, failed, contradicted


@dataclasses.dataclass(frozen=True, repr=False)
class IRQualityBreakdown:
    """Result of :func:`ir_quality_breakdown`: the score, its parts, and what lost points.

    Attributes
    ----------
    score : float
        ``usability * sum(weights[k] * components[k])`` in [0, 1].
    components : dict
        ``{"intent", "signature", "structure", "constraints"}`` -> sub-metric value.
    weights : dict
        The normalised weights used (sum to 1).
    failed_constraints : tuple of str
        Descriptions of the expected constraints the prediction does not satisfy.
    reasons : tuple of str
        One line per lost point, prefixed with the sub-metric (``"signature: ..."``).
    hints : tuple of str
        The same lines without the expected IR's text: which part is wrong, quoting only
        the predicted IR (its description, names, types and effect kinds) and the kinds of
        the violated constraints. Feedback for an optimizer reads these, so that it cannot
        copy the expected IR out of the feedback (docs/ir.md#hints).
    usability : float
        ``IR_UNUSABLE_FACTOR ** len(defects)``: 1.0 when the next step can use the IR.
    defects : tuple of str
        What keeps the next step from using the IR (docs/ir.md#usability): a wrong function
        name, parameter names that differ in order, a generic, negated or opposite intent,
        constraints that contradict the IR itself.
    """

    score: float
    components: dict[str, float]
    weights: dict[str, float]
    failed_constraints: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()
    usability: float = 1.0
    defects: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return breakdown_repr(self)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return record_dict(self)


def ir_quality_breakdown(
    predicted: IRLike,
    expected: IRLike,
    *,
    weights: Mapping[str, float] | None = None,
    embedder: Embedder | None = None,
    similarity_floor: float = 0.0,
) -> IRQualityBreakdown:
    """Compute :func:`ir_quality` and keep each sub-metric and the reasons for lost points.

    Parameters
    ----------
    predicted, expected : IR, mapping or JSON string
        Non-IR values go through :func:`parse_ir` (an :class:`IRParseError` propagates).
    weights : mapping, optional
        Keys exactly ``intent``, ``signature``, ``structure``, ``constraints``; rescaled to
        sum to 1. Default 0.3 / 0.3 / 0.2 / 0.2.
    embedder : Embedder, optional
        Passed to :func:`intent_match`.
    similarity_floor : float, default 0.0
        Passed to :func:`intent_match` (opt-in; 0 is the default metric). The calibrated
        profile ``datasets/labels/calibrated_ir_quality.json`` pairs a floor with fitted
        weights; load it with :func:`lift_metrics.validation.load_profile`.

    Returns
    -------
    IRQualityBreakdown

    Raises
    ------
    ValueError, TypeError
        For bad ``weights`` (the message names the key) or inputs that are not IRs.

    Notes
    -----
    When the intent weight is 0 the embedder is not called (no model is loaded),
    ``components["intent"]`` is ``nan`` and the intent is not checked for defects;
    components with weight 0 do not enter the score.

    The weighted sum is multiplied by ``usability = IR_UNUSABLE_FACTOR ** k`` (0.7 per
    defect) for the ``k`` defects that keep the step that writes code from using the IR
    (docs/ir.md#usability): a function name other than the expected one; parameter names
    that differ from the expected ones or their order; an intent that is generic, negated or
    asks for the opposite task (:attr:`IRQualityBreakdown.defects` says which word decided);
    constraints of its own that its own signature or effects break. So an IR with a defect
    scores at most 0.7, and below a usable IR that only lacks its type hints (0.83 on the
    project's tasks).

    Examples
    --------
    >>> ir = {"intent": {"description": "Add a and b."},
    ...       "signature": {"name": "add", "parameters": [{"name": "a"}, {"name": "b"}]}}
    >>> other = {**ir, "signature": {"name": "plus", "parameters": [{"name": "a"}, {"name": "b"}]}}
    >>> w = {"intent": 0, "signature": 1, "structure": 1, "constraints": 1}
    >>> result = ir_quality_breakdown(other, ir, weights=w)
    >>> round(result.score, 4), result.usability  # (2/3 + 1 + 1) / 3, times 0.7
    (0.6222, 0.7)
    >>> result.defects
    ("the function name 'plus' is not 'add': code generated from it cannot be called by its name",)
    """
    w = normalize_weights("weights", weights, DEFAULT_IR_WEIGHTS)
    p, e = _as_ir("predicted", predicted), _as_ir("expected", expected)
    reasons: list[str] = []
    hints: list[str] = []
    floor = check_similarity_floor(similarity_floor)
    intent = (
        intent_match(p, e, embedder=embedder, similarity_floor=floor)
        if w["intent"] > 0
        else float("nan")
    )
    if w["intent"] > 0 and intent < 1.0:
        reasons.append(
            f"intent: similarity {intent:.2f} between {p.intent.description!r} "
            f"and expected {e.intent.description!r}"
        )
        hints.append(
            f"intent: the description {p.intent.description!r} has similarity {intent:.2f} "
            "to the expected intent"
        )
    name_score, param_score, return_score, sig_reasons, sig_hints = _signature_parts(p, e)
    signature = (name_score + param_score + return_score) / 3
    reasons.extend(f"signature: {r}" for r in sig_reasons)
    hints.extend(f"signature: {h}" for h in sig_hints)
    structure = structure_match(p, e)
    if structure < 1.0:
        reasons.append(
            f"structure: effect kinds {_effect_kinds(p)}, expected {_effect_kinds(e)} "
            f"(similarity {structure:.2f})"
        )
        hints.append(
            f"structure: effect kinds {_effect_kinds(p)} differ from the expected effects "
            f"(similarity {structure:.2f})"
        )
    constraints, failed, contradicted = _constraint_score(p, e)
    failed_text = tuple(c.describe() for c in failed)
    reasons.extend(f"constraints: violated: {text}" for text in failed_text)
    hints.extend(f"constraints: violated: a {c.kind} constraint" for c in failed)
    for c in contradicted:
        reasons.append(f"constraints: its own constraint '{c.describe()}' contradicts the IR")
        hints.append(f"constraints: its own constraint '{c.describe()}' contradicts the IR")
    components = {
        "intent": intent,
        "signature": signature,
        "structure": structure,
        "constraints": constraints,
    }
    defects = usability_defects(p, e, check_intent=w["intent"] > 0, contradicted=contradicted)
    usability = IR_UNUSABLE_FACTOR ** len(defects)
    reasons.extend(f"usability: {line}" for line, _ in defects)
    hints.extend(f"usability: {hint}" for _, hint in defects)
    weighted = sum(w[key] * components[key] for key in w if w[key] > 0)
    return IRQualityBreakdown(
        score=min(max(weighted * usability, 0.0), 1.0),
        components=components,
        weights=w,
        failed_constraints=failed_text,
        reasons=tuple(reasons),
        hints=tuple(hints),
        usability=usability,
        defects=tuple(line for line, _ in defects),
    )


def ir_quality(
    predicted: IRLike,
    expected: IRLike,
    *,
    weights: Mapping[str, float] | None = None,
    embedder: Embedder | None = None,
    similarity_floor: float = 0.0,
) -> float:
    r"""Weighted IR quality in [0, 1] (docs/ir.md#ir_quality).

    Parameters
    ----------
    predicted, expected : IR, mapping or JSON string
        The generated IR and the ground truth.
    weights : mapping, optional
        Keys ``intent``, ``signature``, ``structure``, ``constraints``; default
        0.3 / 0.3 / 0.2 / 0.2. Rescaled to sum to 1.
    embedder : Embedder, optional
        For :func:`intent_match`; default the bundled all-MiniLM-L6-v2.
    similarity_floor : float, default 0.0
        For :func:`intent_match`: opt-in rescaling of the intent cosine (0: off).

    Returns
    -------
    float

    Notes
    -----
    .. math::

        0.7^{k} \, (0.3\,\text{intent} + 0.3\,\text{signature} + 0.2\,\text{structure}
        + 0.2\,\text{constraints})

    with ``k`` the number of usability defects (wrong function name, parameters with other
    names or in another order, a generic, negated or opposite intent, self-contradicting
    constraints; docs/ir.md#usability). See :func:`ir_quality_breakdown` for the parts, the
    defects and the reasons for lost points. An IR the model rejects (duplicate or keyword
    parameter names) raises :class:`IRParseError`; :class:`~lift_metrics.dspy_metrics.IRQuality`
    scores it 0.

    Examples
    --------
    >>> ir = {"intent": {"description": "Add a and b."}, "signature": {"name": "add"}}
    >>> ir_quality(ir, ir, weights={"intent": 0, "signature": 1, "structure": 1, "constraints": 1})
    1.0
    """
    return ir_quality_breakdown(
        predicted, expected, weights=weights, embedder=embedder, similarity_floor=similarity_floor
    ).score
