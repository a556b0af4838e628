"""``lift-metrics validate``: exit codes 0/1/2, the table, report, JSON and PNG written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lift_metrics.validation import save_weights, shipped_labels_path

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
USER_METRIC = """
def good(item):
    return item["guess"]

def bad(item):
    return 1 - item["guess"]

def pair(predicted, expected):
    return 1.0 if predicted == expected else 0.2

def flaky(item):  # cannot score the two lowest-labelled items
    if item["guess"] < 0.15:
        raise RuntimeError("judge timed out")
    return item["guess"]

def broken(item):
    raise RuntimeError("sandbox unavailable")

def quits(item):
    import sys
    if item["guess"] > 0.9:
        sys.exit(0)
    return item["guess"]
"""


@pytest.fixture
def user_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_jsonl) -> Path:
    (tmp_path / "my_metrics_mod.py").write_text(USER_METRIC, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    labels = [0.0, 0.1, 0.3, 0.5, 0.6, 0.8, 0.9, 1.0]
    rows = [
        {
            "id": f"u{i}",
            "guess": y * 0.9 + 0.05,
            "predicted": "a" if y > 0.5 else "b",
            "expected": "a",
            "human_score": y,
        }
        for i, y in enumerate(labels)
    ]
    return write_jsonl(tmp_path / "user.jsonl", rows)


@pytest.mark.slow
def test_passing_metric_exits_0_and_writes_report(
    cli_main, user_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    code = cli_main(
        [
            "validate",
            "my_metrics_mod:good",
            "--data",
            str(user_data),
            "--out",
            str(out),
            "--target",
            "0.9",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "my_metrics_mod:good" in printed
    assert "1.000 [" in printed
    assert (out / "validation.md").read_text().startswith("# Metric validation")
    assert (out / "my_metrics_mod_good.png").read_bytes()[:8] == PNG_MAGIC
    data = json.loads((out / "validation.json").read_text())
    assert data["split"] == "all"
    assert data["results"][0]["n"] == 8


def test_failing_metric_exits_1(
    cli_main, user_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli_main(
        ["validate", "my_metrics_mod:bad", "--data", str(user_data), "--out", str(tmp_path / "r")]
    )
    assert code == 1
    assert "below target 0.8: my_metrics_mod:bad" in capsys.readouterr().err


def test_kwargs_call_and_require_ci(cli_main, user_data: Path, tmp_path: Path) -> None:
    args = [
        "validate",
        "my_metrics_mod:pair",
        "--data",
        str(user_data),
        "--call",
        "kwargs",
        "--field",
        "predicted=predicted",
        "--field",
        "expected=expected",
        "--out",
        str(tmp_path / "r"),
        "--target",
        "0.7",
    ]
    assert cli_main(args) == 0  # r = 0.87 >= 0.7
    assert cli_main([*args, "--require-ci"]) == 1  # but n = 8: the interval reaches far below


def _validate(cli_main, data: Path, out: Path, *extra: str) -> int:
    code: int = cli_main(["validate", *extra, "--data", str(data), "--out", str(out)])
    return code


def test_a_missing_score_fails_unless_allowed(
    cli_main, user_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    assert _validate(cli_main, user_data, out, "my_metrics_mod:flaky") == 1  # r = 1.0 otherwise
    err = capsys.readouterr().err
    assert "2 of 8 items could not be scored (more than --allow-missing 0)" in err
    assert "'u0': RuntimeError: judge timed out" in err
    report = (out / "validation.md").read_text()
    assert "- `u0`: RuntimeError: judge timed out" in report
    assert "- `u1`: RuntimeError: judge timed out" in report
    missing = json.loads((out / "validation.json").read_text())["results"][0]["missing"]
    assert missing == [{"id": f"u{i}", "reason": "RuntimeError: judge timed out"} for i in (0, 1)]
    assert _validate(cli_main, user_data, out, "my_metrics_mod:flaky", "--allow-missing", "1") == 1
    assert _validate(cli_main, user_data, out, "my_metrics_mod:flaky", "--allow-missing", "2") == 0
    assert "within --allow-missing 2" in capsys.readouterr().err


def test_nothing_scored_says_so_and_fails_with_a_report(
    cli_main, user_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    code = _validate(cli_main, user_data, out, "my_metrics_mod:broken", "--allow-missing", "8")
    err = capsys.readouterr().err
    assert code == 1
    assert "nothing could be scored: all 8 items are missing" in err
    assert "RuntimeError: sandbox unavailable" in err
    assert "must not be empty" not in err
    report = (out / "validation.md").read_text()
    assert "Not validated: 0 items could be scored" in report
    assert "- `u7`: RuntimeError: sandbox unavailable" in report
    unscored = json.loads((out / "validation.json").read_text())["unscored"]
    assert unscored[0]["metric"] == "my_metrics_mod:broken"
    assert len(unscored[0]["missing"]) == 8


def test_a_metric_that_calls_sys_exit_is_a_missing_item(
    cli_main, user_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    assert _validate(cli_main, user_data, out, "my_metrics_mod:quits") == 1
    assert "'u7': the metric called sys.exit(0)" in capsys.readouterr().err
    assert "- `u7`: the metric called sys.exit(0)" in (out / "validation.md").read_text()


def test_allow_missing_must_not_be_negative(
    cli_main, user_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    with pytest.raises(SystemExit) as exit_info:  # refused while the options are parsed
        _validate(cli_main, user_data, out, "my_metrics_mod:good", "--allow-missing", "-1")
    assert exit_info.value.code == 2
    assert "--allow-missing must be >= 0, got -1" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    "extra",
    [
        ["no_such_metric"],
        ["my_metrics_mod:good", "--data", "missing.jsonl"],
        ["my_metrics_mod:nothing_here", "--data", "user.jsonl"],
        ["end_to_end"],  # no shipped end-to-end labels
        ["my_metrics_mod:good", "--data", "user.jsonl", "--split", "heldout"],  # no split field
        ["my_metrics_mod:good", "--data", "user.jsonl", "--field", "oops"],
    ],
)
def test_bad_input_exits_2(
    cli_main, user_data: Path, tmp_path: Path, extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["validate", *extra, "--out", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.startswith("lift-metrics validate: error:")


def test_builtin_ir_quality_with_weights_file(
    cli_main, tmp_path: Path, write_jsonl, capsys: pytest.CaptureFixture[str]
) -> None:
    # a slice of the shipped IR pairs, scored without the embedding model (intent weight 0)
    lines = shipped_labels_path("ir_quality").read_text().splitlines()[:16]
    data = write_jsonl(tmp_path / "ir.jsonl", [json.loads(line) for line in lines])
    weights = save_weights(
        tmp_path / "w.toml",
        {"intent": 0, "signature": 0.5, "structure": 0.25, "constraints": 0.25},
        metric="ir_quality",
    )
    code = cli_main(
        [
            "validate",
            "ir_quality",
            "--data",
            str(data),
            "--weights",
            str(weights),
            "--split",
            "all",
            "--target",
            "-1",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 0
    assert "ir_quality" in capsys.readouterr().out
    result = json.loads((tmp_path / "r" / "validation.json").read_text())["results"][0]
    assert result["n"] == 16
    assert result["raters"] == 2
    report = (tmp_path / "r" / "validation.md").read_text()
    assert "| category | n | mean score − label |" in report  # the shipped items have categories


def test_weights_for_another_metric_exit_2(cli_main, tmp_path: Path) -> None:
    weights = save_weights(tmp_path / "w.json", {"tests": 1.0}, metric="code_quality")
    args = ["validate", "ir_quality", "--weights", str(weights), "--out", str(tmp_path / "r")]
    assert cli_main(args) == 2


@pytest.mark.slow
def test_shipped_data_with_calibration(cli_main, tmp_path: Path) -> None:
    """The real run (embedding model, sandbox): exit code agrees with the written figures."""
    out = tmp_path / "r"
    code = cli_main(["validate", "--calibrate", "--out", str(out)])
    data = json.loads((out / "validation.json").read_text())
    results = {r["metric"]: r for r in data["results"]}
    assert set(results) == {"ir_quality", "code_quality"}
    assert results["ir_quality"]["n"] == 51
    assert results["code_quality"]["n"] == 48
    assert code == (0 if all(r["pearson"] >= 0.8 for r in results.values()) else 1)
    for name in results:
        fit = data["calibration"][name]["fit"]
        assert fit["n"] in (68, 72)  # the calibration split only
        assert (out / f"weights_{name}.json").is_file()


def test_an_interrupted_plot_leaves_the_previous_file_whole(tmp_path, monkeypatch) -> None:
    """The PNG goes through the atomic writer: a kill mid-write never leaves a 0-byte plot."""
    import os

    from lift_metrics.validation import validate_metric
    from lift_metrics.validation._plot import plot_validation

    items = [
        (score, label)
        for score, label in zip(
            [0.1, 0.4, 0.35, 0.8, 0.9], [0.0, 0.5, 0.25, 0.75, 1.0], strict=True
        )
    ]
    result = validate_metric(float, items)
    target = tmp_path / "plot.png"
    plot_validation(result, target)
    before = target.read_bytes()
    assert before.startswith(b"\x89PNG")

    def killed(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        plot_validation(result, target)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]
