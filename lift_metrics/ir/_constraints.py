"""Deciding whether an IR satisfies one constraint (docs/ir.md#constraint_match)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter

from lift_metrics.errors import InputTypeError
from lift_metrics.ir._model import (
    IMPURE_EFFECTS,
    IR,
    Constraint,
    EffectAbsentConstraint,
    EffectPresentConstraint,
    HasParameterConstraint,
    MaxEffectsConstraint,
    ParamCountConstraint,
    PureConstraint,
    ReturnTypeConstraint,
    normalize_type_hint,
)

__all__ = ["constraint_satisfied"]


@functools.cache
def _constraint_adapter() -> TypeAdapter[Constraint]:
    return TypeAdapter(Constraint)


def constraint_satisfied(predicted: IR, constraint: Constraint | Mapping[str, Any]) -> bool:
    """Decide whether the IR ``predicted`` satisfies one constraint.

    Parameters
    ----------
    predicted : IR
        The IR to check.
    constraint : Constraint or mapping
        A constraint model, or a dict in the IR JSON shape (``{"kind": "pure"}``).

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        When ``constraint`` is not a constraint.
    pydantic.ValidationError
        When a dict does not describe a known constraint kind.

    Notes
    -----
    ==============  ===========================================================================
    kind            satisfied when
    ==============  ===========================================================================
    return_type     normalised ``signature.return_type`` == normalised ``type_hint``
    has_parameter   a parameter has that name and, if ``type_hint`` is given, that type
    param_count     ``len(signature.parameters) == count``
    effect_present  some effect has kind ``effect``
    effect_absent   no effect has kind ``effect``
    max_effects     ``len(effects) <= limit``
    pure            no effect of kind io, network, writes or mutation
    ==============  ===========================================================================

    Type hints are compared with :func:`lift_metrics.ir.normalize_type_hint`, so
    ``List[int]`` satisfies ``list[int]`` and ``Optional[str]`` satisfies ``str | None``.

    Examples
    --------
    >>> ir = IR.model_validate({"intent": {"description": "Print x."},
    ...     "signature": {"name": "show", "parameters": [{"name": "x", "type_hint": "List[int]"}]},
    ...     "effects": [{"kind": "io"}]})
    >>> constraint_satisfied(ir, {"kind": "has_parameter", "name": "x", "type_hint": "list[int]"})
    True
    >>> constraint_satisfied(ir, {"kind": "pure"})
    False
    """
    if isinstance(constraint, Mapping):
        constraint = _constraint_adapter().validate_python(constraint)
    signature = predicted.signature
    kinds = [effect.kind for effect in predicted.effects]
    if isinstance(constraint, ReturnTypeConstraint):
        expected = normalize_type_hint(constraint.type_hint)
        return normalize_type_hint(signature.return_type) == expected
    if isinstance(constraint, HasParameterConstraint):
        wanted = normalize_type_hint(constraint.type_hint)
        return any(
            p.name == constraint.name
            and (wanted is None or normalize_type_hint(p.type_hint) == wanted)
            for p in signature.parameters
        )
    if isinstance(constraint, ParamCountConstraint):
        return len(signature.parameters) == constraint.count
    if isinstance(constraint, EffectPresentConstraint):
        return constraint.effect in kinds
    if isinstance(constraint, EffectAbsentConstraint):
        return constraint.effect not in kinds
    if isinstance(constraint, MaxEffectsConstraint):
        return len(kinds) <= constraint.limit
    if isinstance(constraint, PureConstraint):
        return not any(kind in IMPURE_EFFECTS for kind in kinds)
    raise InputTypeError(f"constraint must be an IR constraint, got {type(constraint).__name__}")
