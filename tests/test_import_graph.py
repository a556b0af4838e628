"""The package's import graph has no circle, counting imports inside functions and for types."""

from __future__ import annotations

import ast
from pathlib import Path

import lift_metrics

PACKAGE = Path(lift_metrics.__file__).parent


def _module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_of(path): path for path in PACKAGE.rglob("*.py")}


def _targets(node: ast.AST, here: str, is_package: bool, known: set[str]) -> set[str]:
    """The package's modules that one import statement names.

    ``from a import b`` names the module ``a.b`` when there is one, else ``a`` (``b`` is a name
    defined there). The parent packages that Python also runs are not counted: every module
    would otherwise sit in a circle with the ``__init__`` of its package.
    """
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ""
    if node.level:
        anchor = here.split(".") if is_package else here.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    found: set[str] = set()
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in known:
            found.add(sub)
        elif base in known:
            found.add(base)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere (top level, functions, TYPE_CHECKING)."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges: set[str] = set()
        for node in ast.walk(tree):
            edges |= _targets(node, name, path.name == "__init__.py", known)
        edges.discard(name)
        graph[name] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_detector_finds_a_circle_and_accepts_a_chain() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_sees_imports_inside_functions_and_for_types() -> None:
    graph = import_graph()
    # code/_options.py reads the profiles at top level; dspy_metrics/_profiles.py for types
    # and inside a function
    assert "lift_metrics._profiles" in graph["lift_metrics.code._options"]
    assert "lift_metrics._profiles" in graph["lift_metrics.dspy_metrics._profiles"]


def test_the_package_has_no_import_circle() -> None:
    assert circles(import_graph()) == []
