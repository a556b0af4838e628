"""The type of a generated input's parameter: its hint, the values it is given, or its name.

A type is a :data:`Spec` tuple (``("int",)``, ``("list", ("str",))``); :func:`conforms` says
whether a value has it, so that no input outside the reference's type hints is proposed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any, cast

from lift_metrics import _pyast as pyast

# an unannotated parameter's type guessed from its name (only when nothing else tells)
_NAME_HINTS: tuple[tuple[str, Any], ...] = (
    (r"^(n|k|i|j|m|count|size|width|num|index|shift|limit|depth|base)$", ("int",)),
    (r"(text|string|word|name|line|sentence|title|s|prefix|sep)$", ("str",)),
    (r"^(words|names|strings|tokens|lines)$", ("list", ("str",))),
    (r"^(items|numbers|nums|values|lst|arr|array|xs|data|seq|l)$", ("list", ("int",))),
    (r"^(x|y|a|b|value|number|low|high|lo|hi)$", ("int",)),
)

Spec = tuple[Any, ...]
"""A type: ``("int",)``, ``("list", elem)``, ``("dict", key, value)``, ``("union", [..])``, ..."""


_SIMPLE = {"int": "int", "float": "float", "str": "str", "bool": "bool", "bytes": "bytes"}
_GENERIC: dict[str, Spec] = {
    "list": ("list", ("any",)),
    "List": ("list", ("any",)),
    "Sequence": ("list", ("any",)),
    "Iterable": ("list", ("any",)),
    "dict": ("dict", ("any",), ("any",)),
    "Dict": ("dict", ("any",), ("any",)),
    "Mapping": ("dict", ("any",), ("any",)),
    "tuple": ("tuple_of", ("any",)),
    "Tuple": ("tuple_of", ("any",)),
    "set": ("set", ("any",)),
    "Set": ("set", ("any",)),
    "frozenset": ("set", ("any",)),
}


def _spec(node: ast.expr | None) -> Spec:
    """Read a type hint (a syntax tree) as a :data:`Spec`; ``("any",)`` when unknown."""
    if node is None:
        return ("any",)
    if isinstance(node, ast.Constant):
        if node.value is None:
            return ("none",)
        if isinstance(node.value, str):  # a quoted hint
            try:
                return _spec(pyast.parse(node.value, mode="eval").body)
            except (SyntaxError, ValueError, RecursionError):
                return ("any",)
        return ("any",)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return ("union", [_spec(node.left), _spec(node.right)])
    if isinstance(node, ast.Name | ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        if name in _SIMPLE:
            return (_SIMPLE[name],)
        return _GENERIC.get(name, ("any",))
    if isinstance(node, ast.Subscript):
        return _subscript_spec(node)
    return ("any",)


def _subscript_spec(node: ast.Subscript) -> Spec:
    """Read ``list[int]``, ``dict[str, int]``, ``tuple[int, ...]``, ``Optional[str]``, ..."""
    outer = getattr(node.value, "id", getattr(node.value, "attr", ""))
    base = _GENERIC.get(outer, ("any",))[0]
    args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if outer == "Optional":
        return ("union", [_spec(args[0]), ("none",)])
    if outer == "Union":
        return ("union", [_spec(a) for a in args])
    if base in ("list", "set"):
        return (base, _spec(args[0]))
    if base == "dict" and len(args) == 2:
        return ("dict", _spec(args[0]), _spec(args[1]))
    if base == "tuple_of":
        if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is ...:
            return ("tuple_of", _spec(args[0]))
        return ("tuple", [_spec(a) for a in args])
    return ("any",)


def _of_value(value: Any) -> Spec:
    """Return the :data:`Spec` of a sample value (its first element for containers)."""
    if isinstance(value, bool):
        return ("bool",)
    for kind in (int, float, str, bytes):
        if isinstance(value, kind):
            return (kind.__name__,)
    if value is None:
        return ("none",)
    if isinstance(value, list):
        return ("list", _of_value(value[0]) if value else ("any",))
    if isinstance(value, tuple):
        return ("tuple", [_of_value(v) for v in value])
    if isinstance(value, set | frozenset):
        return ("set", _of_value(next(iter(value))) if value else ("any",))
    if isinstance(value, dict):
        if not value:
            return ("dict", ("any",), ("any",))
        key, item = next(iter(value.items()))
        return ("dict", _of_value(key), _of_value(item))
    return ("any",)


def _refine(spec: Spec, sample: Spec) -> Spec:
    """Fill the unknown parts of ``spec`` from a sample value's spec."""
    if spec[0] == "any":
        return sample
    if spec[0] == sample[0] and spec[0] in ("list", "set", "tuple_of"):
        return (spec[0], _refine(spec[1], sample[1]))
    if spec[0] == "dict" and sample[0] == "dict":
        return ("dict", _refine(spec[1], sample[1]), _refine(spec[2], sample[2]))
    return spec


def _known(spec: Spec) -> bool:
    """Whether a value can be drawn for ``spec`` (no unknown part at the top)."""
    return spec[0] != "any" and not (spec[0] == "union" and not any(_known(s) for s in spec[1]))


def conforms(value: Any, spec: Spec) -> bool:
    """Whether ``value`` has the type ``spec`` (an int is a float, as type checkers say)."""
    kind = spec[0]
    if kind == "any":
        return True
    if kind == "union":
        return any(conforms(value, s) for s in spec[1])
    simple: dict[str, tuple[type, ...]] = {
        "int": (int,),
        "str": (str,),
        "bool": (bool,),
        "bytes": (bytes,),
        "float": (int, float),
    }
    if kind in simple:
        return isinstance(value, simple[kind]) and (kind == "bool" or type(value) is not bool)
    if kind == "none":
        return value is None
    if kind in ("list", "tuple_of", "set"):
        shapes: dict[str, tuple[type, ...]] = {
            "list": (list,),
            "tuple_of": (tuple,),
            "set": (set, frozenset),
        }
        if not isinstance(value, shapes[kind]):
            return False
        return all(conforms(v, spec[1]) for v in cast(Iterable[Any], value))
    if kind == "tuple":
        return (
            isinstance(value, tuple)
            and len(value) == len(spec[1])
            and all(conforms(v, s) for v, s in zip(value, spec[1], strict=True))
        )
    if kind == "dict":
        return isinstance(value, dict) and all(
            conforms(k, spec[1]) and conforms(v, spec[2]) for k, v in value.items()
        )
    return True


def _specs(params: list[tuple[str, Spec]], samples: list[dict[str, Any]]) -> dict[str, Spec]:
    """Return each parameter's type: its hint, filled from sample values, else its name's."""
    specs = {}
    for name, spec in params:
        for sample in samples:
            spec = _refine(spec, _of_value(sample[name]))
        if not _known(spec):
            for pattern, hinted in _NAME_HINTS:
                if re.search(pattern, name, flags=re.IGNORECASE):
                    spec = hinted
                    break
        specs[name] = spec
    return specs
