"""Bad input on the command line: one stderr line naming what was wrong, exit code 2.

Table-driven over every subcommand (report, compare, ab, analyze, validate, optimize,
evaluate; issue: "every failure exits the way the README says"). Each case checks exit code
2, exactly one stderr line that starts with ``lift-metrics`` and names the file, record or
option, no traceback, nothing on stdout that looks like a partial result, and no file
written anywhere under the test's folder (the working directory during the case). No LM is
built: the cases must be refused before that, and a fixture fails the test if one is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from lift_metrics._paths import configs_dir, datasets_dir
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


# ---------------------------------------------------------------- report, ab, compare, analyze


def _example(name: str) -> Path:
    return datasets_dir() / "examples" / name


def _report_bad_record(tmp: Path) -> list[str]:
    lines = _example("tier_runs.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["passed"] = "yes"
    path = tmp / "tiers.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    return ["report", str(path)]


def _report_empty(tmp: Path) -> list[str]:
    path = tmp / "empty.jsonl"
    path.write_text("")
    return ["report", str(path)]


def _report_bad_weight(tmp: Path) -> list[str]:
    return ["report", "--pass-weight", "-1"]


def _ab_missing_field(tmp: Path) -> list[str]:
    lines = _example("ab_runs.jsonl").read_text().splitlines()
    record = json.loads(lines[3])
    del record["success"]
    path = tmp / "runs.jsonl"
    path.write_text("\n".join([*lines[:3], json.dumps(record), *lines[4:]]) + "\n")
    return ["ab", str(path)]


def _ab_one_arm(tmp: Path) -> list[str]:
    lines = _example("ab_runs.jsonl").read_text().splitlines()
    path = tmp / "one_arm.jsonl"
    path.write_text("\n".join(line for line in lines if '"arm": "control"' in line) + "\n")
    return ["ab", str(path)]


def _ab_too_many_resamples(tmp: Path) -> list[str]:
    return ["ab", str(_example("ab_runs.jsonl")), "--n-resamples", str(10**12)]


def _ab_level_1(tmp: Path) -> list[str]:
    return ["ab", str(_example("ab_runs.jsonl")), "--confidence-level", "1"]


def _compare_not_an_object(tmp: Path) -> list[str]:
    path = tmp / "list.json"
    path.write_text("[1, 2]")
    return ["compare", "--baseline", str(path), "--current", str(_example("current_report.json"))]


def _compare_no_results(tmp: Path) -> list[str]:
    record = json.loads(_example("baseline_report.json").read_text())
    del record["results"]
    path = tmp / "no_results.json"
    path.write_text(json.dumps(record))
    return ["compare", "--baseline", str(_example("baseline_report.json")), "--current", str(path)]


def _analyze_missing(tmp: Path) -> list[str]:
    return ["analyze", str(tmp / "absent.py")]


# ---------------------------------------------------------------------------------- validate

_METRIC_MODULE = "def good(item):\n    return item['guess']\n"


def _labels(tmp: Path, bad: bool = False) -> Path:
    rows = [{"id": f"u{i}", "guess": y, "human_score": y} for i, y in enumerate([0, 0.3, 0.6, 1])]
    if bad:
        rows[1]["human_score"] = "high"
    path = tmp / "labels.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _validate_unknown_metric(tmp: Path) -> list[str]:
    return ["validate", "nonsense", "--out", str(tmp / "out")]


def _validate_missing_module(tmp: Path) -> list[str]:
    return ["validate", "nomodule:metric", "--data", str(_labels(tmp)), "--out", str(tmp / "out")]


def _validate_missing_module_after_a_builtin(tmp: Path) -> list[str]:
    return ["validate", "ir_quality", "nomodule:metric", "--out", str(tmp / "out")]


def _validate_missing_data(tmp: Path) -> list[str]:
    return ["validate", "ir_quality", "--data", str(tmp / "absent.jsonl"), "--out", str(tmp / "o")]


def _validate_bad_label(tmp: Path) -> list[str]:
    (tmp / "my_metric_mod.py").write_text(_METRIC_MODULE)
    data = _labels(tmp, bad=True)
    return ["validate", "my_metric_mod:good", "--data", str(data), "--out", str(tmp / "out")]


def _validate_out_is_a_file(tmp: Path) -> list[str]:
    (tmp / "my_metric_mod.py").write_text(_METRIC_MODULE)
    (tmp / "report").write_text("a file where the report folder should go")
    data = _labels(tmp)
    return ["validate", "my_metric_mod:good", "--data", str(data), "--out", str(tmp / "report")]


def _validate_bad_folds(tmp: Path) -> list[str]:
    return ["validate", "ir_quality", "--folds", "1", "--out", str(tmp / "out")]


# ---------------------------------------------------------------------------------- optimize


def _quick_with(tmp: Path, old: str, new: str) -> Path:
    text = (configs_dir() / "quick.toml").read_text()
    assert old in text, f"quick.toml does not hold {old!r}; update the case"
    path = tmp / "run.toml"
    path.write_text(text.replace(old, new, 1).replace('output_dir = "runs/quick"', ""))
    return path


def _optimize_missing_config(tmp: Path) -> list[str]:
    return ["optimize", str(tmp / "absent.toml")]


def _optimize_bad_toml(tmp: Path) -> list[str]:
    path = tmp / "broken.toml"
    path.write_text("name = [\n")
    return ["optimize", str(path)]


def _optimize_unknown_key(tmp: Path) -> list[str]:
    return ["optimize", str(_quick_with(tmp, 'name = "quick"', 'name = "quick"\ncolour = 1'))]


def _optimize_hot_temperature(tmp: Path) -> list[str]:
    path = _quick_with(tmp, "temperature = 0.0", 'temperature = "hot"')
    return ["optimize", str(path), "--output-dir", str(tmp / "out")]


def _optimize_output_is_a_file(tmp: Path) -> list[str]:
    (tmp / "out").write_text("a file where the run folder should go")
    return ["optimize", str(configs_dir() / "quick.toml"), "--output-dir", str(tmp / "out")]


def _optimize_bad_mlflow(tmp: Path) -> list[str]:
    config = str(configs_dir() / "quick.toml")
    return ["optimize", config, "--output-dir", str(tmp / "out"), "--mlflow", "htp://x"]


# ---------------------------------------------------------------------------------- evaluate


def _evaluate(tmp: Path, *args: str) -> list[str]:
    return ["evaluate", "--quiet", "--output-dir", str(tmp / "out"), *args]


def _evaluate_program_without_metadata(tmp: Path) -> list[str]:
    path = tmp / "program.json"
    path.write_text('{"ir_step.predict": {}}')
    return _evaluate(tmp, "--program", str(path))


def _evaluate_program_not_json(tmp: Path) -> list[str]:
    path = tmp / "program.json"
    path.write_text('{"metadata": ')
    return _evaluate(tmp, "--program", str(path))


def _evaluate_limit_0(tmp: Path) -> list[str]:
    return _evaluate(tmp, "--limit", "0")


def _evaluate_runs_0(tmp: Path) -> list[str]:
    return _evaluate(tmp, "--runs", "0")


def _evaluate_nan_timeout(tmp: Path) -> list[str]:
    return _evaluate(tmp, "--timeout-s", "nan")


def _evaluate_output_is_a_file(tmp: Path) -> list[str]:
    (tmp / "out").write_text("a file where the results should go")
    return _evaluate(tmp)


def _evaluate_missing_dataset(tmp: Path) -> list[str]:
    return _evaluate(tmp, "--dataset", str(tmp / "absent.jsonl"))


def _evaluate_bad_config(tmp: Path) -> list[str]:
    return _evaluate(tmp, "--config", str(_quick_with(tmp, "max_tokens = 320", "max_tokens = 0")))


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
            "--data": ["validate", "ir_quality", "--data", str(path), "--out", str(tmp / "o")],
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
            "--data": ["validate", "ir_quality", "--data", str(folder), "--out", str(tmp / "o")],
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
    "report: a record with a field of the wrong type": (_report_bad_record, "(line 2)"),
    "report: an empty file": (_report_empty, "empty.jsonl"),
    "report: a negative weight": (_report_bad_weight, "--pass-weight must be >= 0"),
    "ab: a record without a required field": (_ab_missing_field, "(line 4)"),
    "ab: a file with one arm": (_ab_one_arm, "one_arm.jsonl"),
    "ab: resamples beyond the cap": (_ab_too_many_resamples, "--n-resamples must be <="),
    "ab: a confidence level of 1": (_ab_level_1, "--confidence-level must be in (0, 1)"),
    "compare: a report that is not an object": (_compare_not_an_object, "list.json"),
    "compare: a report without results": (_compare_no_results, "no_results.json"),
    "analyze: a missing path": (_analyze_missing, "absent.py"),
    "validate: an unknown metric": (_validate_unknown_metric, "'nonsense'"),
    "validate: a metric module that does not exist": (_validate_missing_module, "'nomodule'"),
    "validate: a missing module after a built-in metric": (
        _validate_missing_module_after_a_builtin,
        "'nomodule'",
    ),
    "validate: a missing data file": (_validate_missing_data, "absent.jsonl"),
    "validate: a label that is not a number": (_validate_bad_label, "labels.jsonl:2"),
    "validate: --out is a file": (_validate_out_is_a_file, "--out"),
    "validate: too few folds": (_validate_bad_folds, "--folds"),
    "optimize: a missing config": (_optimize_missing_config, "absent.toml"),
    "optimize: a config that is not TOML": (_optimize_bad_toml, "broken.toml"),
    "optimize: an unknown config key": (_optimize_unknown_key, "'colour'"),
    "optimize: a temperature that is not a number": (_optimize_hot_temperature, "temperature"),
    "optimize: --output-dir is a file": (_optimize_output_is_a_file, "output_dir"),
    "optimize: a malformed --mlflow URI": (_optimize_bad_mlflow, "--mlflow"),
    "evaluate: a program without metadata": (_evaluate_program_without_metadata, "'metadata'"),
    "evaluate: a program that is not JSON": (_evaluate_program_not_json, "program.json"),
    "evaluate: --limit 0": (_evaluate_limit_0, "--limit"),
    "evaluate: --runs 0": (_evaluate_runs_0, "--runs"),
    "evaluate: --timeout-s nan": (_evaluate_nan_timeout, "--timeout-s"),
    "evaluate: --output-dir is a file": (_evaluate_output_is_a_file, "--output-dir"),
    "evaluate: a missing dataset": (_evaluate_missing_dataset, "absent.jsonl"),
    "evaluate: a config with max_tokens = 0": (_evaluate_bad_config, "max_tokens"),
}


def _files(folder: Path) -> set[str]:
    """Every path under ``folder`` but Python's own bytecode cache (an imported metric's)."""
    paths = (path.relative_to(folder) for path in folder.rglob("*"))
    return {str(path) for path in paths if "__pycache__" not in path.parts}


@pytest.fixture(autouse=True)
def _no_lm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad input is refused before an LM is built; building one fails the test."""
    import lift_metrics.lm as lm_package
    from lift_metrics.optimizers import _runner

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("an LM was built: the input should have been refused first")

    monkeypatch.setattr(lm_package, "resolve_lm", refuse)
    monkeypatch.setattr(_runner, "_resolve_lms", refuse)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_one_line_and_exit_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_args, must_name = CASES[name]
    args = make_args(tmp_path)
    monkeypatch.chdir(tmp_path)  # default output folders (runs/evaluate) land here
    monkeypatch.syspath_prepend(str(tmp_path))  # metric modules written by a case
    before = _files(tmp_path)
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own errors leave through SystemExit
        code = exc.code
    out, err = capsys.readouterr()
    assert _files(tmp_path) == before, (name, _files(tmp_path) - before)
    lines = err.strip().splitlines()
    assert code == 2, (name, code, err)
    assert len(lines) == 1, (name, err)
    assert "Traceback" not in err, err
    assert lines[0].startswith("lift-metrics"), err
    assert must_name in lines[0], (name, lines[0])
    assert out == "", (name, out)
    for arg in args:  # a file is named once, not once per layer that saw the error
        if arg.startswith(str(tmp_path)):
            assert lines[0].count(arg) <= 1, (name, lines[0])


@pytest.mark.slow
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
    import lift_metrics.lm as lm_package

    def no_lm(spec: object) -> None:
        raise AssertionError("the bound must be checked before an LM is set up")

    monkeypatch.setattr(lm_package, "resolve_lm", no_lm)
    out = tmp_path / "o"
    assert main(["evaluate", "--runs", "5000", "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "runs must be <= 1,000, got 5,000" in err
    assert "\n" not in err
    assert not out.exists()
