"""Fault injection for the commands that write: a full disk, a read-only disk, a full LM cache.

Each case runs the command in a child process inside its own mount namespace
(``unshare --mount``) with a small tmpfs mounted over a folder of the test's temporary
directory, so the real disk is never filled. The child fills the tmpfs (or mounts it
read-only), runs ``lift_metrics.cli.main`` and prints, as JSON, the exit code and every file
left under the output folder before the namespace (and the tmpfs) goes away. The bar: exit 2,
exactly one stderr line naming the path, no traceback, nothing partially written.

The LM is ``DummyLM`` (from ``tests/optimizers/optimizers_testkit.py``): no model is loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # each test runs a command in a child with a tiny filesystem

REPO = Path(__file__).resolve().parents[2]

# the child: fill or not, patch the LM, run the command, report what is left
DRIVER = r"""
import json, os, sys
from pathlib import Path

spec = json.loads(sys.argv[1])
sys.path.insert(0, spec["testkit"])
mount = Path(spec["mount"])


def fill():
    with open(mount / "filler", "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass
    try:
        with open(mount / "filler", "ab") as handle:  # the last bytes of the last block
            while True:
                handle.write(b"\0")
                handle.flush()
    except OSError:
        pass


def dummy_lm():
    from optimizers_testkit import pipeline_lm
    from lift_metrics._tasks import task_records

    task = task_records("train")[0]
    answers = {"new_instruction": {"new_instruction": "Answer more precisely."}}
    return pipeline_lm(task["expected_ir"], task["expected_code"], answers)


import lift_metrics.lm as lm_package
from lift_metrics.optimizers import _evaluate, _runner

lm = dummy_lm()
lm_package.resolve_lm = lambda *args, **kwargs: lm
_runner._resolve_lms = lambda config, lm_, prompt_lm: (lm, lm)
if spec["fill"] == "before":
    fill()
elif spec["fill"] == "before_results":
    real = _evaluate.save_evaluation

    def filling(*args, **kwargs):
        fill()
        return real(*args, **kwargs)

    _evaluate.save_evaluation = filling

from lift_metrics.cli import main

code = main(spec["args"])
out = Path(spec["out"])
left = sorted(
    str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()
) if out.is_dir() else []
print(json.dumps({"code": code, "left": left, "lm_calls": len(getattr(lm, "history", []))}))
"""

USER_METRIC = "def good(item):\n    return item['guess']\n"


def _can_mount(tmp_path: Path) -> str | None:
    """Why tmpfs mounts in a mount namespace are not possible here (None when they are)."""
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    probe = tmp_path / "probe"
    probe.mkdir()
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "mount", "-t", "tmpfs", "tmpfs", probe],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return f"needs root and mount namespaces: {done.stderr.strip()}"
    return None


@pytest.fixture
def lm_calls() -> list[int]:
    """LM calls each faulty run made (one entry per run)."""
    return []


@pytest.fixture
def faulty(tmp_path: Path, lm_calls: list[int]) -> Any:
    """``faulty(args, out, fill=..., readonly=False)`` -> (exit code, stderr lines, files left)."""
    reason = _can_mount(tmp_path)
    if reason is not None:
        pytest.skip(reason)
    mount = tmp_path / "mnt"
    mount.mkdir()
    calls = lm_calls

    def run(args: list[str], out: Path, *, fill: str = "none", readonly: bool = False) -> Any:
        spec = {
            "args": args,
            "out": str(out),
            "mount": str(mount),
            "fill": fill,
            "testkit": str(REPO / "tests" / "optimizers"),
        }
        options = "ro,size=4m" if readonly else "size=4m"
        command = (
            f"mount -t tmpfs -o {options} tmpfs '{mount}' && "
            f"exec '{sys.executable}' -c \"$DRIVER\" '{json.dumps(spec)}'"
        )
        env = {**os.environ, "DRIVER": DRIVER, "PYTHONPATH": str(REPO)}
        done = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", command],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
            check=False,
        )
        assert done.stdout.strip(), done.stderr  # the driver itself must not crash
        report = json.loads(done.stdout.strip().splitlines()[-1])
        # DSPy's own INFO log lines may precede the error
        lines = [line for line in done.stderr.strip().splitlines() if " INFO " not in line]
        assert "Traceback" not in done.stderr, done.stderr
        calls.append(report["lm_calls"])
        print(lines)  # shown with -s: the message a person would read
        return report["code"], lines, report["left"]

    return run


def _validate_args(tmp_path: Path, out: Path) -> list[str]:
    (tmp_path / "user_metric_mod.py").write_text(USER_METRIC, encoding="utf-8")
    data = tmp_path / "user.jsonl"
    rows = [{"id": f"u{i}", "guess": y, "human_score": y} for i, y in enumerate([0, 0.3, 0.6, 1])]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return ["validate", "user_metric_mod:good", "--data", str(data), "--out", str(out)]


def _evaluate_args(out: Path) -> list[str]:
    return ["evaluate", "--limit", "1", "--quiet", "--output-dir", str(out)]


def _optimize_args(tmp_path: Path, out: Path) -> list[str]:
    config = tmp_path / "run.toml"
    config.write_text(
        f'name = "t"\nseed = 3\ncache_dir = "{tmp_path / "cache"}"\n'
        '[optimizer]\nname = "copro"\n[optimizer.init]\nbreadth = 2\ndepth = 1\n'
        '[lm]\nmodel = "local"\n[dataset]\ntrain_limit = 2\ntest_limit = 1\n'
        "[evaluation]\nn_resamples = 100\n[budget]\nmax_lm_calls = 100\n",
        encoding="utf-8",
    )
    return ["optimize", str(config), "--quiet", "--output-dir", str(out)]


def _assert_one_line(code: int, lines: list[str], names: str) -> None:
    assert code == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("lift-metrics"), lines
    assert names in lines[0], lines


def test_validate_on_a_full_disk_writes_nothing(faulty: Any, tmp_path: Path) -> None:
    out = tmp_path / "mnt" / "report"
    code, lines, left = faulty(_validate_args(tmp_path, out), out, fill="before")
    _assert_one_line(code, lines, str(out))
    assert left == []


def test_evaluate_on_a_disk_that_fills_before_the_results_writes_nothing(
    faulty: Any, tmp_path: Path
) -> None:
    out = tmp_path / "mnt" / "ev"
    code, lines, left = faulty(_evaluate_args(out), out, fill="before_results")
    _assert_one_line(code, lines, str(out))
    assert "No space left" in lines[0]
    # the LM cache may stay (it makes a rerun cheap); no result file, whole or partial
    assert [name for name in left if not name.startswith("cache/")] == []


def test_a_full_lm_cache_is_one_line(faulty: Any, tmp_path: Path) -> None:
    out = tmp_path / "mnt" / "ev"
    code, lines, left = faulty(_evaluate_args(out), out, fill="before")
    _assert_one_line(code, lines, str(out / "cache"))
    assert [name for name in left if not name.startswith("cache/")] == []


def test_optimize_on_a_full_disk_stops_with_one_line(faulty: Any, tmp_path: Path) -> None:
    out = tmp_path / "mnt" / "run"
    code, lines, left = faulty(_optimize_args(tmp_path, out), out, fill="before")
    _assert_one_line(code, lines, str(out))
    assert not [name for name in left if ".tmp" in name or name.startswith(".")], left


@pytest.mark.parametrize("command", ["validate", "evaluate", "optimize", "optimize --check"])
def test_a_read_only_output_folder_is_refused_before_work(
    command: str, faulty: Any, tmp_path: Path, lm_calls: list[int]
) -> None:
    out = tmp_path / "mnt" / "out"
    if command == "validate":
        args = _validate_args(tmp_path, out)
    elif command == "evaluate":
        args = _evaluate_args(out)
    else:
        args = _optimize_args(tmp_path, out) + (["--check"] if "check" in command else [])
    code, lines, left = faulty(args, out, readonly=True)
    _assert_one_line(code, lines, str(out))
    assert "Read-only file system" in lines[0]
    assert left == []
    assert lm_calls == [0]  # refused before the first LM call
