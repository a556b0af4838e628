"""Variants of the 64 project tasks' reference solutions for the behaviour check.

Shared by ``tests/code/test_behaviour.py`` and ``benchmarks/bench_behaviour.py``. For each task
of ``datasets/tasks/tasks.jsonl``:

- ``rewrite``: a correct hand-written solution (``behaviour_rewrites.REWRITES``);
- ``dead_code``: the reference with ``return None`` before its body (the body never runs);
- ``comments``: the reference's body kept only as comments, the function returning None
  through a variable (so that it is no placeholder for :func:`~lift_metrics.code.is_stub`);
- ``bug``: the first one-operator mutant of the reference that fails a given test
  (``gaming_variants.mutants``, run in the real sandbox);
- ``lookup``: a table of the given tests' answers, None for any other input
  (``gaming_variants.hardcoded`` over every test).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import behaviour_rewrites
import gaming_variants as gv

TASKS = Path(__file__).resolve().parents[2] / "datasets" / "tasks" / "tasks.jsonl"
NO_TEST_VARIANTS = ("reference", "rewrite", "dead_code", "comments", "bug")


@dataclass(frozen=True)
class Task:
    """One project task: its reference, I/O tests and entry point."""

    task_id: str
    reference: str
    tests: list[tuple[dict[str, Any], Any]]
    entry_point: str

    @property
    def problem(self) -> gv.Problem:
        """The task as a gaming-suite problem: header and docstring as the prompt."""
        head, body = split_header(self.reference, self.entry_point)
        return gv.Problem(self.task_id, head, body, self.tests, self.entry_point)


def load_tasks(ids: list[str] | None = None) -> list[Task]:
    """The project's tasks (all 64, or those with the given ids, in file order)."""
    tasks = []
    for line in TASKS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if ids is not None and record["id"] not in ids:
            continue
        tests = [(case["inputs"], case["expected"]) for case in record["tests"]]
        tasks.append(Task(record["id"], record["expected_code"], tests, record["entry_point"]))
    return tasks


def _function(code: str, name: str) -> ast.FunctionDef:
    return next(
        node
        for node in ast.parse(code).body
        if isinstance(node, ast.FunctionDef) and node.name == name
    )


def split_header(code: str, name: str) -> tuple[str, str]:
    """(everything up to the end of the function's docstring, the rest of the body)."""
    function = _function(code, name)
    first = function.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    cut = (first.end_lineno or first.lineno) if docstring else first.lineno - 1
    lines = code.splitlines(keepends=True)
    return "".join(lines[:cut]), "".join(lines[cut:])


def _indent(body: str) -> str:
    first = next(line for line in body.splitlines() if line.strip())
    return first[: len(first) - len(first.lstrip())]


def dead_code(task: Task) -> str:
    """The reference with ``return None`` before its body: the body is unreachable."""
    head, body = split_header(task.reference, task.entry_point)
    return f"{head}{_indent(body)}return None\n{body}"


def comments(task: Task) -> str:
    """The reference's body as comments; the function computes nothing."""
    head, body = split_header(task.reference, task.entry_point)
    pad = _indent(body)
    commented = "".join(
        f"{line[: len(line) - len(line.lstrip())]}# {line.strip()}\n" if line.strip() else "\n"
        for line in body.splitlines()
    )
    return f"{head}{pad}result = None\n{commented}{pad}return result\n"


def bug(sandbox: Any, task: Task) -> str | None:
    """The first one-operator mutant of the reference that fails a given test, or None."""
    return gv.killed_mutant(sandbox, task.problem)


def lookup(task: Task) -> str:
    """A table of every given test's answer (None for any other input)."""
    return gv.hardcoded(task.problem, len(task.tests))


def rewrite(task: Task) -> str:
    """The correct hand-written solution."""
    return behaviour_rewrites.REWRITES[task.task_id]


def variants(sandbox: Any, task: Task) -> dict[str, str]:
    """Every variant of one task by name (``bug`` left out when no mutant fails a test)."""
    made = {
        "reference": task.reference,
        "rewrite": rewrite(task),
        "dead_code": dead_code(task),
        "comments": comments(task),
        "lookup": lookup(task),
    }
    mutant = bug(sandbox, task)
    if mutant is not None:
        made["bug"] = mutant
    return made
