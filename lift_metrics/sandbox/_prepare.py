"""Preparing an execution: candidate code and check scripts compiled, I/O cases checked.

Code objects are compiled here, in the parent, and travel marshalled to the worker, which then
does not compile. Check scripts are cached by source.
"""

from __future__ import annotations

import ast
import json
import marshal
import re
import threading
import warnings
from collections.abc import Sequence
from types import CodeType
from typing import Any

from lift_metrics import _pyast as pyast
from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.sandbox._judge import short
from lift_metrics.sandbox._worker import (
    _VALUE_CHARS,
    MAX_VALUE_BYTES,
    SCRIPT_FILENAME,
    AssertEntry,
    EncodeError,
    canonical,
    encode_value,
    has_unsupported,
)

MAX_INPUT_BYTES = 16 * 1024 * 1024
_compile_lock = threading.Lock()  # warnings.catch_warnings is not thread-safe


def _parse(source: str, filename: str) -> tuple[ast.Module, CodeType]:
    """Parse and compile ``source`` without executing it; SyntaxWarnings are silenced.

    The code object travels to the child (marshalled), which then does not compile: every
    step in a freshly forked child costs page faults. ``dont_inherit``: the code gets no
    ``__future__`` flag of this module (annotations are evaluated as in a plain module).
    """
    with _compile_lock, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = pyast.parse(source, filename)
        code = pyast.compile_tree(tree, filename, "exec")
    return tree, code


def _compile(source: str, filename: str) -> CodeType:
    """Compile ``source`` straight from its text, without syntax tree objects.

    It takes about half the time of :func:`_parse`. SyntaxWarnings are silenced, no
    ``__future__`` flag is inherited.
    """
    with _compile_lock, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(source, filename, "exec", dont_inherit=True)


_SCRIPT_CACHE_SIZE = 512
_script_cache: dict[str, tuple[bool, CodeType, bytes]] = {}
_script_cache_lock = threading.Lock()
_script_build_lock = threading.Lock()


def _compile_script(source: str) -> tuple[bool, CodeType, bytes]:
    """Return (defines check, code object, :func:`_assert_table` as marshal data) of a script.

    Cached, as scripts repeat (the same task's tests for every sample of it) and code objects are
    immutable. The table stays one bytes object in the request: a child unmarshals it only when a
    check fails.
    """
    with _script_cache_lock:
        cached = _script_cache.get(source)
    if cached is not None:
        return cached
    # One thread builds a script at a time: the threads of a scoring run all ask for the same
    # task's script at once, and building holds the GIL anyway (running it once instead of once
    # per thread costs no parallelism).
    with _script_build_lock:
        with _script_cache_lock:
            cached = _script_cache.get(source)
        if cached is not None:
            return cached
        tree, code = _parse(source, SCRIPT_FILENAME)
        marshal.dumps(code, 2)  # ValueError when nested too deeply to travel: the caller's to fix
        table = marshal.dumps(_assert_table(tree, source), 2)
        entry = ("check" in _top_level_functions(tree), code, table)
        with _script_cache_lock:
            if len(_script_cache) >= _SCRIPT_CACHE_SIZE:
                _script_cache.clear()
            _script_cache[source] = entry
    return entry


# the line breaks of ``ast.get_source_segment`` (``\r\n``, ``\r``, ``\n``; not ``\f``)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def _source_segment(lines: list[str], node: ast.expr | ast.stmt) -> str:
    """Return ``ast.get_source_segment(source, node) or ""`` given the source's ``lines``.

    ``lines`` is the source split once (:data:`_LINE`). The standard function splits the
    whole source again for every node, in Python: for a check script with many asserts that
    took far longer than parsing it.
    """
    end_lineno, end_col = node.end_lineno, node.end_col_offset
    if end_lineno is None or end_col is None:
        return ""
    first, last, col = node.lineno - 1, end_lineno - 1, node.col_offset
    if first == last:
        return lines[first].encode()[col:end_col].decode()
    head = lines[first].encode()[col:].decode()
    tail = lines[last].encode()[:end_col].decode()
    return "".join([head, *lines[first + 1 : last], tail])


def _assert_table(tree: ast.Module, source: str) -> tuple[AssertEntry, ...]:
    """Return what a child needs to explain a failed ``assert`` of a check script, per statement.

    One ``(first line, last line, text, kind, left, right)`` per assert, in ``ast.walk``
    order: the statement's text on one line (cut to 400 characters); ``kind`` is ``"cmp"``
    for a comparison of two operands (``left`` and ``right`` are their source, in
    parentheses), ``"const"`` for a constant and ``"value"`` otherwise (``left`` is the
    test's source). Computed once per script here, so that the child neither parses the
    script nor imports ``ast`` when a check fails. Each operand is sent compiled (an
    ``"eval"`` code object) where it compiles without a warning, so that the child need not
    compile it (in a freshly forked child, compiling costs more than running); otherwise as
    its source, which the child compiles.
    """
    table: list[AssertEntry] = []
    lines = _LINE.findall(source)

    def segment(node: ast.expr) -> str | CodeType:
        operand = f"({_source_segment(lines, node)})"
        # Warnings are recorded, not raised: the filter is process-wide, and another thread
        # warning meanwhile must not get an exception (it loses its warning, as under the
        # "ignore" filters above).
        try:
            with _compile_lock, warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                code = compile(operand, SCRIPT_FILENAME, "eval", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return operand  # the child compiles it, as it would without this table
        return operand if caught else code  # the child's compile would print the warning

    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        text = " ".join(_source_segment(lines, node).split())
        if len(text) > 2 * _VALUE_CHARS:
            text = text[: 2 * _VALUE_CHARS - 3] + "..."
        test = node.test
        if isinstance(test, ast.Compare) and len(test.comparators) == 1:
            kind, left, right = "cmp", segment(test.left), segment(test.comparators[0])
        elif isinstance(test, ast.Constant):
            kind, left, right = "const", "", ""
        else:
            kind, left, right = "value", segment(test), ""
        table.append((node.lineno, node.end_lineno or node.lineno, text, kind, left, right))
    return tuple(table)


def _top_level_functions(tree: ast.Module) -> list[str]:
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.append(node.name)
    return list(dict.fromkeys(names))


def _check_cases(tests: Any) -> tuple[list[tuple[dict[str, Any], Any]], list[Any]]:
    """Validate I/O cases (plain data, bounded size).

    Return them and the canonical forms of the expected values.
    """
    if isinstance(tests, str | bytes) or not isinstance(tests, Sequence):
        raise InputTypeError(
            "tests must be a sequence of (kwargs_dict, expected) pairs or an assertion script "
            f"(str), got {type(tests).__name__}"
        )
    cases: list[tuple[dict[str, Any], Any]] = []
    expected: list[Any] = []
    budget = MAX_INPUT_BYTES
    for i, case in enumerate(tests):
        if not isinstance(case, tuple | list) or len(case) != 2:
            raise InputTypeError(
                f"tests[{i}] must be a (kwargs_dict, expected) pair, got {short(repr(case), 80)}"
            )
        kwargs, want = case
        if not isinstance(kwargs, dict) or not all(
            isinstance(key, str) and key.isidentifier() for key in kwargs
        ):
            raise InputTypeError(
                f"tests[{i}][0] must be a dict of keyword arguments with identifier keys, "
                f"got {short(repr(kwargs), 80)}"
            )
        try:
            tree = encode_value(dict(kwargs), max_bytes=budget)
            want_tree = encode_value(want, max_bytes=MAX_VALUE_BYTES)
        except EncodeError as exc:
            raise InputValueError(f"tests[{i}] is too large or too deep to send: {exc}") from exc
        budget -= len(json.dumps(tree))
        for label, value_tree in (
            ("[0] (the inputs)", tree),
            ("[1] (the expected value)", want_tree),
        ):
            if has_unsupported(value_tree):
                raise InputTypeError(
                    f"tests[{i}]{label} must be plain data (None, bool, int, float, str, bytes, "
                    f"list, tuple, dict, set, frozenset), got {short(repr(case), 80)}"
                )
        cases.append((kwargs, want))
        expected.append(canonical(want_tree))
    return cases, expected
