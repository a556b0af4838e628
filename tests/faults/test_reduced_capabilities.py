"""Fault injection: root without a capability the sandbox needs fails loudly, never as zeros.

A container started with a reduced capability set (here ``setpriv --bounding-set=-dac_override``,
inside a private PID and mount namespace) cannot set up the sandbox's children. Every execution
would be "crashed" and scored as failing code: ``score`` would print pass@1 0.0000 and exit 0.
A new sandbox therefore runs a known-good program before it serves and raises
``SandboxUnavailableError`` naming the missing capability, and ``score`` starts its sandbox
before it touches the output folder, so that no empty ``results.jsonl`` or ``run.json`` is left.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each case starts real sandboxes in a private namespace

PROBE = """
from lift_metrics.sandbox import Sandbox, SandboxUnavailableError
try:
    Sandbox(workers=1)
except SandboxUnavailableError as exc:
    print("refused:", exc)
else:
    print("started")
"""


def _reduced(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    if os.geteuid() != 0:
        pytest.skip("needs root: the capability is dropped from a root process")
    for tool in ("unshare", "setpriv"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool}(8) is missing")
    command = ["unshare", "--pid", "--fork", "--mount-proc"]
    command += ["setpriv", "--bounding-set=-dac_override", "--inh-caps=-dac_override", *argv]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, cwd=cwd
    )


def test_a_sandbox_without_dac_override_refuses_to_start_and_names_it() -> None:
    done = _reduced(sys.executable, "-c", PROBE)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused:" in done.stdout, done.stdout
    assert "cannot run a known-good program" in done.stdout
    assert "lacks CAP_DAC_OVERRIDE" in done.stdout


def test_score_without_dac_override_fails_instead_of_printing_zeros(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        json.dumps({"task_id": "t001", "solution": "def add(a, b):\n    return a + b\n"}) + "\n"
    )
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "lift_metrics", "score", str(samples), "--tasks", "project"]
    done = _reduced(*argv, "--output", str(out), "--no-progress")
    assert done.returncode != 0, done.stdout
    assert "CAP_DAC_OVERRIDE" in done.stderr, done.stderr[-2000:]
    assert "pass@1" not in done.stdout
    assert not out.exists()  # refused before the output folder was touched
