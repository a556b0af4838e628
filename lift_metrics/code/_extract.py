"""Read code as users hand it over: Markdown fences and surrounding prose removed."""

from __future__ import annotations

import ast
import keyword
import re

from lift_metrics import _pyast as pyast
from lift_metrics._pyast import MAX_CODE_CHARS, parses
from lift_metrics.code._features import check_code
from lift_metrics.errors import InputTypeError

_FENCE = re.compile(
    r"^[ \t]*(?P<mark>```+|~~~+)[ \t]*(?P<lang>[\w+.-]*)[^\n]*\n(?P<body>.*?)"
    r"(?:^[ \t]*(?P=mark)[ \t]*$|\Z)",
    re.DOTALL | re.MULTILINE,
)
_PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3", "ipython", "pycon", "sage"})
_INLINE = re.compile(r"^`([^`\n]+)`$")
_WORD = re.compile(r"^[A-Za-z][A-Za-z'’-]*[,.!?;:]?$")
_CODE_STARTERS = frozenset(keyword.kwlist) | {"print", "async", "await", "match", "case"}
_MAX_LINES = 400  # beyond this, prose trimming stops at the ends instead of trying every run


def defines(code: str, name: str) -> bool:
    """Whether ``code`` parses and defines a top-level function or class ``name`` (internal).

    ``name = lambda ...`` defines a function too.
    """
    if not parses(code):
        return False
    tree = pyast.parse(code)
    return any(
        (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name == name
        )
        or _binds_lambda(node, name)
        for node in tree.body
    )


def _binds_lambda(node: ast.stmt, name: str) -> bool:
    """Whether ``node`` is ``name = lambda ...`` (or annotated so)."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    else:
        return False
    return isinstance(node.value, ast.Lambda) and any(
        isinstance(target, ast.Name) and target.id == name for target in targets
    )


def single_function(code: str) -> str | None:
    """Return the name of the only top-level function ``code`` defines, else None (internal)."""
    if not parses(code):
        return None
    names = [
        node.name
        for node in pyast.parse(code).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    return names[0] if len(names) == 1 else None


def is_prose_line(line: str) -> bool:
    """Whether one line reads as natural language rather than Python (internal heuristic).

    A prose line starts at column 0 with at least three words, the first two plain words
    (letters, an apostrophe or a trailing punctuation mark) and the first not a Python
    keyword or ``print``; Markdown bullets, headings and emphasis count as prose too.

    Examples
    --------
    >>> is_prose_line("Here is the solution:"), is_prose_line("return a + b")
    (True, False)
    >>> is_prose_line("x = compute(a, b)"), is_prose_line("**Explanation**")
    (False, True)
    """
    stripped = line.strip()
    if not stripped or line[:1].isspace():
        return False
    if re.match(r"^(?:[*_]{2}.+[*_]{2}:?|[-*+] \w.*|\d+[.)] \w.*|#{1,6} \w.*)$", stripped):
        return not stripped.startswith("# ") or len(stripped.split()) > 2
    words = stripped.split()
    if len(words) < 3 or words[0].rstrip(",.:;!?") in _CODE_STARTERS:
        return False
    return bool(_WORD.match(words[0]) and _WORD.match(words[1]))


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group("lang").lower(), m.group("body")) for m in _FENCE.finditer(text)]


def _pick_block(blocks: list[tuple[str, str]], entry_point: str | None) -> str:
    python = [body for lang, body in blocks if lang in _PYTHON_TAGS]
    pool = python or [body for _, body in blocks]
    if entry_point is not None:
        for body in pool:
            if defines(body, entry_point):
                return body
    for body in pool:
        if body.strip() and parses(body):
            return body
    return pool[0]


def _strip_prose(text: str) -> str:
    """``text`` without the prose lines around the code, when that makes it parse."""
    lines = text.splitlines(keepends=True)
    start, end = 0, len(lines)
    while start < end and (not lines[start].strip() or is_prose_line(lines[start])):
        start += 1
    while end > start and (not lines[end - 1].strip() or is_prose_line(lines[end - 1])):
        end -= 1
    if start == end or (start == 0 and end == len(lines)):
        return text
    trimmed = "".join(lines[start:end])
    if parses(trimmed):
        return trimmed
    if len(lines) > _MAX_LINES:
        return text
    # prose inside too: the longest run of lines that parses, every dropped line prose/blank
    droppable = [not line.strip() or is_prose_line(line) for line in lines]
    best: tuple[int, int] | None = None
    for i in range(start, end):
        if droppable[i] or not all(droppable[:i]):
            continue
        for j in range(end, i, -1):
            if best is not None and j - i <= best[1] - best[0]:
                break
            if all(droppable[j:]) and parses("".join(lines[i:j])):
                best = (i, j)
                break
    return text if best is None else "".join(lines[best[0] : best[1]])


def extract_code(text: str, *, entry_point: str | None = None) -> str:
    r"""Return the Python code in ``text``, read as a person would read a model's answer.

    Parameters
    ----------
    text : str
        What the model or user handed over: plain code, code in Markdown fences, or code with
        prose before or after it.
    entry_point : str or None, default None
        The function asked for; with several fenced blocks, the block that defines it wins.

    Returns
    -------
    str
        - Fenced text (```` ``` ````, ```` ```python ````, ``~~~``; an unclosed fence runs to
          the end): the body of one block. Blocks tagged with another language (``bash``,
          ``json``...) are skipped when a Python or untagged block exists. Among the blocks:
          the one that defines ``entry_point``, else the first that parses, else the first.
        - Unfenced text that parses: unchanged.
        - Unfenced text that does not parse: without the prose lines before and after (and,
          if needed, between) the code, when the rest parses; else unchanged (broken code
          is scored as it is, not cut down to a piece that parses).
        - A whole text in single backticks (```x = 1```): the inside.

    Raises
    ------
    TypeError
        If ``text`` is not a str, or ``entry_point`` is not a str or None.

    Notes
    -----
    A prose line (:func:`is_prose_line`) starts at column 0 with at least three words whose
    first two are plain words and whose first is not a Python keyword; Markdown bullets,
    numbered items and emphasis count as prose. The code itself is never rewritten. Text over
    :data:`MAX_CODE_CHARS` characters is returned unread.

    Examples
    --------
    >>> extract_code("Here:\n```python\nx = 1\n```\nDone.")
    'x = 1\n'
    >>> extract_code("x = 1\n")
    'x = 1\n'
    >>> answer = "Here is the function you asked for:\n\ndef f(x):\n    return x\n\n"
    >>> print(extract_code(answer + "It returns its argument unchanged.\n"))
    def f(x):
        return x
    <BLANKLINE>
    >>> two = "```bash\npip install numpy\n```\n```\ndef g():\n    pass\n```\n"
    >>> extract_code(two)
    'def g():\n    pass\n'
    """
    text = check_code("text", text)
    if entry_point is not None and not isinstance(entry_point, str):
        raise InputTypeError(f"entry_point must be a str or None, got {type(entry_point).__name__}")
    if len(text) > MAX_CODE_CHARS:
        return text
    blocks = _fenced_blocks(text) if ("```" in text or "~~~" in text) else []
    if blocks:
        return _pick_block(blocks, entry_point)
    inline = _INLINE.match(text.strip())
    if inline:
        return inline.group(1)
    if parses(text):
        return text
    return _strip_prose(text)


def complete_with_prompt(code: str, prompt: str | None, entry_point: str | None) -> str:
    r"""``prompt + code`` for a body-only completion, else ``code``.

    The prompt is prepended when it is code that defines a function (a HumanEval prompt: a
    signature and docstring; a natural-language task is not), ``code`` does not itself
    define the entry function (``entry_point``, or any function when it is None) and the
    joined text parses.

    Parameters
    ----------
    code : str
        The extracted answer (:func:`extract_code`).
    prompt : str or None
        The task's prompt.
    entry_point : str or None
        The function the tests call.

    Returns
    -------
    str

    Examples
    --------
    >>> complete_with_prompt("    return a + b\n", "def add(a, b):\n    'Add.'\n", "add")
    "def add(a, b):\n    'Add.'\n    return a + b\n"
    """
    if not prompt or not parses(prompt) or not re.search(r"^(?:async\s+)?def\s", prompt, re.M):
        return code  # no prompt, or a natural-language one: nothing to complete
    if entry_point is not None and defines(code, entry_point):
        return code
    if entry_point is None and parses(code) and re.search(r"^(?:async\s+)?def\s", code, re.M):
        return code
    joined = prompt if prompt.endswith("\n") else prompt + "\n"
    joined += code
    return joined if parses(joined) else code
