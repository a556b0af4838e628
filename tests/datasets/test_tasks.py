"""The task dataset (datasets/tasks/tasks.jsonl) and its loader (lift_metrics._tasks).

The data must be right before any metric or optimizer result built on it means anything:
every reference solution passes its own tests in the real sandbox, every expected IR validates
and satisfies its own constraints, and the splits are fixed.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lift_metrics._tasks import (
    DIFFICULTIES,
    SPLITS,
    default_tasks_path,
    io_tests_from_json,
    load_tasks,
    task_records,
)

TASKS_FILE = default_tasks_path()
RAW = [json.loads(line) for line in TASKS_FILE.read_text(encoding="utf-8").splitlines() if line]
BY_ID = {record["id"]: record for record in RAW}
IDS = [record["id"] for record in RAW]

# The fixed split rule the file was written with (see the dataset card): task tNNN goes to
# _SPLIT_CYCLE[(NNN - 1) % 8], so every block of 8 tasks gives 3 train, 2 dev and 3 test.
_SPLIT_CYCLE = ("train", "test", "dev", "train", "test", "train", "test", "dev")


def _is_json_native(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | str):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list):
        return all(_is_json_native(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_native(v) for k, v in value.items())
    return False


def _function_def(code: str) -> ast.FunctionDef:
    functions = [node for node in ast.parse(code).body if isinstance(node, ast.FunctionDef)]
    assert len(functions) == 1, "expected_code must define exactly one top-level function"
    return functions[0]


# ---------------------------------------------------------------------------------------------
# The data
# ---------------------------------------------------------------------------------------------


def test_dataset_size_and_difficulty_mix() -> None:
    assert len(RAW) >= 60
    difficulties = Counter(record["difficulty"] for record in RAW)
    assert set(difficulties) == set(DIFFICULTIES)
    assert difficulties["easy"] >= 15, "the 135M local model needs a fair number of easy tasks"
    for split in SPLITS:  # easy tasks are spread over every split
        assert any(r["difficulty"] == "easy" and r["split"] == split for r in RAW), split


def test_ids_and_entry_points_are_unique() -> None:
    assert len(set(IDS)) == len(IDS)
    assert all(re.fullmatch(r"t\d{3}", task_id) for task_id in IDS)
    entry_points = [record["entry_point"] for record in RAW]
    assert len(set(entry_points)) == len(entry_points)


def test_splits_are_fixed_and_disjoint() -> None:
    for record in RAW:
        number = int(record["id"][1:])
        assert record["split"] == _SPLIT_CYCLE[(number - 1) % 8], record["id"]
    sizes = Counter(record["split"] for record in RAW)
    assert sizes == {"train": 24, "dev": 16, "test": 24}
    by_split = {split: {ex.task_id for ex in load_tasks(split)} for split in SPLITS}
    assert not by_split["train"] & by_split["dev"]
    assert not by_split["train"] & by_split["test"]
    assert not by_split["dev"] & by_split["test"]
    assert by_split["train"] | by_split["dev"] | by_split["test"] == set(IDS)


@pytest.mark.parametrize("task_id", IDS)
def test_record_shape(task_id: str) -> None:
    record = BY_ID[task_id]
    assert f"`{record['entry_point']}(" in record["prompt"], "the prompt names the function"
    assert len(record["tests"]) >= 3
    for case in record["tests"]:
        assert set(case) == {"inputs", "expected"}
        assert _is_json_native(case["inputs"])
        assert _is_json_native(case["expected"])
    # a constant answer cannot pass: the tests tell a right solution from a lazy one
    assert len({json.dumps(case["expected"]) for case in record["tests"]}) >= 2
    assert record["tags"]
    assert all(isinstance(tag, str) for tag in record["tags"])


@pytest.mark.parametrize("task_id", IDS)
def test_expected_code_is_a_clean_reference(task_id: str) -> None:
    record = BY_ID[task_id]
    function = _function_def(record["expected_code"])
    assert function.name == record["entry_point"]
    assert ast.get_docstring(function), "reference solutions carry a docstring"
    assert function.returns is not None
    assert all(arg.annotation is not None for arg in function.args.args)
    called = {
        node.func.id
        for node in ast.walk(ast.parse(record["expected_code"]))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not called & {"print", "input", "open", "eval", "exec", "__import__"}


@pytest.mark.parametrize("task_id", IDS)
def test_expected_ir_validates_and_matches_the_code(task_id: str) -> None:
    from lift_metrics import IR, constraint_satisfied

    record = BY_ID[task_id]
    ir = IR.model_validate(record["expected_ir"])
    function = _function_def(record["expected_code"])
    assert ir.signature.name == function.name == record["entry_point"]
    assert [(p.name, p.type_hint) for p in ir.signature.parameters] == [
        (arg.arg, ast.unparse(arg.annotation) if arg.annotation else None)
        for arg in function.args.args
    ]
    assert function.returns is not None
    assert ir.signature.return_type == ast.unparse(function.returns)
    assert 2 <= len(ir.constraints) <= 5
    assert ir.effects
    assert ir.effects[-1].kind == "returns"
    for constraint in ir.constraints:  # the expected IR satisfies its own constraints
        assert constraint_satisfied(ir, constraint), constraint
    raises_in_code = any(isinstance(node, ast.Raise) for node in ast.walk(function))
    assert raises_in_code == any(effect.kind == "raises" for effect in ir.effects)


@pytest.fixture(scope="module")
def sandbox() -> Any:
    from lift_metrics.sandbox import get_default_sandbox

    return get_default_sandbox()


@pytest.mark.parametrize("task_id", IDS)
def test_expected_solution_passes_its_tests_in_the_sandbox(task_id: str, sandbox: Any) -> None:
    record = BY_ID[task_id]
    tests = io_tests_from_json(record["tests"])
    result = sandbox.run_tests(record["expected_code"], tests, entry_point=record["entry_point"])
    failures = [(o.index, o.actual_repr, o.error) for o in result.outcomes if not o.passed]
    assert result.status == "passed", (result.reason, failures)
    assert result.passed_count == result.total == len(tests)


def test_sandbox_check_can_fail(sandbox: Any) -> None:
    # control for the test above: a wrong solution to t001 (add) fails in the same harness
    record = BY_ID["t001"]
    wrong = record["expected_code"].replace("return a + b", "return a - b")
    tests = io_tests_from_json(record["tests"])
    result = sandbox.run_tests(wrong, tests, entry_point="add")
    assert result.status == "failed"
    assert result.passed_count == 1  # only add(0, 0) == 0 survives a - b


# ---------------------------------------------------------------------------------------------
# The loader
# ---------------------------------------------------------------------------------------------


def test_load_tasks_marks_prompt_as_the_only_input() -> None:
    examples = load_tasks()
    assert [ex.task_id for ex in examples] == IDS
    first = examples[0]
    assert set(first.inputs().keys()) == {"prompt"}
    assert {"expected_ir", "expected_code", "entry_point", "tests", "task_id"} <= set(
        first.labels().keys()
    )
    assert first.prompt == RAW[0]["prompt"]
    assert first.expected_ir == RAW[0]["expected_ir"]
    assert isinstance(first.expected_ir, dict)
    # tests become (kwargs, expected) tuples (source record t001: add(2, 3) == 5)
    assert first.tests[0] == ({"a": 2, "b": 3}, 5)
    assert all(isinstance(case, tuple) and len(case) == 2 for case in first.tests)


@pytest.mark.parametrize("split", SPLITS)
def test_load_tasks_filters_by_split(split: str) -> None:
    examples = load_tasks(split)
    expected_ids = [record["id"] for record in RAW if record["split"] == split]
    assert [ex.task_id for ex in examples] == expected_ids
    assert {ex.split for ex in examples} == {split}
    assert [r["id"] for r in task_records(split)] == expected_ids


def test_task_records_are_fresh_plain_dicts() -> None:
    records = task_records()
    assert records == RAW  # the file already carries difficulty and tags, so nothing is added
    records[0]["tests"].clear()
    assert task_records()[0]["tests"], "each call reads the file again"


def test_unknown_split_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"split must be one of .*'validation'"):
        load_tasks("validation")


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(FileNotFoundError, match=r"task file not found: .*nope\.jsonl"):
        load_tasks(path=missing)


def test_empty_file_is_rejected(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="holds no tasks"):
        task_records(path=empty)


def test_custom_file_with_defaults(tmp_path: Path) -> None:
    record = {k: v for k, v in RAW[0].items() if k not in ("difficulty", "tags")}
    custom = tmp_path / "mine.jsonl"
    custom.write_text("\n" + json.dumps(record) + "\n", encoding="utf-8")  # blank lines skipped
    [example] = load_tasks(path=str(custom))
    assert example.difficulty == "medium"
    assert example.tags == []
    assert example.task_id == "t001"


def _mutated(change: Any) -> dict[str, Any]:
    record = json.loads(json.dumps(RAW[1]))
    change(record)
    return record


BAD_RECORDS = {
    "missing field": (lambda r: r.pop("tests"), r"missing required field 'tests'"),
    "unknown field": (lambda r: r.update(test=[]), r"unknown field\(s\) \['test'\]"),
    "wrong type": (lambda r: r.update(prompt=3), r"field 'prompt' must be a JSON str, got int"),
    "empty prompt": (lambda r: r.update(prompt="  "), r"field 'prompt' must not be empty"),
    "bad split": (lambda r: r.update(split="val"), r"field 'split' must be one of"),
    "bad difficulty": (
        lambda r: r.update(difficulty="trivial"),
        r"field 'difficulty' must be one of",
    ),
    "bad IR": (
        lambda r: r["expected_ir"]["effects"].append({"kind": "teleports"}),
        r"field 'expected_ir' is not a valid IR: effects\.1\.kind",
    ),
    "IR names another function": (
        lambda r: r["expected_ir"]["signature"].update(name="other"),
        r"field 'expected_ir' names the function 'other' but 'entry_point' is 'reverse_string'",
    ),
    "code does not parse": (
        lambda r: r.update(expected_code="def reverse_string(text:\n"),
        r"field 'expected_code' does not parse",
    ),
    "entry point not defined": (
        lambda r: r.update(expected_code="def other() -> None:\n    pass\n"),
        r"field 'expected_code' defines no top-level function 'reverse_string'",
    ),
    "test without expected": (
        lambda r: r["tests"][2].pop("expected"),
        r"field tests\[2\] must have exactly the keys .*missing 'expected'",
    ),
    "test inputs not an object": (
        lambda r: r["tests"][0].update(inputs=["hello"]),
        r"field tests\[0\]\.inputs must be an object of keyword arguments, got list",
    ),
    "no tests": (lambda r: r.update(tests=[]), r"field 'tests' must hold at least one test"),
}


@pytest.mark.parametrize("case", sorted(BAD_RECORDS))
def test_bad_record_names_line_and_field(case: str, tmp_path: Path) -> None:
    change, message = BAD_RECORDS[case]
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(RAW[0]) + "\n" + json.dumps(_mutated(change)) + "\n")
    with pytest.raises(ValueError, match=r"tasks\.jsonl, line 2 \(task 't002'\): " + message):
        task_records("train", path=path)  # checked although the split filters it out


def test_bad_json_and_repeated_id_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(RAW[0]) + "\n{not json\n")
    with pytest.raises(ValueError, match=r"line 2: not valid JSON"):
        task_records(path=path)
    path.write_text(json.dumps(RAW[0]) + "\n\n" + json.dumps(RAW[0]) + "\n")
    with pytest.raises(ValueError, match=r"line 3: field 'id' repeats 't001' from line 1"):
        task_records(path=path)
    path.write_text("[1, 2]\n")
    with pytest.raises(ValueError, match=r"line 1: a task must be a JSON object, got list"):
        task_records(path=path)


def test_io_tests_from_json_rejects_non_names() -> None:
    with pytest.raises(ValueError, match=r"tests\[0\]\.inputs has a key that is not a name"):
        io_tests_from_json([{"inputs": {"not a name": 1}, "expected": 1}])
    with pytest.raises(ValueError, match="tests must be a list"):
        io_tests_from_json({"inputs": {}, "expected": 1})


def test_importing_the_loader_does_not_import_dspy() -> None:
    code = (
        "import sys, lift_metrics._tasks as t; t.task_records('dev'); print('dspy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "False"


def test_dataset_card_documents_every_field() -> None:
    card = (TASKS_FILE.parent / "README.md").read_text(encoding="utf-8")
    for field in RAW[0]:
        assert f"`{field}`" in card, field
    assert "Apache-2.0" in card
    assert f"{len(RAW)} tasks" in card
