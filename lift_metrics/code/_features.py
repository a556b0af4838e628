"""Parse code once and extract everything the metrics need from its syntax tree.

Every sub-metric works from a :class:`CodeFeatures` computed by :func:`code_features`, which is
cached by the code string: a reference compared against many predictions is parsed once, and
``code_quality`` parses a prediction once for its syntax, style and structural components.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lift_metrics import _pyast as pyast
from lift_metrics._pyast import MAX_CODE_CHARS
from lift_metrics._text import clean_text
from lift_metrics.errors import InputTypeError, InputValueError

_SNAKE_CASE = re.compile(r"^_*[a-z][a-z0-9_]*$")
_DUNDER = re.compile(r"^__[a-z][a-z0-9_]*__$")
_UPPER_CASE = re.compile(r"^_*[A-Z][A-Z0-9_]*$")
_CAP_WORDS = re.compile(r"^_*[A-Z][a-zA-Z0-9]*$")


@dataclass(frozen=True)
class CodeFeatures:
    """What the metrics need to know about one piece of code (internal)."""

    error: str | None
    imports: frozenset[str]
    structure: tuple[str, ...]
    named: int
    well_named: int
    badly_named: tuple[str, ...]
    functions: int
    documented_functions: int
    has_module_docstring: bool

    @property
    def parses(self) -> bool:
        return self.error is None


def check_code(name: str, value: Any) -> str:
    """Return code as the metrics read it: valid Unicode (:func:`lift_metrics._text.clean_text`).

    Reject non-str code with a TypeError naming the parameter.
    """
    if not isinstance(value, str):
        raise InputTypeError(
            f"{name} must be a str of Python source code, got {type(value).__name__}"
        )
    return clean_text(value)


def over_limit(code: str) -> str | None:
    """Why ``code`` is too long to analyse (a short message), or ``None`` when it is not.

    Examples
    --------
    >>> over_limit("x = 1") is None
    True
    >>> over_limit("x" * 100_001)
    'code is 100,001 characters, over the 100,000 limit'
    """
    if len(code) <= MAX_CODE_CHARS:
        return None
    return f"code is {len(code):,} characters, over the {MAX_CODE_CHARS:,} limit"


def parse_error(code: str) -> str | None:
    """Why ``code`` does not parse (a short message), or ``None`` when it does."""
    return code_features(code).error


_CACHED_CODE_CHARS = 100_000  # longer code is not cached, so the cache stays small


def code_features(code: str) -> CodeFeatures:
    """Parse ``code`` (bounded in size) and extract its features; cached by the code string."""
    if len(code) <= _CACHED_CODE_CHARS:
        return _cached_features(code)
    return _features(code)


def pair_features(predicted: str, expected: str) -> tuple[CodeFeatures, CodeFeatures]:
    """Return the features of the predicted and the reference code (both checked str).

    A prediction that does not parse is scored by the caller; a reference that does not
    parse is the caller's mistake.

    Raises
    ------
    ValueError
        If ``expected`` does not parse.
    """
    reference = code_features(expected)
    if not reference.parses:
        raise InputValueError(
            f"expected must be valid Python, but it does not parse: {reference.error}"
        )
    return code_features(predicted), reference


def _features(code: str) -> CodeFeatures:
    too_long = over_limit(code)
    if too_long is not None:
        return _failed(too_long)
    try:
        tree = pyast.parse(code)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return _failed(f"SyntaxError: {exc.msg}{where}")
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        return _failed(f"{type(exc).__name__}: {exc}"[:200])
    return _extract(tree)


_cached_features = functools.lru_cache(maxsize=1024)(_features)


def _failed(message: str) -> CodeFeatures:
    return CodeFeatures(
        error=message,
        imports=frozenset(),
        structure=(),
        named=0,
        well_named=0,
        badly_named=(),
        functions=0,
        documented_functions=0,
        has_module_docstring=False,
    )


def _docstring_node(node: ast.AST) -> ast.AST | None:
    body = getattr(node, "body", None)
    if not body or not isinstance(body, list):
        return None
    first = body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


def _from_import_names(node: ast.ImportFrom) -> list[str]:
    """Return the dotted names a ``from ... import`` statement imports (``a.b`` or ``..b``)."""
    base = "." * node.level + (node.module or "")
    return [
        f"{base}.{alias.name}" if node.module else f"{base}{alias.name}" for alias in node.names
    ]


def _type_alias_names(tree: ast.Module) -> Iterator[str]:
    """Yield module-level names assigned in CapWords: type aliases (``Vector = list[float]``)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name) and _CAP_WORDS.match(target.id):
                    yield target.id


def _extract(tree: ast.Module) -> CodeFeatures:
    imports: set[str] = set()
    names: dict[tuple[str, str], bool] = {}
    functions = 0
    documented = 0
    docstrings: set[int] = set()
    module_doc = _docstring_node(tree)
    if module_doc is not None:
        docstrings.add(id(module_doc))

    def note(kind: str, name: str, ok: bool) -> None:
        names.setdefault((kind, name), ok)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imports.update(_from_import_names(node))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions += 1
            doc = _docstring_node(node)
            if doc is not None:
                documented += 1
                docstrings.add(id(doc))
            note(
                "function",
                node.name,
                bool(_SNAKE_CASE.match(node.name) or _DUNDER.match(node.name)),
            )
            all_args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            all_args += [a for a in (node.args.vararg, node.args.kwarg) if a is not None]
            for arg in all_args:
                note("argument", arg.arg, arg.arg == "_" or bool(_SNAKE_CASE.match(arg.arg)))
        elif isinstance(node, ast.ClassDef):
            doc = _docstring_node(node)
            if doc is not None:
                docstrings.add(id(doc))
            note("class", node.name, bool(_CAP_WORDS.match(node.name)))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            name = node.id
            ok = name == "_" or bool(_SNAKE_CASE.match(name) or _UPPER_CASE.match(name))
            note("variable", name, ok)
    for name in _type_alias_names(tree):
        names[("variable", name)] = True
    well = sum(names.values())
    bad = tuple(sorted(f"{kind} {name!r}" for (kind, name), ok in names.items() if not ok))
    return CodeFeatures(
        error=None,
        imports=frozenset(imports),
        structure=_structure(tree, docstrings),
        named=len(names),
        well_named=well,
        badly_named=bad,
        functions=functions,
        documented_functions=documented,
        has_module_docstring=module_doc is not None,
    )


def _label(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        return f"Constant:{type(node.value).__name__}"
    return type(node).__name__


def _structure(tree: ast.Module, docstrings: set[int]) -> tuple[str, ...]:
    """Pre-order node-type labels; identifiers, literal values, contexts and docstrings dropped."""
    labels: list[str] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if id(node) in docstrings or isinstance(node, ast.expr_context):
            continue
        labels.append(_label(node))
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return tuple(labels)
