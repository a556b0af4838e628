"""The intermediate representation (IR) of a function: intent, signature, effects, constraints.

The JSON shape is a contract shared with the datasets (``datasets/``), the labelled validation
data and the pipeline's constrained decoding; change it only together with them.
"""

from __future__ import annotations

import ast
import enum
import functools
import json
import keyword
import unicodedata
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lift_metrics import _pyast as pyast

__all__ = [
    "IR",
    "Constraint",
    "Effect",
    "EffectAbsentConstraint",
    "EffectKind",
    "EffectPresentConstraint",
    "HasParameterConstraint",
    "Intent",
    "MaxEffectsConstraint",
    "ParamCountConstraint",
    "Parameter",
    "PureConstraint",
    "ReturnTypeConstraint",
    "Signature",
    "normalize_type_hint",
]


class EffectKind(enum.StrEnum):
    """The eight kinds of effect an IR can list (a small, closed taxonomy).

    ========  =========================================================
    kind      meaning
    ========  =========================================================
    reads     reads input or external state (a file, a global, a table)
    writes    writes external state: files, globals, databases
    calls     calls another function or service worth naming
    raises    raises an exception (``target`` names it)
    returns   returns a value
    io        console or file I/O (print, input, open)
    network   network access
    mutation  mutates an argument in place
    ========  =========================================================

    Members compare equal to their string values (``EffectKind.IO == "io"``).
    """

    READS = "reads"
    WRITES = "writes"
    CALLS = "calls"
    RAISES = "raises"
    RETURNS = "returns"
    IO = "io"
    NETWORK = "network"
    MUTATION = "mutation"


#: Effect kinds that make a function impure (used by the ``pure`` constraint).
IMPURE_EFFECTS: frozenset[EffectKind] = frozenset(
    {EffectKind.IO, EffectKind.NETWORK, EffectKind.WRITES, EffectKind.MUTATION}
)

_FROZEN = ConfigDict(frozen=True)


class Intent(BaseModel):
    """What the function is for: one or two sentences of plain English."""

    model_config = _FROZEN

    description: str


class Parameter(BaseModel):
    """One parameter: its name and its annotation string (``None`` when unknown)."""

    model_config = _FROZEN

    name: str
    type_hint: str | None = None


def _identifier_problem(name: str) -> str | None:
    """Say why ``name`` cannot name a Python parameter (None when it can)."""
    if keyword.iskeyword(name):
        return f"{name!r} is a Python keyword"
    if not name.isidentifier():
        return f"{name!r} is not a Python identifier"
    return None


class Signature(BaseModel):
    """Function name, ordered parameters and return annotation (``None`` when unknown).

    Every parameter name must be a Python identifier that is not a keyword, and no two
    parameters may share a name: code generated from such a signature could not be defined
    (docs/ir.md#the-ir-model-rejects-what-cannot-be-called). The function name is not checked
    here: the pipeline reads ``"add(a, b)"`` as ``add``, and ``ir_quality`` scores a name
    other than the expected one as a usability defect.
    """

    model_config = _FROZEN

    name: str
    parameters: list[Parameter] = Field(default_factory=list)
    return_type: str | None = None

    @model_validator(mode="after")
    def _callable_parameters(self) -> Signature:
        seen: set[str] = set()
        for parameter in self.parameters:
            problem = _identifier_problem(parameter.name)
            if problem is not None:
                raise ValueError(f"parameter name {problem}")
            # Python reads an identifier in its NFKC form: fullwidth 'ａ' is the name 'a'
            read = unicodedata.normalize("NFKC", parameter.name)
            if read in seen:
                also = "" if read == parameter.name else f" (Python reads it as {read!r})"
                raise ValueError(f"parameter {parameter.name!r} is listed more than once{also}")
            seen.add(read)
        return self


class Effect(BaseModel):
    """One effect of the function, in the order it happens.

    ``target`` says what is read, written, called or raised (``"ValueError"``,
    ``"the input list"``); ``description`` is free text. Both are optional.
    """

    model_config = _FROZEN

    kind: EffectKind
    target: str | None = None
    description: str | None = None


class _ConstraintBase(BaseModel):
    """A constraint described by ``template`` filled with its fields (``str.format`` syntax)."""

    model_config = _FROZEN

    template: ClassVar[str]

    def describe(self) -> str:
        """Return a short English description of the constraint."""
        return self.template.format_map(vars(self))


class ReturnTypeConstraint(_ConstraintBase):
    """The signature returns ``type_hint`` (compared after :func:`normalize_type_hint`)."""

    template = "returns {type_hint}"

    kind: Literal["return_type"] = "return_type"
    type_hint: str


class HasParameterConstraint(_ConstraintBase):
    """A parameter called ``name`` exists (with annotation ``type_hint`` when that is given)."""

    kind: Literal["has_parameter"] = "has_parameter"
    name: str
    type_hint: str | None = None

    def describe(self) -> str:
        """Return a short English description of the constraint."""
        if self.type_hint is None:
            return f"has a parameter {self.name!r}"
        return f"has a parameter {self.name!r} of type {self.type_hint}"


class ParamCountConstraint(_ConstraintBase):
    """The signature has exactly ``count`` parameters."""

    template = "has exactly {count} parameter(s)"

    kind: Literal["param_count"] = "param_count"
    count: int = Field(ge=0)


class EffectPresentConstraint(_ConstraintBase):
    """At least one effect of kind ``effect`` is listed."""

    template = "lists a {effect.value!r} effect"

    kind: Literal["effect_present"] = "effect_present"
    effect: EffectKind


class EffectAbsentConstraint(_ConstraintBase):
    """No effect of kind ``effect`` is listed."""

    template = "lists no {effect.value!r} effect"

    kind: Literal["effect_absent"] = "effect_absent"
    effect: EffectKind


class MaxEffectsConstraint(_ConstraintBase):
    """At most ``limit`` effects are listed."""

    template = "lists at most {limit} effect(s)"

    kind: Literal["max_effects"] = "max_effects"
    limit: int = Field(ge=0)


class PureConstraint(_ConstraintBase):
    """No ``io``, ``network``, ``writes`` or ``mutation`` effect is listed."""

    template = "is pure (no io, network, writes or mutation effects)"

    kind: Literal["pure"] = "pure"


#: A constraint of any kind; pydantic picks the class from the ``kind`` field.
Constraint = Annotated[
    ReturnTypeConstraint
    | HasParameterConstraint
    | ParamCountConstraint
    | EffectPresentConstraint
    | EffectAbsentConstraint
    | MaxEffectsConstraint
    | PureConstraint,
    Field(discriminator="kind"),
]


def _simplify_schema(node: Any) -> Any:
    """Drop ``discriminator`` and prose (``title``/``description`` strings); ``oneOf`` -> ``anyOf``.

    A constraint's ``kind`` constant becomes required (pydantic needs the tag to choose the
    class, and a decoder must emit it).

    The prose is the Python docstrings, which only lengthen a prompt that shows the schema.
    """
    if isinstance(node, dict):
        result: dict[str, Any] = {}
        for key, value in node.items():
            if key == "discriminator" or (
                key in ("title", "description") and isinstance(value, str)
            ):
                continue
            result["anyOf" if key == "oneOf" else key] = _simplify_schema(value)
        kind = result.get("properties", {}).get("kind")
        if isinstance(kind, dict) and "const" in kind:  # the tag must be present to pick a class
            kind.pop("default", None)
            result["required"] = ["kind", *[r for r in result.get("required", []) if r != "kind"]]
        return result
    if isinstance(node, list):
        return [_simplify_schema(item) for item in node]
    return node


class IR(BaseModel):
    """Intermediate representation of one function: intent, signature, effects, constraints.

    Attributes
    ----------
    intent : Intent
        ``{"description": ...}``: what the function is for.
    signature : Signature
        Function name, parameters (name + annotation string or ``None``) and return type.
    effects : list of Effect
        Ordered effects, each of an :class:`EffectKind`. Missing means empty.
    constraints : list of Constraint
        Checkable constraints discriminated by ``kind``: ``return_type``, ``has_parameter``,
        ``param_count``, ``effect_present``, ``effect_absent``, ``max_effects``, ``pure``.
        Missing means empty. :func:`lift_metrics.ir.constraint_satisfied` decides each kind.

    Notes
    -----
    Models are frozen (immutable). ``IR.model_validate(dict)`` and
    ``IR.model_validate_json(str)`` are strict about the shape; for sloppy language-model
    output use :func:`lift_metrics.ir.parse_ir`. :meth:`json_schema` gives the JSON schema for
    constrained decoding.

    Examples
    --------
    >>> ir = IR.model_validate({
    ...     "intent": {"description": "Add two integers."},
    ...     "signature": {"name": "add", "parameters": [{"name": "a", "type_hint": "int"},
    ...                   {"name": "b", "type_hint": "int"}], "return_type": "int"},
    ...     "constraints": [{"kind": "param_count", "count": 2}, {"kind": "pure"}],
    ... })
    >>> [c.kind for c in ir.constraints]
    ['param_count', 'pure']
    >>> IR.model_validate_json(ir.model_dump_json()) == ir
    True
    """

    model_config = _FROZEN

    intent: Intent
    signature: Signature
    effects: list[Effect] = Field(default_factory=list)
    constraints: list[Constraint] = Field(default_factory=list)

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """Return the JSON schema of the IR, simplified for grammar-constrained decoding.

        Returns
        -------
        dict
            A draft 2020-12 JSON schema using only ``type``, ``properties``, ``required``,
            ``items``, ``enum``, ``const``, ``anyOf``, ``$ref``/``$defs``, ``default``,
            ``minimum`` and ``description``: the subset llama.cpp's JSON-schema grammar
            and OpenAI-style ``response_format`` accept. (pydantic's ``discriminator`` and
            ``title`` keywords are dropped and ``oneOf`` becomes ``anyOf``; the ``kind``
            constants keep the alternatives disjoint, so the meaning is unchanged.)

        Examples
        --------
        >>> schema = IR.json_schema()
        >>> schema["required"]
        ['intent', 'signature']
        >>> sorted(schema["$defs"]["EffectKind"]["enum"])
        ['calls', 'io', 'mutation', 'network', 'raises', 'reads', 'returns', 'writes']
        """
        return _schema_copy()


@functools.cache
def _schema_json() -> str:
    return json.dumps(_simplify_schema(IR.model_json_schema()))


def _schema_copy() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(_schema_json())
    return result


# --------------------------------------------------------------------------- type hints

_TYPING_ALIASES = {
    "List": "list",
    "Dict": "dict",
    "Set": "set",
    "FrozenSet": "frozenset",
    "Tuple": "tuple",
    "Type": "type",
    "Text": "str",
    "NoneType": "None",
    "Sequence": "Sequence",
    "Mapping": "Mapping",
    "Iterable": "Iterable",
    "Iterator": "Iterator",
    "Callable": "Callable",
    "Any": "Any",
}
_MODULE_PREFIXES = frozenset(
    {"typing", "t", "collections.abc", "abc", "builtins", "typing_extensions"}
)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _name(node: ast.expr) -> str:
    dotted = _dotted(node)
    if dotted is None:
        return _render(node)
    module, _, last = dotted.rpartition(".")
    if module in _MODULE_PREFIXES:
        dotted = last
    return _TYPING_ALIASES.get(dotted, dotted)


def _is_union(node: ast.expr) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return True
    return isinstance(node, ast.Subscript) and _name(node.value) in ("Union", "Optional")


def _union_members(node: ast.expr) -> list[str]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    if isinstance(node, ast.Subscript) and _name(node.value) in ("Union", "Optional"):
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        members = [m for arg in args for m in _union_members(arg)]
        if _name(node.value) == "Optional":
            members.append("None")
        return members
    rendered = _render(node)
    return rendered.split(" | ") if " | " in rendered else [rendered]


def _render(node: ast.expr) -> str:
    if isinstance(node, ast.Constant):
        if node.value is None:
            return "None"
        if isinstance(node.value, str):  # a forward reference: "Foo" -> Foo
            return normalize_type_hint(node.value) or repr(node.value)
        return "..." if node.value is Ellipsis else repr(node.value)
    if isinstance(node, ast.Name | ast.Attribute):
        return _name(node)
    if _is_union(node):
        members = sorted(set(_union_members(node)), key=lambda m: (m == "None", m))
        return " | ".join(members)
    if isinstance(node, ast.Subscript):
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        head = _name(node.value)
        if head == "Literal":  # literal values are values, not forward references
            return f"Literal[{', '.join(ast.unparse(a) for a in args)}]"
        return f"{head}[{', '.join(_render(a) for a in args)}]"
    if isinstance(node, ast.List):  # Callable[[int, str], bool]
        return f"[{', '.join(_render(e) for e in node.elts)}]"
    return ast.unparse(node)


@functools.lru_cache(maxsize=4096)
def normalize_type_hint(type_hint: str | None) -> str | None:
    """Return a canonical spelling of a Python annotation string, so that equal types compare equal.

    Parameters
    ----------
    type_hint : str or None
        An annotation as written (``"List[int]"``, ``"Optional[str]"``); ``None`` means unknown.

    Returns
    -------
    str or None
        The canonical spelling; ``None`` for ``None`` or an empty/blank string.

    Notes
    -----
    The rules, applied recursively:

    * whitespace is irrelevant (``"dict[str,int]"`` == ``"dict[str, int]"``);
    * ``typing.``/``t.``/``collections.abc.``/``builtins.`` prefixes are dropped;
    * ``List``/``Dict``/``Set``/``FrozenSet``/``Tuple``/``Type`` become ``list``/``dict``/...,
      ``Text`` becomes ``str``, ``NoneType`` becomes ``None``;
    * ``Optional[X]``, ``Union[X, None]``, ``X | None`` and ``None | X`` all become
      ``X | None``; union members are de-duplicated and sorted, with ``None`` last;
    * quoted forward references lose their quotes.

    Case is kept (``List`` and a user class ``list`` are different outside the typing
    aliases). A string that is not a Python expression is only stripped of surrounding
    whitespace and compared literally.

    Examples
    --------
    >>> normalize_type_hint("List[int]")
    'list[int]'
    >>> normalize_type_hint("Optional[Dict[str,int]]")
    'dict[str, int] | None'
    >>> normalize_type_hint("None | typing.Union[str, int]")
    'int | str | None'
    >>> normalize_type_hint("  ") is None
    True
    """
    if type_hint is None:
        return None
    text = type_hint.strip()
    if not text:
        return None
    try:
        tree = pyast.parse(text, mode="eval")
    except SyntaxError:
        return " ".join(text.split())
    return _render(tree.body)
