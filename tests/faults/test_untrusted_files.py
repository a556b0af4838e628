"""Fault injection: input files that load but cannot be right are refused before any work.

Every file a command reads is untrusted text: a number JSON does not have (``NaN``,
``Infinity``, ``1e400``), an integer of more than 4300 digits (past Python's limit on
converting text to int), a ``.gz`` file that does not decompress, or a saved program whose
state loads but cannot work (garbage demonstrations, an instruction that is not text, a
predictor LM of its own, a code step setting out of range). Read unchecked, each gives a
traceback or, worse, a run in which every example scores 0 and the command exits 0. The bar:
exit 2, exactly one stderr line naming the file (and line or key), no traceback, nothing
written, no LM built.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lift_metrics.cli import main
from lift_metrics.optimizers._pipeline import LiftPipeline
from lift_metrics.optimizers._provenance import save_program

HUGE_INTEGER = "1" * 5000  # more digits than int() converts from text (4300)
ADD = "def add(a, b):\n    return a + b\n"
TASK = {"task_id": "t1", "entry_point": "add", "prompt": "", "tests": []}


@pytest.fixture(autouse=True)
def _no_lm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad input is refused before an LM is built; building one fails the test."""
    import lift_metrics.lm as lm_package

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("an LM was built: the input should have been refused first")

    monkeypatch.setattr(lm_package, "resolve_lm", refuse)


def _files(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


def _refused(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run the command; assert exit 2, one line, nothing written; return the line."""
    before = _files(tmp_path)
    code = main(args)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err, err
    assert _files(tmp_path) == before, _files(tmp_path) - before
    return lines[0]


# --------------------------------------------------------------------------- score


def _tasks_line(expected: str) -> str:
    return (
        '{"task_id": "t1", "entry_point": "add", "prompt": "", "tests": ['
        '{"inputs": {"a": 1, "b": 2}, "expected": 3}, '
        f'{{"inputs": {{"a": 0, "b": 0}}, "expected": {expected}}}]}}\n'
    )


TASK_FILES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "NaN as an expected value": (
        lambda tmp: _write(tmp / "tasks.jsonl", _tasks_line("NaN")),
        "line 1: not valid JSON (NaN is not a JSON value)",
    ),
    "Infinity as an expected value": (
        lambda tmp: _write(tmp / "tasks.jsonl", _tasks_line("-Infinity")),
        "line 1: not valid JSON (-Infinity is not a JSON value)",
    ),
    "a float beyond a float's range": (
        lambda tmp: _write(tmp / "tasks.jsonl", _tasks_line("1e400")),
        "line 1: not valid JSON (the number 1e400 is too large for a float)",
    ),
    "an integer of 5000 digits": (
        lambda tmp: _write(tmp / "tasks.jsonl", _tasks_line(HUGE_INTEGER)),
        "line 1: not valid JSON (an integer has more than 4300 digits)",
    ),
    "a gzip file cut short": (
        lambda tmp: _write_bytes(tmp / "tasks.jsonl.gz", _gzipped_tasks()[:40]),
        "tasks.jsonl.gz: not a readable gzip file",
    ),
    "a gzip file with corrupt data": (
        lambda tmp: _write_bytes(tmp / "tasks.jsonl.gz", _corrupt(_gzipped_tasks())),
        "tasks.jsonl.gz: not a readable gzip file",
    ),
}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _gzipped_tasks() -> bytes:
    return gzip.compress(_tasks_line("0").encode() * 200)


def _corrupt(data: bytes) -> bytes:
    """The gzip header intact, the deflate stream overwritten (zlib.error when read)."""
    return data[:20] + bytes(64) + data[84:]


@pytest.mark.parametrize("name", sorted(TASK_FILES))
def test_score_refuses_a_task_file_that_is_not_json_as_read(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make, must_name = TASK_FILES[name]
    tasks = make(tmp_path)
    samples = _write(tmp_path / "s.jsonl", json.dumps({"task_id": "t1", "solution": ADD}) + "\n")
    out = tmp_path / "out"
    line = _refused(
        ["score", str(samples), "--tasks", str(tasks), "--output", str(out), "--no-progress"],
        tmp_path,
        capsys,
    )
    assert str(tasks) in line
    assert must_name in line


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (HUGE_INTEGER, "an integer has more than 4300 digits"),
        ("NaN", "NaN is not a JSON value"),
    ],
)
def test_score_refuses_a_samples_file_with_a_number_json_lacks(
    value: str, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = _write(
        tmp_path / "s.jsonl",
        json.dumps({"task_id": "t001", "solution": ADD})
        + "\n"
        + f'{{"task_id": "t001", "solution": "x", "sample_id": {value}}}\n',
    )
    line = _refused(
        ["score", str(samples), "--tasks", "project", "--output", str(tmp_path / "o")],
        tmp_path,
        capsys,
    )
    assert f"{samples}: line 2: not valid JSON ({reason})" in line


# --------------------------------------------------------------------------- evaluate --program


def _state(tmp_path: Path) -> dict[str, Any]:
    path = save_program(LiftPipeline(), tmp_path / "saved.json")
    state: dict[str, Any] = json.loads(path.read_text())
    path.unlink()
    return state


def _set(state: dict[str, Any], keys: str, value: Any) -> dict[str, Any]:
    *path, last = keys.split(".")
    node: Any = state
    for key in path:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[last] = value
    return state


# name -> (change to a saved program's state, what the error line must name)
CORRUPTIONS: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "garbage demonstrations": (
        lambda s: _set(s, "to_code.demos", [17, "x"]),
        "to_code.demos[0] must be an object, got int 17",
    ),
    "a demonstration without the predictor's fields": (
        lambda s: _set(s, "to_ir.demos", [{"question": "q", "answer": "a"}]),
        "to_ir.demos[0] must hold an input field (prompt) and an output field (ir)",
    ),
    "a demonstration whose text field is a number": (
        lambda s: _set(s, "to_code.demos", [{"prompt": "p", "header": "def f():", "body": 3}]),
        "to_code.demos[0].body must be a string",
    ),
    "an integer instruction": (
        lambda s: _set(s, "to_ir.signature.instructions", 42),
        "to_ir.signature.instructions must be a non-empty string, got int 42",
    ),
    "an empty instruction": (
        lambda s: _set(s, "to_code.signature.instructions", "  "),
        "to_code.signature.instructions must be a non-empty string",
    ),
    "a field list of the wrong length": (
        lambda s: _set(s, "to_code.signature.fields", []),
        "to_code.signature.fields must be a list of 3 objects",
    ),
    "a bogus predictor LM": (
        lambda s: _set(s, "to_code.lm", {"model": "nonexistent/garbage"}),
        "to_code.lm must be null",
    ),
    "code_max_tokens of 10**12": (
        lambda s: _set(s, "pipeline.code_max_tokens", 10**12),
        "pipeline.code_max_tokens must be <= 32,768",
    ),
    "code_samples of 0": (
        lambda s: _set(s, "pipeline.code_samples", 0),
        "pipeline.code_samples must be >= 1",
    ),
    "an unknown pipeline setting": (
        lambda s: _set(s, "pipeline.temperature", 0.5),
        "pipeline: unknown key 'temperature'",
    ),
    "a predictor missing": (
        lambda s: s.pop("to_ir"),
        "the state has no 'to_ir'",
    ),
    "an unknown predictor": (
        lambda s: _set(s, "to_tests", {}),
        "unknown key 'to_tests'",
    ),
    "traces that are not a list": (
        lambda s: _set(s, "to_ir.traces", "none"),
        "to_ir.traces must be a list",
    ),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_evaluate_refuses_a_corrupted_program(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    change, must_name = CORRUPTIONS[name]
    state = _state(tmp_path)
    change(state)
    program = _write(tmp_path / "program.json", json.dumps(state))
    monkeypatch.chdir(tmp_path)
    args = ["evaluate", "--quiet", "--program", str(program), "--output-dir", str(tmp_path / "o")]
    line = _refused(args, tmp_path, capsys)
    assert f"{program}: " in line
    assert must_name in line


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (f'{{"metadata": {{"dependency_versions": {{}}}}, "n": {HUGE_INTEGER}}}', "4300 digits"),
        ('{"metadata": {"dependency_versions": {}}, "n": NaN}', "NaN is not a JSON value"),
    ],
)
def test_evaluate_refuses_a_program_file_with_a_number_json_lacks(
    text: str, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = _write(tmp_path / "program.json", text)
    args = ["evaluate", "--quiet", "--program", str(program), "--output-dir", str(tmp_path / "o")]
    line = _refused(args, tmp_path, capsys)
    assert f"{program}: not valid JSON" in line
    assert reason in line


def test_a_saved_program_still_loads_whole(tmp_path: Path) -> None:
    import dspy

    from lift_metrics.optimizers._provenance import load_program

    program = LiftPipeline(code_samples=2, code_max_tokens=256)
    program.to_ir.signature = program.to_ir.signature.with_instructions("Describe it as an IR.")
    program.to_code.demos = [
        dspy.Example(prompt="p", header="def f():", body="    return 1", augmented=True)
    ]
    program.to_ir.demos = [dspy.Example(prompt="p", ir={"intent": {"description": "d"}})]
    loaded = load_program(save_program(program, tmp_path / "program.json"))
    assert loaded.to_ir.signature.instructions == "Describe it as an IR."
    assert loaded.to_code.demos[0]["body"] == "    return 1"
    assert (loaded.code_samples, loaded.code_max_tokens) == (2, 256)


# --------------------------------------------------------------------------- TOML


def test_optimize_refuses_a_config_with_an_integer_of_5000_digits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _write(
        tmp_path / "run.toml",
        f'name = "t"\nseed = {HUGE_INTEGER}\n[optimizer]\nname = "copro"\n[lm]\nmodel = "local"\n',
    )
    line = _refused(["optimize", str(config), "--check"], tmp_path, capsys)
    assert f"{config}: not valid TOML: an integer has more than 4300 digits" in line
