"""Non-code detection: answers that are not an attempt at the code asked for."""

from __future__ import annotations

import ast
import re
from typing import Any

from lift_metrics import _pyast as pyast
from lift_metrics._pyast import parses
from lift_metrics.code._extract import complete_with_prompt, extract_code, is_prose_line
from lift_metrics.code._features import check_code, over_limit
from lift_metrics.code._stub import placeholder_kind
from lift_metrics.code._tests import check_entry_point
from lift_metrics.errors import InputTypeError

_PLACEHOLDERS = (
    # {code}, {...}, {your code}; not a dict or set literal ({'a': 1}, {1, 2}, {k: v ...})
    re.compile(r"^\{\s*(?:\.\.\.|…|[A-Za-z_][A-Za-z_ ]{0,60})\s*\}$"),
    re.compile(r"^\{\{[^{}\n]{0,80}\}\}$"),  # {{ code }}
    re.compile(r"^<[^<>\n]{0,80}>$"),  # <code>, <your code here>
    re.compile(r"^\$\{?[A-Za-z_]\w*\}?$"),  # $code, ${code}
    re.compile(r"^\[[A-Z _]{2,80}\]$"),  # [CODE], [YOUR CODE HERE]
    re.compile(r"^(?:#\s*)?(?:TODO|FIXME|TBD|XXX)\b.*$", re.IGNORECASE),
    re.compile(r"^(?:\.\.\.|…|pass|None|null)$"),
)
_NO_BODY = ("docstring only", "pass", "raise NotImplementedError")


def _placeholder(text: str) -> str | None:
    for pattern in _PLACEHOLDERS:
        if pattern.match(text):
            return f"template placeholder {text[:40]!r}"
    return None


def _module_kind(tree: ast.Module) -> str | None:
    """Why a parsed module is no attempt at a function, or None when it might be one."""
    body = list(tree.body)
    if not body:
        return "no code (comments only)"
    if all(isinstance(node, ast.Import | ast.ImportFrom) for node in body):
        return "import lines only"
    rest = [node for node in body if not isinstance(node, ast.Import | ast.ImportFrom | ast.Pass)]
    if not rest:
        return "import lines only"
    if all(isinstance(node, ast.Expr) for node in rest):
        values = [node.value for node in rest if isinstance(node, ast.Expr)]
        if all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
            return "only a string (prose in quotes or a docstring)"
        if len(values) == 1 and isinstance(values[0], ast.Name):
            return f"a bare name {values[0].id!r}"
        if all(isinstance(v, ast.Constant) for v in values):
            return "only a constant"
    return None


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _body_kind(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """:func:`placeholder_kind` of the function once imports and bare strings are set aside.

    HumanEval prompts may put an import before the docstring (``import math`` then the
    docstring): such a body still does no work.
    """
    kept = [
        node
        for node in function.body
        if not isinstance(node, ast.Import | ast.ImportFrom)
        and not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
    ]
    if len(kept) == len(function.body):
        return placeholder_kind(function)
    copy = ast.FunctionDef(
        name=function.name, args=function.args, body=kept, decorator_list=[], returns=None
    )
    kind = placeholder_kind(copy)
    return "docstring only" if kind == "docstring only" or not kept else kind


def _looks_like_prose(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    prose = sum(is_prose_line(line) for line in lines)
    return prose / len(lines) >= 0.5


def _function_kind(code: str, prompt: str | None, entry: str | None) -> str | None:
    """Return why ``code`` is no attempt at the function asked for, or None when it is one."""
    if prompt and code.strip() == prompt.strip():
        return "the prompt echoed with no body"
    full = complete_with_prompt(code, prompt, entry)
    if not parses(full):
        return None
    tree = pyast.parse(full)
    own = pyast.parse(code) if parses(code) else tree
    kind = _module_kind(own)
    if kind is not None:
        return kind
    functions = _functions(tree)
    if entry is not None:
        target: Any = functions.get(entry)
    else:
        target = next(iter(functions.values())) if len(functions) == 1 else None
    if target is not None:
        body_kind = _body_kind(target)
        if body_kind in _NO_BODY:
            if prompt and full != code:
                return f"the prompt echoed with no body ({body_kind})"
            return f"the entry function has no body ({body_kind})"
    return None


def degenerate_kind(
    text: str,
    *,
    entry_point: str | None = None,
    prompt: str | None = None,
    function: bool | None = None,
) -> str | None:
    r"""Why ``text`` is not an attempt at the code asked for, or None when it is one.

    Parameters
    ----------
    text : str
        The answer as handed over (fences and prose are read through with
        :func:`~lift_metrics.code.extract_code`).
    entry_point : str or None, default None
        The function asked for, if known.
    prompt : str or None, default None
        The prompt the answer completes (HumanEval-style: a signature and docstring). An
        answer that is the prompt again, or that gives the entry function no body, is
        degenerate.
    function : bool or None, default None
        Whether a function is asked for. None means: when ``entry_point`` or ``prompt`` is
        given. :func:`~lift_metrics.code.code_quality` passes True when there are tests.

    Returns
    -------
    str or None
        A short reason such as ``"empty text"``, ``"template placeholder '{code}'"``,
        ``"prose, not code"``, ``"too long to analyse (...)"``, ``"import lines only"``,
        ``"a bare name 'x'"``, ``"the prompt echoed with no body"`` or ``"the entry function
        has no body (pass)"``; None when the text is an attempt (right or wrong: tests and the
        reference judge it).

    Raises
    ------
    TypeError
        If ``text`` or ``prompt`` is not a str (or None), or ``function`` is not a bool or
        None.
    ValueError
        If ``entry_point`` is not a Python identifier.

    Notes
    -----
    Always degenerate: empty or whitespace-only text, a template placeholder alone
    (``{code}``, ``{...}``, ``<code>``, ``TODO``, ``...``, ``$code``, ``[CODE]``), prose
    (text that does not parse and whose non-blank lines are mostly sentences), and text too
    long to analyse (over ``MAX_CODE_CHARS``, 100,000 characters: not read). Degenerate
    only where a function is asked for: import lines only, comments only, a string or a
    constant alone, a bare name, the prompt echoed, and an entry function whose body (its
    docstring set aside) is empty, ``pass``/``...`` or ``raise NotImplementedError``.
    Without a function asked for (a reference snippet only, as in CoNaLa), a bare
    expression such as ``x`` or ``sorted(d)`` is legitimate code. A function that returns a
    constant is not degenerate here: it is an attempt, and tests judge it.

    Examples
    --------
    >>> degenerate_kind("{code}")
    "template placeholder '{code}'"
    >>> degenerate_kind("I am not sure how to solve this problem, sorry.")
    'prose, not code'
    >>> degenerate_kind("import math\n", function=True)
    'import lines only'
    >>> degenerate_kind("sorted(d)") is None  # a snippet: legitimate without a function asked
    True
    >>> degenerate_kind("def f(x):\n    '''Double x.'''\n", entry_point="f")
    'the entry function has no body (docstring only)'
    >>> degenerate_kind("def f(x):\n    return 2 * x\n", entry_point="f") is None
    True
    """
    text = check_code("text", text)
    if prompt is not None:
        prompt = check_code("prompt", prompt)
    entry = check_entry_point(entry_point)
    if function is not None and not isinstance(function, bool):
        raise InputTypeError(f"function must be True, False or None, got {function!r}")
    wants_function = (entry is not None or bool(prompt)) if function is None else function
    stripped = text.strip()
    if not stripped:
        return "empty text"
    too_long = over_limit(text)
    if too_long is not None:
        return f"too long to analyse ({too_long})"
    placeholder = _placeholder(stripped)
    if placeholder:
        return placeholder
    code = extract_code(text, entry_point=entry)
    if not code.strip():
        return "empty code block"
    inner = _placeholder(code.strip())
    if inner:
        return inner
    if not parses(code):
        if _looks_like_prose(code):
            return "prose, not code"
        if not wants_function or not prompt:
            return None  # broken code: an attempt, scored by the tests or the reference
    if not wants_function:
        return None
    return _function_kind(code, prompt, entry)
