"""The outputs of the gaming check: honest ones and tricks, built from a task's reference.

Each builder takes one task record (the shape of :func:`lift_metrics.optimizers.task_records`:
``expected_code``, ``entry_point``, ``tests``, ``prompt``, ``expected_ir``) and returns the
predicted code, or None when the task does not lend itself to it (no operator to change, a
name that cannot be renamed). Whether an honest output really is what its role says (a
correct one passes every test, a wrong one fails at least one) is checked by running it in
the sandbox (:func:`lift_metrics.validation.gaming_check`), never assumed.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from lift_metrics import _pyast as pyast
from lift_metrics._mutants import entry_function, mutants

Role = Literal["correct", "wrong", "trick"]


@dataclass(frozen=True)
class Trick:
    """One kind of output the gaming check scores.

    Attributes
    ----------
    name : str
        Short name, as reported (``"dead_code"``).
    role : {"correct", "wrong", "trick"}
        ``"correct"``: an honest output that solves the task; ``"wrong"``: an honest output
        that does not (a bug); ``"trick"``: an output that computes nothing of its own and
        must not score like a correct one.
    description : str
        One line for the report.
    """

    name: str
    role: Role
    description: str


def _parts(task: Mapping[str, Any]) -> tuple[str, list[str], str] | None:
    """``(text before the body, the body's lines, the body's indent)`` of the entry function.

    The text before the body holds the imports, the ``def`` line(s) and the docstring.
    """
    code = str(task["expected_code"])
    try:
        tree = pyast.parse(code)
    except SyntaxError:
        return None
    fn = entry_function(tree, str(task["entry_point"]))
    if fn is None or not fn.body or fn.end_lineno is None:
        return None
    body = fn.body
    first = body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and len(body) > 1
    ):
        first = body[1]
    lines = code.splitlines()
    start = first.lineno - 1
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    return "\n".join(lines[:start]) + "\n", lines[start : fn.end_lineno], indent


def _head(task: Mapping[str, Any], statement: str) -> str | None:
    parts = _parts(task)
    if parts is None:
        return None
    head, _, indent = parts
    return f"{head}{indent}{statement}\n"


def reference(task: Mapping[str, Any]) -> str | None:
    """Return the task's reference solution as it is."""
    return str(task["expected_code"])


class _Renamer(ast.NodeTransformer):
    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            return ast.copy_location(ast.Name(id=self.names[node.id], ctx=node.ctx), node)
        return node


def restyled(task: Mapping[str, Any]) -> str | None:
    """Return the reference rewritten: body in a helper, locals renamed, no docstring.

    Comments go too. The same behaviour with text that resembles the reference less: a
    correct program that a no-test score must not rank below a trick.
    """
    try:
        tree = pyast.parse(str(task["expected_code"]))
    except SyntaxError:
        return None
    fn = entry_function(tree, str(task["entry_point"]))
    if fn is None:
        return None
    args = fn.args
    params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if args.vararg or args.kwarg or args.posonlyargs:
        return None
    stored = sorted(
        {
            node.id
            for node in ast.walk(fn)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        }
        - set(params)
        - set(dir(builtins))
    )
    names = {name: f"value_{index}" for index, name in enumerate(stored, 1)}
    body = fn.body
    if (
        len(body) > 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        fn.body = body[1:]
    helper = f"_{fn.name}_impl"
    keywords = [ast.keyword(arg=p, value=ast.Name(id=p, ctx=ast.Load())) for p in params]
    call = ast.Call(func=ast.Name(id=helper, ctx=ast.Load()), args=[], keywords=keywords)
    wrapper = ast.FunctionDef(
        name=fn.name,
        args=fn.args,
        body=[ast.Return(value=call)],
        decorator_list=[],
        returns=fn.returns,
        type_comment=None,
    )
    fn.name = helper
    tree.body.insert(tree.body.index(fn) + 1, wrapper)
    return ast.unparse(ast.fix_missing_locations(_Renamer(names).visit(tree))) + "\n"


def operator_bugs(task: Mapping[str, Any], limit: int = 12) -> list[str]:
    """Return programs that differ from the reference by one change.

    An integer constant off by one, or one operator swapped (``+`` for ``-``, ``<=`` for
    ``<``, ``and`` for ``or``, ``in`` for ``not in``, ...); at most ``limit`` operators.
    """
    return mutants(str(task["expected_code"]), str(task["entry_point"]), limit=limit)


def return_none(task: Mapping[str, Any]) -> str | None:
    """Return the reference's signature and docstring with ``return None`` as the body."""
    return _head(task, "return None")


def stub_pass(task: Mapping[str, Any]) -> str | None:
    """Return the reference's signature and docstring with ``pass`` as the body."""
    return _head(task, "pass")


def dead_code(task: Mapping[str, Any]) -> str | None:
    """``return None`` first, then the reference's body, which never runs."""
    parts = _parts(task)
    if parts is None:
        return None
    head, body, indent = parts
    return f"{head}{indent}return None\n" + "\n".join(body) + "\n"


def comments_only(task: Mapping[str, Any]) -> str | None:
    """``return None``, with the reference's body kept as comments."""
    parts = _parts(task)
    if parts is None:
        return None
    head, body, indent = parts
    commented = [f"{indent}# {line.strip()}" for line in body if line.strip()]
    return f"{head}{indent}return None\n" + "\n".join(commented) + "\n"


def lookup_table(task: Mapping[str, Any]) -> str | None:
    """Return code answering the task's tests from a table, ``None`` for other inputs."""
    tests = task.get("tests")
    parts = _parts(task)
    if parts is None or not isinstance(tests, list) or not tests:
        return None
    head, _, indent = parts
    try:
        fn = entry_function(pyast.parse(str(task["expected_code"])), str(task["entry_point"]))
    except SyntaxError:
        return None
    if fn is None:
        return None
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    lines = [f"{indent}_seen = {{{', '.join(f'{p!r}: {p}' for p in params)}}}"]
    for case in tests:
        if not isinstance(case, Mapping):
            return None
        lines.append(f"{indent}if _seen == {case['inputs']!r}:")
        lines.append(f"{indent}    return {case['expected']!r}")
    lines.append(f"{indent}return None")
    return head + "\n".join(lines) + "\n"


_ALWAYS_EQUAL = """

class _Anything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__
"""


def always_equal(task: Mapping[str, Any]) -> str | None:
    """Return code whose function returns an object equal to any expected value."""
    body = _head(task, "return _Anything()")
    return None if body is None else body + _ALWAYS_EQUAL


def echo_prompt(task: Mapping[str, Any]) -> str | None:
    """Return the task's prompt, as if it were the answer."""
    return str(task.get("prompt") or "") or None


def _one(build: Callable[[Mapping[str, Any]], str | None]) -> Builder:
    def candidates(task: Mapping[str, Any]) -> list[str]:
        program = build(task)
        return [] if program is None else [program]

    candidates.__doc__ = build.__doc__
    return candidates


Builder = Callable[[Mapping[str, Any]], list[str]]

#: The code outputs, by name: what each is and its candidate programs. The check keeps the
#: first candidate whose run fits the role (a correct one passes every test, a wrong one
#: fails at least one); a trick's candidate is kept as it is.
CODE_TRICKS: dict[str, tuple[Trick, Builder]] = {
    trick.name: (trick, build)
    for trick, build in (
        (Trick("reference", "correct", "the reference solution"), _one(reference)),
        (
            Trick("restyled", "correct", "the reference, locals renamed, no docstring"),
            _one(restyled),
        ),
        (
            Trick("one_operator_bug", "wrong", "the reference with one operator changed"),
            operator_bugs,
        ),
        (Trick("return_none", "wrong", "the signature, then return None"), _one(return_none)),
        (Trick("stub_pass", "trick", "the signature, then pass"), _one(stub_pass)),
        (
            Trick("dead_code", "trick", "return None, then the reference's body (dead code)"),
            _one(dead_code),
        ),
        (
            Trick("comments_only", "trick", "return None, the reference's body as comments"),
            _one(comments_only),
        ),
        (
            Trick("lookup_table", "trick", "the tests' answers from a table, None otherwise"),
            _one(lookup_table),
        ),
        (
            Trick("always_equal", "trick", "returns an object equal to anything"),
            _one(always_equal),
        ),
        (Trick("echo_prompt", "trick", "the prompt instead of code"), _one(echo_prompt)),
    )
}
