"""The IR (intermediate representation) model and the ``ir_quality`` metric family.

An IR describes one function: its intent (plain English), its signature, an ordered list of
effects from a closed taxonomy (:class:`EffectKind`) and checkable constraints. The JSON shape
is shared with the datasets and the pipeline's constrained decoding.

Metrics (docs/ir.md; all in [0, 1], higher is better):

* :func:`intent_match` - embedding cosine of the intent descriptions;
* :func:`signature_match` - name, parameters compared in order, return type;
* :func:`structure_match` - normalised Levenshtein over effect kinds;
* :func:`constraint_match` - fraction of expected constraints satisfied, times the fraction
  of its own constraints the prediction keeps;
* :func:`ir_quality` / :func:`ir_quality_breakdown` - the weighted sum 0.3/0.3/0.2/0.2, times
  :data:`IR_UNUSABLE_FACTOR` (0.7) per usability defect (docs/ir.md#usability).

The IR gaming suite: :func:`ir_mutations` makes named mutations of an expected IR tagged
usable or unusable (:data:`IR_MUTATIONS`); :func:`mutation_inversions` lists the pairs a
metric ranks the wrong way round (docs/ir.md#the-ir-gaming-suite).

:func:`parse_ir` reads an IR from model output; :func:`callable_ir` repairs the parameter list
of a refused answer so that a pipeline can still write the function's header.

Importable from here but outside ``__all__``: the result type ``IRQualityBreakdown``, the
mutation type ``IRMutation`` and its registry ``IR_MUTATIONS``, the defaults
``DEFAULT_IR_WEIGHTS``, ``IR_UNUSABLE_FACTOR`` and ``IMPURE_EFFECTS``, the helper
``normalize_type_hint``, and ``IRParseError``, whose home is :mod:`lift_metrics.errors`.

Importing this package loads pydantic but not torch, sentence-transformers or dspy.
"""

from __future__ import annotations

from lift_metrics.errors import IRParseError as IRParseError
from lift_metrics.ir._constraints import constraint_satisfied
from lift_metrics.ir._metrics import (
    DEFAULT_IR_WEIGHTS as DEFAULT_IR_WEIGHTS,
    IR_UNUSABLE_FACTOR as IR_UNUSABLE_FACTOR,
    IRQualityBreakdown as IRQualityBreakdown,
    constraint_match,
    intent_match,
    ir_quality,
    ir_quality_breakdown,
    signature_match,
    structure_match,
)
from lift_metrics.ir._model import (
    IMPURE_EFFECTS as IMPURE_EFFECTS,
    IR,
    Constraint,
    Effect,
    EffectAbsentConstraint,
    EffectKind,
    EffectPresentConstraint,
    HasParameterConstraint,
    Intent,
    MaxEffectsConstraint,
    ParamCountConstraint,
    Parameter,
    PureConstraint,
    ReturnTypeConstraint,
    Signature,
    normalize_type_hint as normalize_type_hint,
)
from lift_metrics.ir._mutations import (
    IR_MUTATIONS as IR_MUTATIONS,
    IRMutation as IRMutation,
    ir_mutations,
    mutation_inversions,
)
from lift_metrics.ir._parse import callable_ir, parse_ir

__all__ = [
    "Constraint",
    "Effect",
    "EffectAbsentConstraint",
    "EffectKind",
    "EffectPresentConstraint",
    "HasParameterConstraint",
    "IR",
    "Intent",
    "MaxEffectsConstraint",
    "ParamCountConstraint",
    "Parameter",
    "PureConstraint",
    "ReturnTypeConstraint",
    "Signature",
    "callable_ir",
    "constraint_match",
    "constraint_satisfied",
    "intent_match",
    "ir_mutations",
    "ir_quality",
    "ir_quality_breakdown",
    "mutation_inversions",
    "parse_ir",
    "signature_match",
    "structure_match",
]
