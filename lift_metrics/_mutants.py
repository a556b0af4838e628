"""Programs one change away from a reference: the bugs a copy of it most often carries.

:func:`mutants` changes one thing in the entry function: an operator (``+`` for ``-``,
``<=`` for ``<``, ``and`` for ``or``, ``in`` for ``not in``, ...), an integer constant off
by one, ``min`` for ``max``, ``any`` for ``all``, ``True`` for ``False``, or a ``not``
dropped. The behaviour check (:mod:`lift_metrics.code._behaviour`) keeps the generated
inputs on which these differ from the reference, so that a copy with one such bug is told
apart; the gaming suite uses the operator and constant changes as its "one operator bug".
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from lift_metrics import _pyast as pyast

_SWAPS: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Add,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.And: ast.Or,
    ast.Or: ast.And,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_CALL_SWAPS = {"min": "max", "max": "min", "any": "all", "all": "any"}
_Other = ast.Name | ast.Constant | ast.UnaryOp | ast.Call

#: calls whose one argument stands in for them in a mutant (``sorted(x)`` -> ``x``)
_UNWRAPPED = frozenset({"sorted", "abs", "round", "int", "float", "str", "list", "tuple", "set"})
#: methods without arguments whose object stands in for them (``s.lower()`` -> ``s``)
_UNCALLED = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "casefold", "title"})


def entry_function(tree: ast.Module, name: str | None) -> ast.FunctionDef | None:
    """Return the top-level function ``name`` of ``tree`` (None: the only one), or None."""
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    if name is None:
        return functions[0] if len(functions) == 1 else None
    return next((node for node in functions if node.name == name), None)


def mutants(
    code: str, entry_point: str | None, *, limit: int = 12, more: bool = False
) -> list[str]:
    r"""Return programs that differ from ``code`` by one change in its entry function.

    Parameters
    ----------
    code : str
        The program (a reference).
    entry_point : str or None
        The function changed; None: the only top-level function.
    limit : int, default 12
        The most operator changes (integer constants are all changed, each by +1).
    more : bool, default False
        Also swap ``min``/``max`` and ``any``/``all`` calls and ``True``/``False``, drop
        each ``not``, and put the argument of a ``sorted``/``abs``/``int``/... call or the
        object of a ``.lower()``/``.strip()``/... call in the call's place (at most ``limit``
        of those too).

    Returns
    -------
    list of str
        Distinct programs, none equal to ``code``; empty when it does not parse or has no
        such function.

    Examples
    --------
    >>> mutants("def f(a, b):\n    return a + b\n", "f")
    ['def f(a, b):\n    return a - b\n']
    """
    try:
        tree = pyast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    fn = entry_function(tree, entry_point)
    if fn is None:
        return []
    numbers, operators, others = _sites(fn, more)
    programs: list[str] = []

    def keep() -> None:
        programs.append(ast.unparse(tree) + "\n")

    for number in numbers:  # a constant off by one
        value = int(number.value)  # type: ignore[arg-type]
        number.value = value + 1
        keep()
        number.value = value
    for node, index in operators[:limit]:
        _swap_operator(node, index, keep)
    for other in others[:limit]:
        if isinstance(other, ast.Name):
            name = other.id
            other.id = _CALL_SWAPS[name]
            keep()
            other.id = name
        elif isinstance(other, ast.Constant):
            other.value = not other.value
            keep()
            other.value = not other.value
        elif isinstance(other, ast.UnaryOp):
            _replace(fn, other, other.operand, keep)
        else:
            _replace(fn, other, _unwrapped(other), keep)
    original = ast.unparse(pyast.parse(code)) + "\n"
    return [program for program in dict.fromkeys(programs) if program != original]


def _sites(
    fn: ast.FunctionDef, more: bool
) -> tuple[
    list[ast.Constant],
    list[tuple[ast.AST, int]],
    list[_Other],
]:
    """Return what can change in ``fn``: integer constants, operators and (``more``) others.

    An operator is (node, index of the comparison's operator, or -1); the others are the
    min/max/any/all names called, the booleans and the ``not`` nodes.
    """
    numbers: list[ast.Constant] = []
    operators: list[tuple[ast.AST, int]] = []
    others: list[_Other] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp | ast.BoolOp) and type(node.op) in _SWAPS:
            operators.append((node, -1))
        elif isinstance(node, ast.Compare):
            operators.extend((node, i) for i, op in enumerate(node.ops) if type(op) in _SWAPS)
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            numbers.append(node)
        if not more:
            continue
        if isinstance(node, ast.Call) and _unwrapped(node) is not None:
            others.append(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in _CALL_SWAPS:
                others.append(node.func)
        elif (isinstance(node, ast.Constant) and type(node.value) is bool) or (
            isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
        ):
            others.append(node)
    return numbers, operators, others


def _swap_operator(node: ast.AST, index: int, keep: Callable[[], None]) -> None:
    """Swap one operator of ``node`` (its ``op``, or ``ops[index]`` of a comparison), keep."""
    if index < 0:
        original = node.op  # type: ignore[attr-defined]
        node.op = _SWAPS[type(original)]()  # type: ignore[attr-defined]
        keep()
        node.op = original  # type: ignore[attr-defined]
        return
    ops = node.ops  # type: ignore[attr-defined]
    changed = ops[index]
    ops[index] = _SWAPS[type(changed)]()
    keep()
    ops[index] = changed


def _unwrapped(call: ast.Call) -> ast.expr | None:
    """Return what stands in for ``call`` in a mutant (its argument or object), or None."""
    if call.keywords:
        return None
    func = call.func
    if isinstance(func, ast.Name) and func.id in _UNWRAPPED and len(call.args) == 1:
        argument = call.args[0]
        return None if isinstance(argument, ast.Starred) else argument
    if isinstance(func, ast.Attribute) and func.attr in _UNCALLED and not call.args:
        return func.value
    return None


def _replace(
    fn: ast.AST, target: ast.AST, replacement: ast.expr | None, keep: Callable[[], None]
) -> None:
    """Put ``replacement`` where ``target`` sits in ``fn``, keep, and put ``target`` back."""
    if replacement is None:
        return
    for parent in ast.walk(fn):
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, replacement)
                keep()
                setattr(parent, name, target)
                return
            if isinstance(value, list) and any(item is target for item in value):
                index = next(i for i, item in enumerate(value) if item is target)
                value[index] = replacement
                keep()
                value[index] = target
                return
