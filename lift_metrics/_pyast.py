"""Thread-safe ``ast.parse`` and compilation of syntax trees.

CPython 3.11 before 3.11.8 keeps one recursion-depth counter per interpreter for converting
syntax trees between C and Python (CPython issue gh-106905). Two threads doing so at once can
trip ``SystemError: AST constructor recursion depth mismatch``. Metrics run in DSPy's thread
pools, so every conversion in this package goes through one lock.
"""

from __future__ import annotations

import ast
import threading
from types import CodeType
from typing import Literal, overload

_LOCK = threading.RLock()


@overload
def parse(source: str, filename: str = ..., mode: Literal["exec"] = ...) -> ast.Module: ...
@overload
def parse(source: str, filename: str = ..., *, mode: Literal["eval"]) -> ast.Expression: ...
def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """:func:`ast.parse`, one thread at a time.

    Examples
    --------
    >>> type(parse("x = 1")).__name__
    'Module'
    """
    with _LOCK:
        return ast.parse(source, filename, mode)


def compile_tree(tree: ast.Module, filename: str, mode: str = "exec") -> CodeType:
    """``compile(tree, filename, mode, dont_inherit=True)``, one thread at a time.

    Examples
    --------
    >>> exec(compile_tree(parse("y = 2"), "<example>"), namespace := {})
    >>> namespace["y"]
    2
    """
    with _LOCK:
        return compile(tree, filename, mode, dont_inherit=True)
