"""Fault injection: a command's result files are all there or none, and only this run's.

``evaluate`` and ``validate`` stage their files and then rename them into the output folder
one by one. A Ctrl-C or SIGKILL between two renames could leave ``evaluation.json`` alone (the
first name in order), which reads like a whole result; and ``validate`` into a folder used
before could leave the plots of the earlier run beside the new report. The contract: an interrupt
during the renames is held back until they are done; a kill leaves the main result file
absent, and the next use finishes the move; files an earlier run wrote that this one does
not are removed (and nothing else).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import lift_metrics
from lift_metrics._io import OUTPUT_MANIFEST, atomic_write_text, staged_output
from lift_metrics.cli import main

PACKAGE_ROOT = Path(lift_metrics.__file__).resolve().parents[1]  # the code under test
FILES = {
    "evaluation.json": '{"complete": true}',
    "evaluation.md": "# test split",
    "evaluation_run1.json": "{}",
    "usage.json": '{"lm_calls": 2}',
}

# the child: stage evaluate's files and die (SIGKILL) right after the first one is moved in
KILLED = r"""
import os, signal, sys
from pathlib import Path

sys.path.insert(0, sys.argv[1])
from lift_metrics import _io

out, files = Path(sys.argv[2]), eval(sys.argv[3])
real_replace = os.replace
moved = []


def replace(src, dst):
    real_replace(src, dst)
    if Path(src).parent.name.startswith(".committed."):
        moved.append(dst)
        os.kill(os.getpid(), signal.SIGKILL)


os.replace = replace
with _io.staged_output(out, last="evaluation.json") as stage:
    for name, text in files.items():
        _io.atomic_write_text(stage / name, text)
"""


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != OUTPUT_MANIFEST)


def test_a_kill_between_the_renames_never_leaves_the_main_file_alone(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(PACKAGE_ROOT), str(out), repr(FILES)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    visible = [name for name in _names(out) if not name.startswith(".")]
    assert visible, "the kill came after the first file was moved in"
    assert "evaluation.json" not in visible  # the main result is not there: no whole result
    # the next use finishes the killed commit before it does anything else
    with pytest.raises(RuntimeError), staged_output(out, last="evaluation.json"):
        raise RuntimeError("this run fails before it writes anything")
    assert _names(out) == sorted(FILES)
    assert {name: (out / name).read_text() for name in FILES} == FILES


def test_ctrl_c_between_the_renames_lands_after_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "ev"
    real_replace = os.replace
    sent: list[str] = []

    def replace(src: Any, dst: Any) -> None:
        real_replace(src, dst)
        if Path(src).parent.name.startswith(".committed.") and not sent:
            sent.append(str(dst))
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C after the first file is in

    def write() -> None:
        with staged_output(out, last="evaluation.json") as stage:
            for name, text in FILES.items():
                atomic_write_text(stage / name, text)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        write()
    assert sent
    assert _names(out) == sorted(FILES)
    assert not [p for p in out.iterdir() if p.name.startswith((".staging.", ".committed."))]


def test_files_of_an_earlier_run_that_this_one_does_not_write_are_removed(
    tmp_path: Path,
) -> None:
    out = tmp_path / "ev"
    out.mkdir()
    atomic_write_text(out / "notes.txt", "the user's own file")
    with staged_output(out) as stage:
        for name, text in FILES.items():
            atomic_write_text(stage / name, text)
    with staged_output(out) as stage:
        atomic_write_text(stage / "evaluation.json", "{}")
    assert _names(out) == ["evaluation.json", "notes.txt"]


USER_METRICS = (
    "def good(item):\n    return item['guess']\n\ndef other(item):\n    return 1 - item['guess']\n"
)


def test_validate_into_a_used_folder_leaves_only_this_runs_plots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "user_metrics_mod.py").write_text(USER_METRICS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    data = tmp_path / "user.jsonl"
    rows = [{"id": f"u{i}", "guess": y, "human_score": y} for i, y in enumerate([0, 0.3, 0.6, 1])]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "report"
    both = ["user_metrics_mod:good", "user_metrics_mod:other"]
    main(["validate", *both, "--data", str(data), "--out", str(out), "--target", "-1"])
    plots = sorted(p.name for p in out.glob("*.png"))
    assert plots == ["user_metrics_mod_good.png", "user_metrics_mod_other.png"]
    main(["validate", both[0], "--data", str(data), "--out", str(out), "--target", "-1"])
    capsys.readouterr()
    assert sorted(p.name for p in out.glob("*.png")) == ["user_metrics_mod_good.png"]
    report = json.loads((out / "validation.json").read_text())
    assert json.dumps(report).count("user_metrics_mod:other") == 0
