"""Code as it runs: the text the no-test score compares, without what never executes.

Resemblance to a reference should come from code that runs. A comment, a docstring or a
statement after ``return`` changes nothing the program does, yet copying the reference into
one of them would make a plain text comparison climb (without tests, the reference pasted
after ``return None`` would score 0.902, the reference kept as comments 0.785, a correct rewrite
0.507). Both sides of a
pair are read through :func:`executed_view` before any feature is computed.

What is dropped:

- ``#`` comments, outside string literals, in any text (parseable or not). In a text with no
  line break (model output flattened to one line, as some data sets store it), a comment also
  ends at a run of three or more spaces, where a line break and its indentation were.
- For code that parses: every statement after one that always leaves its block
  (``return``, ``raise``, ``continue``, ``break``, an ``if``/``else`` whose branches all do, an
  ``if`` on a true constant whose body does); ``if``/``while`` on a false constant without an
  ``else``; and string literals standing alone as statements (docstrings and any other bare
  string: they run but do nothing). A body left empty keeps ``pass``; a text left empty (only
  comments or strings) is empty, and the no-test score reads it as no code.

The result stays as written (spans are cut out, nothing is reformatted) unless cutting left text
that no longer parses, where ``ast.unparse`` of the cut tree is used instead.
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

from lift_metrics import _pyast as pyast

_QUOTES = "'\""


@dataclass(frozen=True)
class ExecutedView:
    """A text with what never runs removed, and what was removed.

    Attributes
    ----------
    text : str
        The text to compare.
    comments : int
        ``#`` comments dropped.
    unreachable : int
        Statements dropped because they never run (after a ``return``, ``raise``,
        ``continue`` or ``break``; under a constant false condition).
    docstrings : int
        String literals standing alone as statements, dropped.
    parses : bool
        Whether the comment-free text parses (dead code is looked for only then).
    """

    text: str
    comments: int = 0
    unreachable: int = 0
    docstrings: int = 0
    parses: bool = False

    def notes(self) -> list[str]:
        """Say what was dropped, one phrase per kind (empty when nothing was)."""
        out = []
        if self.comments:
            out.append(f"{self.comments} comment(s)")
        if self.docstrings:
            out.append(f"{self.docstrings} docstring(s)")
        if self.unreachable:
            out.append(f"{self.unreachable} unreachable statement(s)")
        return out


def _string_end(text: str, start: int) -> int:
    """Return the index just past the string literal opening at ``start`` (best effort)."""
    quote = text[start]
    triple = text.startswith(quote * 3, start)
    i = start + (3 if triple else 1)
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if triple:
            if text.startswith(quote * 3, i):
                return i + 3
        elif char == quote:
            return i + 1
        elif char == "\n":  # an unterminated one-line string ends with its line
            return i
        i += 1
    return n


def _comment_spans(text: str) -> Iterator[tuple[int, int]]:
    """Yield ``(start, end)`` of each ``#`` comment outside string literals."""
    flattened = "\n" not in text
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in _QUOTES:
            i = _string_end(text, i)
        elif char == "#":
            end = text.find("\n", i)
            end = n if end < 0 else end
            if flattened:
                body = i + 1
                while body < end and text[body] in " #":  # the marker and its own spaces
                    body += 1
                gap = text.find("   ", body, end)
                end = end if gap < 0 else gap
            yield i, end
            i = end
        else:
            i += 1


def _tokenized_comment_spans(text: str) -> list[tuple[int, int]] | None:
    """Comment spans from Python's tokenizer (exact, for code that parses), or None."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return [
        (starts[t.start[0] - 1] + t.start[1], starts[t.end[0] - 1] + t.end[1])
        for t in tokens
        if t.type == tokenize.COMMENT
    ]


def _cut(text: str, spans: list[tuple[int, int]], fill: dict[int, str] | None = None) -> str:
    """Return ``text`` without ``spans`` (sorted, not overlapping); ``fill[start]`` replaces one."""
    fill = fill or {}
    out: list[str] = []
    last = 0
    for start, end in spans:
        out.append(text[last:start])
        out.append(fill.get(start, ""))
        last = end
    out.append(text[last:])
    return "".join(out)


def _parse(text: str) -> ast.Module | None:
    try:
        return pyast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _constant(node: ast.expr) -> bool | None:
    """Return the truth of a constant condition (``True``, ``0``, ``None``...), else None."""
    if isinstance(node, ast.Constant):
        return bool(node.value)
    return None


def _leaves(statement: ast.stmt) -> bool:
    """Whether control never passes from ``statement`` to the statement after it."""
    if isinstance(statement, ast.Return | ast.Raise | ast.Continue | ast.Break):
        return True
    if isinstance(statement, ast.If):
        truth = _constant(statement.test)
        if truth is True:
            return _block_leaves(statement.body)
        if truth is False:
            return _block_leaves(statement.orelse)
        return _block_leaves(statement.body) and _block_leaves(statement.orelse)
    return False


def _block_leaves(block: list[ast.stmt]) -> bool:
    return any(_leaves(statement) for statement in block)


def _dead(statement: ast.stmt) -> bool:
    """Tell whether a statement does nothing: a bare string, a branch that never runs."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return isinstance(statement.value.value, str)
    if isinstance(statement, ast.If | ast.While) and not statement.orelse:
        return _constant(statement.test) is False
    return False


def _child_blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    """Yield the statement lists directly inside ``node`` (bodies, ``else``, handlers, cases)."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
        yield part.body


@dataclass
class _Pruned:
    """What :func:`_prune` removed: the statements, and those a ``pass`` stands in for."""

    removed: list[ast.stmt]
    lone: list[ast.stmt]
    unreachable: int = 0
    docstrings: int = 0


def _prune(block: list[ast.stmt], found: _Pruned, *, top: bool = False) -> None:
    """Remove, in place, the statements of ``block`` (and the blocks inside it) that never run."""
    keep: list[ast.stmt] = []
    gone: list[ast.stmt] = []
    for k, statement in enumerate(block):
        if _dead(statement):
            gone.append(statement)
            continue
        keep.append(statement)
        if _leaves(statement):
            gone.extend(block[k + 1 :])
            break
    for statement in gone:
        if isinstance(statement, ast.Expr) and _dead(statement):
            found.docstrings += 1
        else:
            found.unreachable += 1
    found.removed.extend(gone)
    if gone and not keep and not top:  # a body cannot be empty; a module can
        found.lone.append(gone[0])
        keep = [ast.Pass()]
    block[:] = keep
    for statement in keep:
        for inner in _child_blocks(statement):
            _prune(inner, found)


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _position(text: str, starts: list[int], line: int, column: int) -> int:
    """Character index of a syntax-tree position (``column`` counts UTF-8 bytes)."""
    begin = starts[line - 1]
    row = text[begin : starts[line] if line < len(starts) else len(text)]
    return begin + len(row.encode("utf-8")[:column].decode("utf-8", errors="ignore"))


def _span(text: str, starts: list[int], statement: ast.stmt) -> tuple[int, int]:
    start = _position(text, starts, statement.lineno, statement.col_offset)
    decorators = getattr(statement, "decorator_list", None)
    if decorators:  # the span starts at the first decorator's "@"
        first = decorators[0]
        at = _position(text, starts, first.lineno, first.col_offset)
        start = text.rfind("@", starts[first.lineno - 1], at)
    end_line = statement.end_lineno or statement.lineno
    end = _position(text, starts, end_line, statement.end_col_offset or 0)
    return start, end


def _drop_dead_code(text: str, tree: ast.Module) -> tuple[str, int, int]:
    """Return ``text`` without unreachable statements and bare strings, and how many of each."""
    found = _Pruned([], [])
    _prune(tree.body, found, top=True)
    if not found.removed:
        return text, 0, 0
    starts = _offsets(text)
    spans = sorted(_span(text, starts, statement) for statement in found.removed)
    merged: list[tuple[int, int]] = []
    for start, end in spans:  # a block's statements in a row merge into one cut
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    fill = {_span(text, starts, statement)[0]: "pass" for statement in found.lone}
    cut = _cut(text, merged, fill)
    if _parse(cut) is None:
        cut = ast.unparse(tree)
    return cut, found.unreachable, found.docstrings


@functools.lru_cache(maxsize=8192)
def executed_view(text: str) -> ExecutedView:
    r"""Return ``text`` as it runs: comments, docstrings and unreachable statements removed.

    Parameters
    ----------
    text : str
        Code, whole or a fragment; it may fail to parse.

    Returns
    -------
    ExecutedView
        The remaining text and counts of what was dropped (see the module's docstring).

    Examples
    --------
    >>> executed_view("def f(x):\n    return None  # stop\n    return x + 1\n").text
    'def f(x):\n    return None  \n    \n'
    >>> executed_view("x = 1     # one     y = 2").text
    'x = 1        y = 2'
    """
    spans = list(_comment_spans(text))
    stripped = _cut(text, spans) if spans else text
    tree = _parse(stripped)
    if tree is None and spans and "\n" in text and _parse(text) is not None:
        # a string the scanner misread (an f-string nesting its own quotes): ask the tokenizer
        exact = _tokenized_comment_spans(text)
        if exact is not None:
            spans = exact
            stripped = _cut(text, spans)
            tree = _parse(stripped)
    if tree is None:
        return ExecutedView(stripped, comments=len(spans))
    cut, unreachable, docstrings = _drop_dead_code(stripped, tree)
    return ExecutedView(cut, len(spans), unreachable, docstrings, parses=True)
