"""The process-mode attack suite as root, in a private PID and mount namespace.

Where process isolation refuses to run as root (the children's uid cannot read the
interpreter), the ``box`` tests skip their process-mode cases; this test runs those cases
under ``tests/sandbox/private_namespace.py``, which makes the interpreter readable inside a
private mount namespace only. The namespace also contains any escape: the attacks see only
its processes and mounts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lift_metrics.sandbox._isolation import process_refusal

HERE = Path(__file__).resolve().parent


def test_the_process_mode_attack_suite_runs_as_root_in_a_private_namespace() -> None:
    if os.geteuid() != 0:
        pytest.skip(
            "needs root (private mount and PID namespaces); as a normal user the "
            "box tests run process mode directly"
        )
    if os.environ.get("LIFT_SANDBOX_PRIVATE_NAMESPACE"):
        pytest.skip("already inside the private namespace")
    if process_refusal() is None:
        pytest.skip("process isolation runs directly here: the box tests cover it")
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("unshare(1) or mount(8) is missing")
    command = [
        "unshare",
        "--mount",
        "--pid",
        "--fork",
        "--mount-proc",
        "--propagation",
        "private",
        sys.executable,
        str(HERE / "private_namespace.py"),
        "-q",
        "-x",
        str(HERE / "test_attacks.py"),
    ]
    env = dict(os.environ, LIFT_SANDBOX_TEST_MODES="process")
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=HERE.parent.parent,
        timeout=900,
    )
    tail = (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 0, tail
    assert " passed" in tail and "process isolation refuses" not in tail, tail
