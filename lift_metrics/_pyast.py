"""Thread-safe ``ast.parse`` and compilation of syntax trees.

CPython 3.11 before 3.11.8 keeps one recursion-depth counter per interpreter for converting
syntax trees between C and Python (CPython issue gh-106905). Two threads doing so at once can
trip ``SystemError: AST constructor recursion depth mismatch``. Metrics run in DSPy's thread
pools, so every conversion in this package goes through one lock.

:func:`parses` tells, cached, whether text is Python that parses; no text over
:data:`MAX_CODE_CHARS`, the bound on code that the code metrics read, is parsed.
"""

from __future__ import annotations

import ast
import functools
import threading
from types import CodeType
from typing import Literal, overload

_LOCK = threading.RLock()

MAX_CODE_CHARS = 100_000
"""The most characters of code the metrics analyse (``lift_metrics.code.MAX_CODE_CHARS``).

Longer text is not parsed, linted, embedded or compared with the reference: it scores 0 on
each of those, with the reason (``over_limit`` of the code metrics), and ``code_quality``
neither reads nor runs it. This bounds the time of every analysis: one ``code_quality`` call
on hostile text just under the limit takes about 2 s at most on a 2-core machine, and on text
over it no time at all (``benchmarks/bench_code_bound.py``). Model answers are far shorter
(HumanEval solutions: under 3,000 characters). The sandbox's own limit on code it runs is
1,000,000.
"""


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


def parses(code: str) -> bool:
    """Tell whether ``code`` is Python that :func:`ast.parse` accepts.

    Cached; code longer than :data:`MAX_CODE_CHARS` characters is refused without parsing.
    """
    if len(code) > MAX_CODE_CHARS:
        return False
    return _parses(code)


@functools.lru_cache(maxsize=4096)
def _parses(code: str) -> bool:
    try:
        parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def with_prompt_helpers(script: str, prompt: str | None, entry_point: str | None) -> str:
    r"""Return a check script with the task's own helpers, from its prompt, defined after it.

    A HumanEval-style prompt may define functions besides the one asked for (``poly``,
    ``encode_cyclic``) that its check script calls to judge the answer. Called as the code
    under test's, they are whatever that code redefines them to (an ``encode_cyclic`` that
    returns its input makes an identity "decoder" pass). The prompt is the task's text, as
    trusted as the check itself: its top-level statements other than the entry point's
    definition (imports, constants, helpers) run after the script, in the check's own
    process, and replace the code's functions of those names. A prompt that defines no
    function or class besides the entry point, or that does not parse, leaves the script
    as it is (its line numbers unchanged).

    Examples
    --------
    >>> prompt = "def double(x):\n    return 2 * x\n\ndef half(x):\n    '''Halve.'''\n"
    >>> print(with_prompt_helpers("def check(candidate): ...\n", prompt, "half"))
    def check(candidate): ...
    <BLANKLINE>
    <BLANKLINE>
    # the task's own definitions, from its prompt
    def double(x):
        return 2 * x
    <BLANKLINE>
    >>> with_prompt_helpers("x = 1\n", "def half(x):\n    '''Halve.'''\n", "half")
    'x = 1\n'
    """
    if not prompt or not entry_point or len(prompt) > MAX_CODE_CHARS:
        return script
    helpers = _prompt_helpers(prompt, entry_point)
    if not helpers:
        return script
    return f"{script.rstrip()}\n\n\n# the task's own definitions, from its prompt\n{helpers}\n"


@functools.lru_cache(maxsize=1024)
def _prompt_helpers(prompt: str, entry_point: str) -> str:
    """Return the prompt's top-level statements but the entry point's, as source ("": none).

    Cached: every check of a task in an optimizer loop or a scoring run has the same prompt.
    """
    try:
        tree = parse(prompt)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    kept = [
        node for node in tree.body if not (isinstance(node, functions) and node.name == entry_point)
    ]
    if not any(isinstance(node, (*functions, ast.ClassDef)) for node in kept):
        return ""
    with _LOCK:
        return "\n".join(ast.unparse(node) for node in kept)
