"""Placeholder ("stub") detection on the syntax tree, for code_quality's opt-in ``stub_cap``."""

from __future__ import annotations

import ast
import functools

from lift_metrics import _pyast as pyast
from lift_metrics._pyast import MAX_CODE_CHARS
from lift_metrics.code._executed import executed_view
from lift_metrics.code._features import check_code
from lift_metrics.code._tests import check_entry_point

_CACHED_CODE_CHARS = 100_000  # as in _features: longer code is analysed but not cached


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _is_literal(node: ast.expr) -> bool:
    """Tell whether ``node`` is a constant (``0``, ``-1``, ``None``, ``""``, ``[]``, ``(1, 2)``)."""
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    args = function.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    return names


def placeholder_kind(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    r"""Return what kind of placeholder the function's body is, or ``None`` when it does some work.

    A placeholder body, once a leading docstring is set aside, is empty (docstring only),
    only ``pass`` / ``...`` statements, a single ``raise NotImplementedError`` (with or
    without arguments), a single ``return`` of nothing or of a literal constant, or a single
    ``return`` of one of the function's own parameters unchanged.

    Examples
    --------
    >>> tree = ast.parse("def f(x):\n    raise NotImplementedError('later')\n")
    >>> placeholder_kind(tree.body[0])
    'raise NotImplementedError'
    >>> placeholder_kind(ast.parse("def f(x):\n    return x + 1\n").body[0]) is None
    True
    """
    body = list(function.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    if not body:
        return "docstring only"
    if all(
        isinstance(s, ast.Pass)
        or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and s.value.value is ...)
        for s in body
    ):
        return "pass"
    if len(body) != 1:
        return None
    (statement,) = body
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
            return "raise NotImplementedError"
        return None
    if isinstance(statement, ast.Return):
        value = statement.value
        if value is None or _is_literal(value):
            return "return a constant"
        if isinstance(value, ast.Name) and value.id in _parameters(function):
            return "return an argument unchanged"
    return None


def _analyse(code: str) -> tuple[bool, dict[str, str | None]]:
    """Return (parses, top-level function name -> its placeholder kind or None)."""
    if len(code) > MAX_CODE_CHARS:
        return False, {}
    try:
        tree = pyast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False, {}
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    kinds = {n.name: placeholder_kind(n) for n in functions}
    if all(kind is not None for kind in kinds.values()):
        return True, kinds
    # A stub padded with code that never runs (the reference pasted after `return None`) is
    # still a stub: read the functions again as they run (lift_metrics/code/_executed.py).
    view = executed_view(code)
    if view.unreachable or view.docstrings:
        executed = pyast.parse(view.text)
        for node in executed.body:
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and kinds.get(node.name, "") is None
                and (kind := placeholder_kind(node)) is not None
            ):
                kinds[node.name] = f"{kind}; the rest never runs"
    return True, kinds


_cached_analyse = functools.lru_cache(maxsize=1024)(_analyse)


def _functions(code: str) -> tuple[bool, dict[str, str | None]]:
    return _cached_analyse(code) if len(code) <= _CACHED_CODE_CHARS else _analyse(code)


def _entry(functions: dict[str, str | None], entry_point: str | None) -> str | None:
    if entry_point is not None:
        return entry_point if entry_point in functions else None
    return next(iter(functions)) if len(functions) == 1 else None


def stub_kind(predicted: str, expected: str | None, entry_point: str | None) -> str | None:
    """Return the placeholder kind of ``predicted``'s entry function when it is a stub, else None.

    Internal: :func:`is_stub` with the reason (for ``code_quality_breakdown``'s reasons).
    """
    parses, functions = _functions(predicted)
    name = _entry(functions, entry_point) if parses else None
    kind = None if name is None else functions[name]
    if kind is None:
        return None
    if expected is not None:
        ok, reference = _functions(expected)
        reference_name = _entry(reference, entry_point) if ok else None
        if reference_name is not None and reference[reference_name] is not None:
            return None  # the reference is itself this short: a match, not a placeholder
    return kind


def is_stub(predicted: str, expected: str | None = None, *, entry_point: str | None = None) -> bool:
    r"""Whether the predicted entry function is a placeholder that does no work.

    Parameters
    ----------
    predicted : str
        The generated Python code.
    expected : str or None, default None
        The reference code. When its entry function is itself placeholder-shaped (a function
        that really just returns a constant or its argument), the prediction is not a stub.
    entry_point : str or None, default None
        The function to inspect; ``None`` means the only top-level function.

    Returns
    -------
    bool
        True when ``predicted`` parses, defines the entry function, and that function's body
        (a leading docstring set aside) is one of: nothing, only ``pass``/``...``, a single
        ``raise NotImplementedError``, a single ``return`` of nothing or a literal constant
        (``None``, ``0``, ``-1``, ``""``, ``[]``, ``{}``), or a single ``return`` of one of
        its own parameters unchanged; and the reference's entry function is not.

    Raises
    ------
    TypeError
        If ``predicted`` or ``expected`` is not a str (or None), or ``entry_point`` is not a
        str or None.
    ValueError
        If ``entry_point`` is not a Python identifier.

    Notes
    -----
    Code that does not parse, lacks the entry function, or has several top-level functions
    and no ``entry_point`` is never a stub here (syntax and tests already score it). A body
    with any real statement (an assignment, a loop, a call) is not a stub, however wrong.

    Examples
    --------
    >>> is_stub("def f(x):\n    '''Double x.'''\n    pass\n")
    True
    >>> is_stub("def f(x):\n    return x\n", "def f(x):\n    return 2 * x\n")
    True
    >>> is_stub("def f(x):\n    return x\n", "def f(x):\n    return x\n")
    False
    >>> is_stub("def f(x):\n    return x * 3\n")
    False
    """
    predicted = check_code("predicted", predicted)
    if expected is not None:
        expected = check_code("expected", expected)
    return stub_kind(predicted, expected, check_entry_point(entry_point)) is not None
