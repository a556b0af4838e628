"""Bad input on the command line: one stderr line naming what was wrong, exit code 2.

Table-driven over the subcommands that read files given by the user (issue: "every failure
exits the way the README says"). Each case also checks that nothing was written to stdout
that looks like a partial result and that no traceback escaped.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from lift_metrics._paths import datasets_dir
from lift_metrics.cli import main

Case = Callable[[Path], list[str]]


def _deep_json(tmp: Path) -> list[str]:
    path = tmp / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    return ["report", str(path)]


def _directory_as_file(tmp: Path) -> list[str]:
    return ["report", str(tmp)]


def _too_long_path(tmp: Path) -> list[str]:
    return ["report", str(tmp / ("x" * 5000))]


def _missing_file(tmp: Path) -> list[str]:
    return ["ab", str(tmp / "missing.jsonl")]


def _not_utf8(tmp: Path) -> list[str]:
    path = tmp / "latin1.jsonl"
    path.write_bytes(b'{"tier": "caf\xe9"}\n')
    return ["report", str(path)]


def _huge_integer(tmp: Path) -> list[str]:
    baseline = tmp / "baseline.json"
    current = tmp / "current.json"
    record = json.loads((datasets_dir() / "examples" / "baseline_report.json").read_text())
    baseline.write_text(json.dumps(record))
    record["results"][0]["cost_usd"] = 10**400  # a JSON integer no float can hold
    current.write_text(json.dumps(record))
    return ["compare", "--baseline", str(baseline), "--current", str(current)]


def _unknown_option(tmp: Path) -> list[str]:
    return ["report", "--no-such-option"]


def _bad_choice(tmp: Path) -> list[str]:
    return ["analyze", str(tmp), "--format", "yaml"]


def _missing_required(tmp: Path) -> list[str]:
    return ["compare", "--baseline", str(tmp / "a.json")]


def _bad_float(tmp: Path) -> list[str]:
    return ["report", "--confidence-level", "high"]


def _surrogate_tier(tmp: Path) -> list[str]:
    path = tmp / "tiers.jsonl"
    record = {"tier": "T\ud800", "passed": True, "impl_rate": 0.5, "cost_usd": 0.2}
    path.write_text(json.dumps(record | {"duration_seconds": 3.0}) + "\n")  # ASCII: \\ud800
    return ["report", str(path)]


def _surrogate_report_name(tmp: Path) -> list[str]:
    record = json.loads((datasets_dir() / "examples" / "baseline_report.json").read_text())
    record["name"] = "base\udcff"
    path = tmp / "named.json"
    path.write_text(json.dumps(record))
    return ["compare", "--baseline", str(path), "--current", str(path)]


def _not_utf8_in(option: str) -> Case:
    def case(tmp: Path) -> list[str]:
        path = tmp / "latin1.jsonl"
        path.write_bytes(b'{"ok": 1}\n{"name": "caf\xe9"}\n')
        command = {
            "--data": ["validate", "pkg:metric", "--data", str(path), "--out", str(tmp / "o")],
            "--weights": ["validate", "ir_quality", "--weights", str(path), "--out", str(tmp)],
            "--dataset": ["evaluate", "--dataset", str(path), "--output-dir", str(tmp / "o")],
            "config": ["optimize", str(path), "--check"],
        }
        return command[option]

    return case


def _directory_for(option: str) -> Case:
    def case(tmp: Path) -> list[str]:
        folder = tmp / "folder"
        folder.mkdir()
        command = {
            "--data": ["validate", "pkg:metric", "--data", str(folder), "--out", str(tmp / "o")],
            "--weights": ["validate", "ir_quality", "--weights", str(folder), "--out", str(tmp)],
            "--dataset": ["evaluate", "--dataset", str(folder), "--output-dir", str(tmp / "o")],
            "--program": ["evaluate", "--program", str(folder), "--output-dir", str(tmp / "o")],
            "config": ["optimize", str(folder), "--check"],
            "compare": ["compare", "--baseline", str(folder), "--current", str(folder)],
        }
        return command[option]

    return case


CASES: dict[str, tuple[Case, str]] = {
    "a lone surrogate in a tier name": (_surrogate_tier, "field 'tier' must be Unicode text"),
    "a lone surrogate in a report name": (_surrogate_report_name, "named.json: 'name' must be"),
    **{
        f"{option}: a file that is not UTF-8": (
            _not_utf8_in(option),
            "latin1.jsonl: line 2 is not UTF-8 text",
        )
        for option in ("--data", "--weights", "--dataset", "config")
    },
    **{
        f"{option}: a directory given as a file": (_directory_for(option), "is a directory")
        for option in ("--data", "--weights", "--dataset", "--program", "config", "compare")
    },
    "json nested 100,000 deep": (_deep_json, "nested too deeply"),
    "a directory given as a file": (_directory_as_file, "is a directory"),
    "a path longer than the OS allows": (_too_long_path, "too long"),
    "a missing file": (_missing_file, "missing.jsonl"),
    "a file that is not UTF-8": (_not_utf8, "latin1.jsonl"),
    "a number too large for a float": (_huge_integer, "cost_usd"),
    "an unknown option": (_unknown_option, "--no-such-option"),
    "a choice not offered": (_bad_choice, "--format"),
    "a missing required option": (_missing_required, "--current"),
    "a value of the wrong type": (_bad_float, "--confidence-level"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_one_line_and_exit_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_args, must_name = CASES[name]
    args = make_args(tmp_path)
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own errors leave through SystemExit
        code = exc.code
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (name, code, err)
    assert len(lines) == 1, (name, err)
    assert "Traceback" not in err and lines[0].startswith("lift-metrics"), err
    assert must_name in lines[0], (name, lines[0])
    assert out == "", (name, out)
    for arg in args:  # a file is named once, not once per layer that saw the error
        if arg.startswith(str(tmp_path)):
            assert lines[0].count(arg) <= 1, (name, lines[0])


def test_a_closed_pipe_ends_quietly() -> None:
    """``lift-metrics report --format json | head``: no traceback, no error line, exit 141."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write fails (EPIPE)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "lift_metrics.cli", "report", "--format", "json"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.stderr == "", done.stderr
    assert done.returncode == 141


def test_report_json_is_valid_when_the_reader_stays(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)


def test_evaluate_runs_above_the_bound_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lift_metrics.optimizers import _local_lm

    def no_lm(spec: object) -> None:
        raise AssertionError("the bound must be checked before an LM is set up")

    monkeypatch.setattr(_local_lm, "resolve_lm", no_lm)
    out = tmp_path / "o"
    assert main(["evaluate", "--runs", "5000", "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "runs must be <= 1,000, got 5,000" in err and "\n" not in err
    assert not out.exists()
