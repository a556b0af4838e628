"""The report, compare and ab commands, driven through lift_metrics.cli.main."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lift_metrics.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "datasets" / "examples"
BASELINE = str(EXAMPLES / "baseline_report.json")
CURRENT = str(EXAMPLES / "current_report.json")


def test_report_text_default_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report"]) == 0
    out = capsys.readouterr().out
    for expected in ("T0", "T3", "grade", "uplift vs T0", "pass rate variance", "cost of pass"):
        assert expected in out


def test_report_json_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "runs.jsonl"
    lines = [
        {"tier": "base", "passed": True, "impl_rate": 0.9, "cost_usd": 0.2, "duration_seconds": 3},
        {
            "tier": "broken",
            "passed": False,
            "impl_rate": 0.2,
            "cost_usd": 0.4,
            "duration_seconds": 5,
        },
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert main(["report", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    broken = data["tiers"][1]
    assert broken["grade"] == "F"
    assert broken["cost_of_pass"] is None
    assert broken["cost_of_pass_is_infinite"] is True
    assert data["tiers"][0]["composite"]["median"] == pytest.approx(0.95)
    assert main(["report", str(path), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("## Tier report")
    assert "∞" in md
    assert "| broken |" in md


def test_report_bad_input_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text('{"tier": "T0", "passed": true}\n')
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert "record 0 (line 1): missing required field 'impl_rate'" in err
    assert main(["report", str(tmp_path / "nope.jsonl")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_compare_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--baseline", BASELINE, "--current", CURRENT]) == 0
    out = capsys.readouterr().out
    assert "regression" in out
    assert "gpt-4o/parse_csv" in out
    args = ["compare", "--baseline", BASELINE, "--current", CURRENT, "--fail-on-regression"]
    assert main(args) == 1
    capsys.readouterr()
    # the same report against itself has no regression
    assert (
        main(["compare", "--baseline", BASELINE, "--current", BASELINE, "--fail-on-regression"])
        == 0
    )
    capsys.readouterr()
    # a threshold above every drop turns the regressions into unchanged cases
    assert main([*args, "--threshold", "1.0"]) == 0


def test_compare_json_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["compare", "--baseline", BASELINE, "--current", CURRENT]
    assert main([*base, "--format", "json", "--threshold", "0.1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["threshold"] == 0.1
    assert data["has_regressions"] is True
    assert "gpt-4o/roman_numerals" in data["new"]
    assert "gpt-4o/binary_search" in data["removed"]
    assert main([*base, "--format", "markdown"]) == 0
    assert "| status | case | baseline | current | delta |" in capsys.readouterr().out
    assert main([*base, "--threshold", "-1"]) == 2
    assert "threshold must be >= 0" in capsys.readouterr().err


def test_ab_text_json_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    runs = str(EXAMPLES / "ab_runs.jsonl")
    assert main(["ab", runs, "--n-resamples", "2000"]) == 0
    out = capsys.readouterr().out
    assert "decision (three gates): prefer treatment" in out
    assert "Paired deltas" in out
    assert "solved per $" in out
    assert main(["ab", runs, "--n-resamples", "2000", "--seed", "5", "--format", "json"]) == 0
    first = capsys.readouterr().out
    assert main(["ab", runs, "--n-resamples", "2000", "--seed", "5", "--format", "json"]) == 0
    assert capsys.readouterr().out == first  # fixed seed: identical output
    data = json.loads(first)
    assert data["treatment"] == "treatment"
    assert data["n_pairs"] == 30
    assert (
        main(
            [
                "ab",
                runs,
                "--n-resamples",
                "500",
                "--format",
                "markdown",
                "--confidence-level",
                "0.9",
            ]
        )
        == 0
    )
    assert "90% CI of mean" in capsys.readouterr().out


def test_ab_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "runs.jsonl"
    lines = (EXAMPLES / "ab_runs.jsonl").read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")  # drop one record -> unpaired
    assert main(["ab", str(path)]) == 2
    assert "unpaired records" in capsys.readouterr().err
    assert main(["ab", str(EXAMPLES / "ab_runs.jsonl"), "--treatment", "nope"]) == 2
    assert "cannot infer the other arm" in capsys.readouterr().err
