"""Python function text for the code step: headers from an IR, bodies from answers, assembly.

Nothing here imports dspy.
"""

from __future__ import annotations

import ast
import keyword
import re
import textwrap
from typing import Any

from lift_metrics import _pyast as pyast
from lift_metrics._pyast import parses
from lift_metrics.errors import InputValueError
from lift_metrics.ir import parse_ir

__all__ = ["assemble_function", "function_body", "function_header", "is_placeholder"]

# Names a type hint may use without an import; a hint with other names is left out.
_HINT_NAMES = frozenset(
    {"int", "float", "str", "bool", "bytes", "list", "dict", "tuple", "set", "frozenset"}
)
_NAME = re.compile(r"\s*(?:def\s+)?([A-Za-z_]\w*)\s*(?:\(.*)?$", re.DOTALL)
_PLACEHOLDER = re.compile(r"^\s*(?:\{\s*\w+\s*\}|\[\[ ## \w+ ## \]\])\s*$")


def is_placeholder(text: str) -> bool:
    """Whether ``text`` is only a copy of a prompt-template placeholder.

    Examples
    --------
    >>> is_placeholder("{code}"), is_placeholder(" [[ ## body ## ]] "), is_placeholder("x = 1")
    (True, True, False)
    """
    return bool(_PLACEHOLDER.match(text))


def _usable_hint(hint: str | None) -> str | None:
    """``hint`` when it is an annotation over built-in names only, else ``None``."""
    if not hint or not hint.strip():
        return None
    try:
        tree = pyast.parse(hint.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        allowed = (
            (isinstance(node, ast.Constant) and node.value is None)
            or (isinstance(node, ast.Name) and node.id in _HINT_NAMES)
            or (isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr))
            or isinstance(node, ast.Expression | ast.Subscript | ast.Tuple | ast.BitOr | ast.Load)
        )
        if not allowed:
            return None
    return ast.unparse(tree)


def function_header(ir: Any, *, return_type: bool = False) -> str:
    """Return the ``def`` line of the function an IR describes, always valid Python.

    Parameters
    ----------
    ir : IR, mapping or JSON string
        Anything :func:`lift_metrics.ir.parse_ir` reads.
    return_type : bool, default False
        Also write the IR's return type as the return annotation. Off by default: a small
        model's IR often gets the return type wrong (``list[int]`` for ``largest``) and the
        body then follows the wrong annotation; on the main job's 16 test tasks the same
        optimized program solved 5 tasks without it and 3 with it.

    Returns
    -------
    str
        ``def name(param: hint, ...):`` (``-> return_type`` before the colon with
        ``return_type=True``). Type hints that are not
        annotations over built-in names (``"a number"``, ``"json"``, ``"List[int]"``, which
        would need an import) are left out. A name written as a call (``"add(a, b)"``)
        counts as its leading identifier.

    Raises
    ------
    ValueError
        When ``ir`` is not a valid IR (repeated parameter names, or ones that are keywords
        or not identifiers, make it invalid) or its function name is not a Python identifier.

    Examples
    --------
    >>> function_header({"intent": {"description": "Add."},
    ...                  "signature": {"name": "add", "return_type": "int",
    ...                                "parameters": [{"name": "a", "type_hint": "int"},
    ...                                               {"name": "b", "type_hint": "a number"}]}})
    'def add(a: int, b):'
    """
    signature = parse_ir(ir).signature
    match = _NAME.match(signature.name)  # "add(a, b)" and "add()" name the function add
    name = match.group(1) if match else signature.name.strip()
    if not name.isidentifier() or keyword.iskeyword(name):
        raise InputValueError(f"the IR's function name must be a Python identifier, got {name!r}")
    seen: set[str] = set()
    params = []
    for param in signature.parameters:
        pname = param.name.strip()
        if not pname.isidentifier() or keyword.iskeyword(pname) or pname in seen:
            continue
        seen.add(pname)
        hint = _usable_hint(param.type_hint)
        params.append(f"{pname}: {hint}" if hint else pname)
    returns = _usable_hint(signature.return_type) if return_type else None
    return f"def {name}({', '.join(params)})" + (f" -> {returns}" if returns else "") + ":"


def function_body(code: str, entry_point: str) -> str:
    r"""Return the body of the top-level function ``entry_point`` of ``code``.

    It is indented by four spaces and without its docstring; the module's imports move into the
    body.

    The code step's demonstrations are labelled with it (from the tasks' reference code).

    Raises
    ------
    ValueError
        When ``code`` defines no top-level function ``entry_point``.
    SyntaxError
        When ``code`` does not parse.

    Examples
    --------
    >>> source = "import math\ndef f(x):\n    '''Doc.'''\n    return math.sqrt(x)\n"
    >>> print(function_body(source, "f"))
        import math
        return math.sqrt(x)
    """
    tree = pyast.parse(code)
    function = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point), None
    )
    if function is None:
        raise InputValueError(f"code defines no top-level function {entry_point!r}")
    statements = function.body
    first = statements[0]
    if (
        len(statements) > 1
        and isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        statements = statements[1:]
    lines = code.splitlines()
    body = lines[statements[0].lineno - 1 : statements[-1].end_lineno]
    imports = [
        "    " + (ast.get_source_segment(code, node) or "").strip()
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    return "\n".join([*imports, *body])


def _first_function(text: str) -> str | None:
    """Return the text up to the end of its first top-level function, when that parses.

    Small models follow a whole function with a usage line, prose (``Example:``) or more
    functions, some cut off at ``max_tokens``; everything after the first function goes.
    """
    lines = text.split("\n")
    start = next(
        (i for i, line in enumerate(lines) if line.startswith(("def ", "async def "))), None
    )
    if start is None:
        return None
    end = next(
        (
            j
            for j in range(start + 1, len(lines))
            if lines[j].strip() and not lines[j][0].isspace() and not lines[j].startswith(")")
        ),
        len(lines),
    )
    first = "\n".join(lines[:end]).rstrip()
    return first if end < len(lines) and parses(first) else None


def assemble_function(header: str, answer: str) -> str:
    r"""Put the code step's answer under the header: the generated function's source.

    Parameters
    ----------
    header : str
        The ``def`` line (:func:`function_header`).
    answer : str
        The LM's answer, already out of Markdown fences and prose
        (:func:`lift_metrics.code.extract_code`): the body, indented or not, or a whole
        function with its own ``def`` line (kept as written when it parses, or up to the
        end of its first function when what follows that function does not parse).

    Returns
    -------
    str
        The function's source ending in a newline, or ``""`` when the answer is empty or
        a copy of a template placeholder such as ``{body}``. Of three ways to indent a body
        (the first line's stripped indentation restored; every line shifted by four
        spaces; dedented, then shifted) the first that parses is used; when none parses
        the first is returned and the code metrics score the syntax error.

    Examples
    --------
    >>> print(assemble_function("def add(a, b):", "return a + b"), end="")
    def add(a, b):
        return a + b
    >>> answer = "if x < 0:\n        return -1\n    return 1"
    >>> print(assemble_function("def sign(x):", answer), end="")
    def sign(x):
        if x < 0:
            return -1
        return 1
    >>> assemble_function("def f():", "{body}")
    ''
    """
    lines = answer.replace("\r\n", "\n").replace("\t", "    ").rstrip().split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines or is_placeholder("\n".join(lines)):
        return ""
    if lines[0].lstrip().startswith(("def ", "async def ", "import ", "from ")):
        whole = textwrap.dedent("\n".join(lines))
        if parses(whole):
            return whole + "\n"
        first = _first_function(whole)
        if first is not None:
            return first + "\n"
    first, rest = lines[0].strip(), lines[1:]
    candidates = [
        "\n".join([header, "    " + first, *rest]),
        "\n".join([header, *("    " + line if line.strip() else "" for line in lines)]),
        header + "\n" + textwrap.indent(textwrap.dedent("\n".join(lines)), "    "),
    ]
    for candidate in candidates:
        if parses(candidate):
            return candidate + "\n"
    return candidates[0] + "\n"
