"""The attack suite (and the checking process's tests) as root in process mode, and as an
unprivileged user in both modes, run in a private PID and mount namespace
(``tests/sandbox/private_namespace.py``).

Where process isolation refuses to run as root (the children's uid cannot read the
interpreter, as with a Python under ``/root``), the ``box`` tests skip their process-mode
cases; the first test runs them where the interpreter is made readable in the namespace
only. The second runs the whole suite as uid 65534 (``setpriv``), which no other way can run
this interpreter here. The namespace also contains any escape: the attacks see only its
processes and mounts. About 30 s and 100 s on a 2-core machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lift_metrics.sandbox._isolation import process_refusal

pytestmark = pytest.mark.slow  # each test runs test_attacks.py in a private namespace

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def _run_in_namespace(modes: str, *extra: str) -> str:
    if os.geteuid() != 0:
        pytest.skip("needs root (private mount and PID namespaces)")
    if os.environ.get("LIFT_SANDBOX_PRIVATE_NAMESPACE"):
        pytest.skip("already inside the private namespace")
    for tool in ("unshare", "mount", "setpriv"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool}(8) is missing")
    command = ["unshare", "--mount", "--pid", "--fork", "--mount-proc"]
    command += ["--propagation", "private", sys.executable, str(HERE / "private_namespace.py")]
    command += [*extra, "-q", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml")]
    command += [str(HERE / "test_attacks.py"), str(HERE / "test_checker.py")]
    env = dict(os.environ, LIFT_SANDBOX_TEST_MODES=modes)
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, check=False, timeout=900
    )
    tail = (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 0, tail
    assert " passed" in tail, tail
    assert "process isolation refuses" not in tail, tail
    return tail


def test_the_process_mode_attack_suite_as_root_in_a_private_namespace() -> None:
    if process_refusal() is None:
        pytest.skip("process isolation runs directly here: the box tests cover it")
    _run_in_namespace("process")


def test_the_attack_suite_as_an_unprivileged_user_in_a_private_namespace() -> None:
    _run_in_namespace("bwrap,process", "--as-user", "65534")
