"""The usability defects of a predicted IR: what keeps the next step from using it.

The step after the IR writes the code and calls it by the IR's function name with the IR's
parameters; it needs the intent to say what to do. docs/ir.md#usability lists the defects;
:func:`lift_metrics.ir.ir_quality` multiplies its score by ``IR_UNUSABLE_FACTOR`` per defect.
"""

from __future__ import annotations

from lift_metrics.ir._constraints import constraint_satisfied
from lift_metrics.ir._intent import intent_defects
from lift_metrics.ir._model import IR, Constraint, HasParameterConstraint, ReturnTypeConstraint

__all__ = ["contradicted_constraints", "usability_defects"]

_INTENT_HINTS = {
    "generic": "the description names nothing specific to the task",
    "negated": "the description negates or sets aside what the function should do",
    "opposite": "the description asks for the opposite or the inverse of the task",
    "number": "the description changes a number, an ordinal or a quantity of the task",
    "truth": "the description answers the other truth value when the condition holds",
    "padded": "the description is so long that the embedding reads only its beginning",
    "confusable": "the description hides a letter of another script inside a word",
}


def contradicted_constraints(p: IR) -> list[Constraint]:
    """Return the predicted IR's own constraints that its own signature or effects break.

    A type constraint on an unknown (``None``) type does not contradict it: it adds the type.
    """
    hints = {q.name: q.type_hint for q in p.signature.parameters}
    found = []
    for c in p.constraints:
        if isinstance(c, ReturnTypeConstraint) and p.signature.return_type is None:
            continue
        if isinstance(c, HasParameterConstraint) and c.name in hints and hints[c.name] is None:
            continue
        if not constraint_satisfied(p, c):
            found.append(c)
    return found


def usability_defects(
    p: IR, e: IR, *, check_intent: bool, contradicted: list[Constraint]
) -> list[tuple[str, str]]:
    """Return (reason, hint) for each defect that keeps the next step from using the IR."""
    found: list[tuple[str, str]] = []
    if p.signature.name != e.signature.name:
        found.append(
            (
                f"the function name {p.signature.name!r} is not {e.signature.name!r}: "
                "code generated from it cannot be called by its name",
                f"the function name {p.signature.name!r} is not the name the caller uses",
            )
        )
    p_names = [q.name for q in p.signature.parameters]
    e_names = [q.name for q in e.signature.parameters]
    if p_names != e_names:
        found.append(
            (
                f"the parameters {p_names} are not {e_names} in this order: "
                "the caller's arguments do not fit",
                f"the parameters {p_names} are not the caller's parameters in the caller's order",
            )
        )
    if check_intent:
        for line in intent_defects(p.intent.description, e.intent.description):
            kind = line.partition(":")[0]
            found.append((f"intent {line}", f"intent {kind}: {_INTENT_HINTS[kind]}"))
    if contradicted:
        found.append(
            (
                f"{len(contradicted)} of its own constraint(s) contradict its signature or effects",
                f"{len(contradicted)} of its own constraint(s) contradict its signature or effects",
            )
        )
    return found
