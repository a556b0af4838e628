"""A SIGKILL'd run (a real subprocess) leaves only whole files and a rerun completes; token and
dollar budgets stop a run; an unreachable LM server stops a real run before any work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from optimizers_testkit import dummy_lm, make_config
from testkit import local_model_or_skip

from lift_metrics._tasks import task_records
from lift_metrics._usage import UsageMeter
from lift_metrics.optimizers import _report, _runner
from lift_metrics.optimizers._runner import run_optimizer

# the child process: a DummyLM run that announces the atomic rename of ``TARGET`` and then
# hangs before it, so that the parent can SIGKILL it at that exact point
CHILD = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, {tests!r})
    from optimizers_testkit import dummy_lm, make_config
    from lift_metrics.optimizers._runner import run_optimizer
    from lift_metrics._tasks import task_records
    from pathlib import Path

    target = {target!r}
    real_replace = os.replace

    def replace(src, dst, *args, **kwargs):
        if os.path.basename(os.fspath(dst)) == target:
            print("RENAMING", flush=True)
            time.sleep(600)
        return real_replace(src, dst, *args, **kwargs)

    os.replace = replace
    config = make_config(Path({tmp!r}), "mipro")
    run_optimizer(config, lm=dummy_lm(task_records("train")[0]), progress=False)
    print("FINISHED", flush=True)
    """
)


def kill_at_rename(tmp_path: Path, target: str) -> None:
    script = CHILD.format(tests=str(Path(__file__).parent), target=target, tmp=str(tmp_path))
    with subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    ) as child:
        assert child.stdout is not None
        deadline = time.monotonic() + 300
        line = ""
        while time.monotonic() < deadline:
            line = child.stdout.readline()
            if line.strip() in ("RENAMING", "FINISHED") or line == "":
                break
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    assert line.strip() == "RENAMING", f"the child never reached the write of {target}"
    assert child.returncode == -signal.SIGKILL


def whole_json_files(out: Path) -> list[Path]:
    files = [p for p in out.rglob("*.json") if "cache" not in p.relative_to(out).parts]
    for file in files:
        if not file.name.startswith("."):
            json.loads(file.read_text())  # raises on a half-written file
    return files


@pytest.mark.slow
@pytest.mark.parametrize(
    ("target", "present", "absent"),
    [
        (
            "baseline.json",
            ["config.json", "baseline/baseline_run1.json"],
            ["baseline/baseline.json"],
        ),
        ("program.json", ["trials.json", "baseline/baseline.json"], ["program.json", "optimized"]),
        ("result.json", ["comparison.json", "optimized/optimized.json"], ["result.json"]),
    ],
)
def test_a_sigkilled_run_leaves_only_whole_files_and_a_rerun_completes(
    tmp_path: Path, target: str, present: list[str], absent: list[str]
) -> None:
    """A real subprocess killed with SIGKILL just before the atomic rename of ``target``:
    every file under its final name is whole, the target does not exist, only a hidden
    temporary file is left, and rerunning the same config removes it and finishes."""
    kill_at_rename(tmp_path, target)
    out = tmp_path / "out"
    whole_json_files(out)
    for name in present:
        assert (out / name).exists(), name
    for name in absent:
        assert not (out / name).exists(), name
    hidden = [p.name for p in out.rglob(".*") if "cache" not in p.relative_to(out).parts]
    assert hidden
    assert all(name.startswith(f".{Path(target).stem}.") for name in hidden)
    assert not (out / "report.md").exists()

    result = run_optimizer(
        make_config(tmp_path, "mipro"), lm=dummy_lm(task_records("train")[0]), progress=False
    )
    assert result.stop_reason is None
    assert result.optimized is not None
    assert [p for p in out.rglob(".*") if "cache" not in p.relative_to(out).parts] == []
    names = {p.relative_to(out).as_posix() for p in whole_json_files(out)}
    assert {"config.json", "program.json", "result.json", "comparison.json"} <= names
    assert (out / "report.md").read_text().startswith("# test-mipro")


# --------------------------------------------------------------------------- budgets


class PricedMeter(UsageMeter):
    """Bills every call as 100 + 50 tokens and $0.01 (DummyLM itself reports zero usage)."""

    def add_usage(self, lm: str, usage_entry: Any) -> None:
        entry = {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150, "cost": 0.01}
        super().add_usage(lm, entry)


@pytest.mark.parametrize(
    ("budget", "spent"),
    [
        ({"max_tokens": 1200}, "the budget of 1200 tokens is spent (1200 tokens used)"),
        ({"max_cost_usd": 0.075}, "the budget of $0.075 is spent ($0.0800 used)"),
    ],
)
def test_token_and_dollar_budgets_stop_the_run_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: dict[str, Any], spent: str
) -> None:
    monkeypatch.setattr(_runner, "UsageMeter", PricedMeter)
    # 3 test tasks x 2 steps = 6 calls for the baseline; the 8th call would pass the cap
    config = make_config(tmp_path, "mipro", budget=budget)
    result = run_optimizer(config, lm=dummy_lm(task_records("train")[0]), progress=False)
    assert result.stop_reason is not None
    assert spent in result.stop_reason
    assert "MIPROv2.compile" in result.stop_reason
    assert result.usage.lm_calls == 8
    assert result.usage.total_tokens == 1200
    assert result.usage.cost_usd == pytest.approx(0.08)
    assert result.baseline is not None
    assert result.baseline.complete
    saved = json.loads((tmp_path / "out" / "result.json").read_text())
    assert saved["usage"]["total_tokens"] == 1200
    assert saved["stop_reason"] == result.stop_reason


# --------------------------------------------------------------------------- bad input


def test_an_unreachable_lm_server_stops_a_real_run_before_any_work(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lift_metrics.cli

    modules = lift_metrics.cli._COMMAND_MODULES
    if "lift_metrics.optimizers._cli" not in modules:
        monkeypatch.setattr(
            lift_metrics.cli, "_COMMAND_MODULES", (*modules, "lift_metrics.optimizers._cli")
        )
    config = tmp_path / "run.toml"
    config.write_text(
        'name = "t"\nseed = 3\n[optimizer]\nname = "copro"\n[optimizer.init]\nbreadth = 2\n'
        '[lm]\nmodel = "openai/m"\napi_base = "http://127.0.0.1:9/v1"\n'
    )
    out = tmp_path / "o"
    assert lift_metrics.cli.main(["optimize", str(config), "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot reach the LM server" in err
    assert "\n" not in err
    assert not out.exists()  # nothing written: stopped before the first step


# --------------------------------------------------------------------------- what a person sees


def test_progress_and_the_final_table_on_the_terminal(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")  # a row must fit a standard terminal unwrapped
    result = run_optimizer(
        make_config(tmp_path, "copro"), lm=dummy_lm(task_records("train")[0]), progress=True
    )
    shown = capsys.readouterr().out
    assert "baseline (test split)" in shown
    assert "optimized (test split)" in shown
    assert "test-copro: COPRO on 3 test tasks" in shown  # the table's title
    for d in result.deltas:  # one row per metric: baseline, optimized, delta [CI], verdict
        row = next(line for line in shown.splitlines() if f" {d.metric} " in line)
        assert f" {_report._fmt(d.baseline_mean)} " in row
        assert f" {_report._fmt(d.optimized_mean)} " in row
        assert f"{d.mean_delta:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}]" in row
        assert d.verdict in row
    assert f"LM calls {result.usage.lm_calls}" in shown
    assert f"report: {tmp_path / 'out' / 'report.md'}" in shown
    report = (tmp_path / "out" / "report.md").read_text()
    head = result.deltas[0]
    assert (
        f"| {head.metric} | {_report._fmt(head.baseline_mean)} | "
        f"{_report._fmt(head.optimized_mean)} | "
        f"{head.mean_delta:+.4f} | [{head.ci_low:+.4f}, {head.ci_high:+.4f}] |"
    ) in report
    assert "## Pass/fail A/B comparison" in report
    assert "## Baseline on the test split" in report


def test_a_gguf_file_that_is_not_a_model_is_exit_2_before_any_work(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right GGUF magic, cut-off tensors: llama.cpp refuses it while the LM is built, before
    the run writes anything (the text-file case is in test_runner)."""
    import lift_metrics.cli

    model = local_model_or_skip()
    modules = lift_metrics.cli._COMMAND_MODULES
    if "lift_metrics.optimizers._cli" not in modules:
        monkeypatch.setattr(
            lift_metrics.cli, "_COMMAND_MODULES", (*modules, "lift_metrics.optimizers._cli")
        )
    truncated = tmp_path / "truncated.gguf"
    with model.open("rb") as handle:
        truncated.write_bytes(handle.read(100_000))
    config = tmp_path / "run.toml"
    config.write_text(
        'name = "t"\nseed = 3\n[optimizer]\nname = "copro"\n[optimizer.init]\nbreadth = 2\n'
        f'[lm]\nmodel = "{truncated}"\nn_ctx = 256\n'
    )
    out = tmp_path / "o"
    assert lift_metrics.cli.main(["optimize", str(config), "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "could not load it as a model" in err
    assert "\n" not in err
    assert not out.exists()
