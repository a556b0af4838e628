"""The task dataset: small Python function tasks with an expected IR, code and I/O tests.

The shipped file is ``datasets/tasks/tasks.jsonl`` (one JSON object a line; its card is
``datasets/tasks/README.md``). :func:`task_records` reads and validates it into plain dicts;
:func:`load_tasks` turns them into ``dspy.Example`` objects with ``prompt`` marked as the input,
ready for ``dspy.Evaluate`` and the optimizers. Both accept ``path=`` for a file of your own in
the same format.

Importing this module does not import dspy; :func:`load_tasks` does, on first call.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lift_metrics import _pyast as pyast
from lift_metrics._checks import check_choice
from lift_metrics._paths import datasets_dir
from lift_metrics.errors import InputValueError, RecordError

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from dspy.primitives.example import Example

__all__ = [
    "DIFFICULTIES",
    "SPLITS",
    "default_tasks_path",
    "load_tasks",
    "task_records",
    "io_tests_from_json",
]

#: The fixed splits of the task dataset, in the order they are usually used.
SPLITS: tuple[str, ...] = ("train", "dev", "test")

#: The difficulty labels a task may carry.
DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")

_REQUIRED: dict[str, type] = {
    "id": str,
    "split": str,
    "prompt": str,
    "expected_ir": dict,
    "expected_code": str,
    "entry_point": str,
    "tests": list,
}
_OPTIONAL: dict[str, type] = {"difficulty": str, "tags": list}


def default_tasks_path() -> Path:
    """Return the path of the shipped task file, ``datasets/tasks/tasks.jsonl``.

    Raises
    ------
    FileNotFoundError
        When the shipped ``datasets`` folder cannot be found.
    """
    return datasets_dir() / "tasks" / "tasks.jsonl"


def io_tests_from_json(cases: Any) -> list[tuple[dict[str, Any], Any]]:
    """Convert I/O tests from their JSON form to ``(kwargs, expected)`` tuples.

    Parameters
    ----------
    cases : list of dict
        Each case is ``{"inputs": {<keyword arguments>}, "expected": <value>}``.

    Returns
    -------
    list of (dict, object)
        The form :meth:`lift_metrics.sandbox.Sandbox.run_tests` takes.

    Raises
    ------
    ValueError
        When ``cases`` is not a list of such objects (the message names the case).

    Examples
    --------
    >>> io_tests_from_json([{"inputs": {"a": 1, "b": 2}, "expected": 3}])
    [({'a': 1, 'b': 2}, 3)]
    """
    if not isinstance(cases, list):
        raise InputValueError(f"tests must be a list of test objects, got {type(cases).__name__}")
    converted: list[tuple[dict[str, Any], Any]] = []
    for index, case in enumerate(cases):
        where = f"tests[{index}]"
        if not isinstance(case, Mapping):
            raise InputValueError(
                f'{where} must be an object {{"inputs": ..., "expected": ...}}, '
                f"got {type(case).__name__}"
            )
        keys = set(case)
        if keys != {"inputs", "expected"}:
            problems = [f"missing {key!r}" for key in ("inputs", "expected") if key not in keys]
            problems += [f"unknown {key!r}" for key in sorted(keys - {"inputs", "expected"})]
            raise InputValueError(
                f'{where} must have exactly the keys "inputs" and "expected" '
                f"({', '.join(problems)})"
            )
        inputs = case["inputs"]
        if not isinstance(inputs, Mapping) or not all(isinstance(key, str) for key in inputs):
            raise InputValueError(
                f"{where}.inputs must be an object of keyword arguments, "
                f"got {type(inputs).__name__}"
            )
        for name in inputs:
            if not name.isidentifier():
                raise InputValueError(f"{where}.inputs has a key that is not a name: {name!r}")
        converted.append((dict(inputs), case["expected"]))
    return converted


def _check_record(record: Any) -> dict[str, Any]:
    """Validate one parsed record; return it with defaults filled in."""
    difficulty, tags = _check_fields(record)
    _check_expected_code(record)
    _check_expected_ir(record)
    try:
        tests = io_tests_from_json(record["tests"])
    except ValueError as exc:
        raise RecordError(f"field {exc}") from None
    if not tests:
        raise RecordError("field 'tests' must hold at least one test")
    return {**record, "difficulty": difficulty, "tags": list(tags)}


def _check_fields(record: Any) -> tuple[str, list[str]]:
    """Check the record's fields, their types and plain values; return difficulty and tags."""
    if not isinstance(record, dict):
        raise RecordError(f"a task must be a JSON object, got {type(record).__name__}")
    unknown = sorted(set(record) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        allowed = sorted([*_REQUIRED, *_OPTIONAL])
        raise RecordError(f"unknown field(s) {unknown}; allowed fields are {allowed}")
    for field in _REQUIRED:
        if field not in record:
            raise RecordError(f"missing required field {field!r}")
    for field, kind in {**_REQUIRED, **_OPTIONAL}.items():
        if field in record and not isinstance(record[field], kind):
            raise RecordError(
                f"field {field!r} must be a JSON {'object' if kind is dict else kind.__name__}"
                f", got {type(record[field]).__name__}"
            )
    for field in ("id", "prompt", "expected_code"):
        if not record[field].strip():
            raise RecordError(f"field {field!r} must not be empty")
    if record["split"] not in SPLITS:
        raise RecordError(f"field 'split' must be one of {SPLITS}, got {record['split']!r}")
    difficulty = record.get("difficulty", "medium")
    if difficulty not in DIFFICULTIES:
        raise RecordError(f"field 'difficulty' must be one of {DIFFICULTIES}, got {difficulty!r}")
    tags = record.get("tags", [])
    if not all(isinstance(tag, str) for tag in tags):
        raise RecordError("field 'tags' must be a list of strings")
    return difficulty, tags


def _check_expected_code(record: dict[str, Any]) -> None:
    """Check that ``expected_code`` parses and defines the entry point at top level."""
    entry_point = record["entry_point"]
    if not entry_point.isidentifier():
        raise RecordError(f"field 'entry_point' must be a Python name, got {entry_point!r}")
    try:
        tree = pyast.parse(record["expected_code"])
    except SyntaxError as exc:
        raise RecordError(
            f"field 'expected_code' does not parse: {exc.msg} (code line {exc.lineno})"
        ) from None
    defined = {
        node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    if entry_point not in defined:
        raise RecordError(
            f"field 'expected_code' defines no top-level function {entry_point!r} "
            f"(it defines {sorted(defined)})"
        )


def _check_expected_ir(record: dict[str, Any]) -> None:
    """Check that ``expected_ir`` is a valid IR naming the entry point."""
    from pydantic import ValidationError

    from lift_metrics.ir import IR

    try:
        ir = IR.model_validate(record["expected_ir"])
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first["loc"])
        raise RecordError(
            f"field 'expected_ir' is not a valid IR: {location}: {first['msg']}"
            f" ({exc.error_count()} error(s))"
        ) from None
    entry_point = record["entry_point"]
    if ir.signature.name != entry_point:
        raise RecordError(
            f"field 'expected_ir' names the function {ir.signature.name!r} but "
            f"'entry_point' is {entry_point!r}"
        )


def task_records(
    split: str | None = None, *, path: str | os.PathLike[str] | None = None
) -> list[dict[str, Any]]:
    """Read and validate the task dataset; return its records as plain dicts.

    Parameters
    ----------
    split : {"train", "dev", "test"} or None, default None
        Keep only the tasks of this split; ``None`` keeps all of them.
    path : path-like, optional
        A JSON Lines task file; the shipped ``datasets/tasks/tasks.jsonl`` by default.

    Returns
    -------
    list of dict
        One dict per task in file order, in the JSON shape (``tests`` as
        ``{"inputs", "expected"}`` objects) with ``difficulty`` (default ``"medium"``) and
        ``tags`` (default ``[]``) filled in.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        When ``split`` is not a known split, the file holds no tasks, or a record is invalid:
        the message names the file, the line and the field (bad JSON, a missing or mistyped
        field, an unknown field, an IR that does not validate, code that does not parse or
        lacks the entry point, a malformed test, a repeated id).

    Notes
    -----
    Blank lines are skipped. Every record is checked even when ``split`` filters it out, so a
    broken file fails the same way whichever split is asked for.

    Examples
    --------
    >>> records = task_records("train")
    >>> records[0]["id"], records[0]["entry_point"], records[0]["tests"][0]
    ('t001', 'add', {'inputs': {'a': 2, 'b': 3}, 'expected': 5})
    """
    if split is not None:
        check_choice("split", split, SPLITS)
    from lift_metrics._io import jsonl_values, read_text_file

    file = default_tasks_path() if path is None else Path(path)
    text = read_text_file(file, "task file")
    records: list[dict[str, Any]] = []
    first_line: dict[str, int] = {}
    lines = text.split("\n")
    for line_number, raw in jsonl_values(
        lines, lambda n, why: InputValueError(f"{file}, line {n}: not valid JSON: {why}")
    ):
        where = f"{file}, line {line_number}"
        try:
            record = _check_record(raw)
        except RecordError as exc:
            task = f" (task {raw['id']!r})" if isinstance(raw, dict) and "id" in raw else ""
            raise InputValueError(f"{where}{task}: {exc}") from None
        task_id = record["id"]
        if task_id in first_line:
            raise InputValueError(
                f"{where}: field 'id' repeats {task_id!r} from line {first_line[task_id]}"
            )
        first_line[task_id] = line_number
        records.append(record)
    if not records:
        raise InputValueError(f"task file holds no tasks: {file}")
    if split is None:
        return records
    return [record for record in records if record["split"] == split]


def load_tasks(
    split: str | None = None, *, path: str | os.PathLike[str] | None = None
) -> list[Example]:
    """Load the task dataset as ``dspy.Example`` objects with ``prompt`` as the input.

    Parameters
    ----------
    split, path
        As :func:`task_records`: the split to keep (``None`` keeps all of them) and the task
        file (the shipped ``datasets/tasks/tasks.jsonl`` by default).

    Returns
    -------
    list of dspy.Example
        One example per task, in file order, with the fields

        ============== ============================================================
        prompt         the request a user would type (the only input field)
        expected_ir    the expected IR as a dict in the IR JSON shape
        expected_code  a reference solution (one function)
        entry_point    the name of the function under test
        tests          I/O tests as ``(kwargs, expected)`` tuples
        task_id        the record's ``id`` (``"t001"``)
        split          ``"train"``, ``"dev"`` or ``"test"``
        difficulty     ``"easy"``, ``"medium"`` or ``"hard"``
        tags           a list of topic tags
        ============== ============================================================

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        As :func:`task_records`: an unknown split or an invalid record (file, line, field).

    Examples
    --------
    >>> dev = load_tasks("dev")
    >>> len(dev), sorted(dev[0].inputs().keys())
    (16, ['prompt'])
    >>> dev[0].entry_point, dev[0].tests[0]
    ('is_even', ({'n': 4}, True))
    """
    from dspy.primitives.example import Example

    examples = []
    for record in task_records(split, path=path):
        example = Example(
            prompt=record["prompt"],
            expected_ir=record["expected_ir"],
            expected_code=record["expected_code"],
            entry_point=record["entry_point"],
            tests=io_tests_from_json(record["tests"]),
            task_id=record["id"],
            split=record["split"],
            difficulty=record["difficulty"],
            tags=record["tags"],
        )
        examples.append(example.with_inputs("prompt"))
    return examples
