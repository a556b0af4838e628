"""Fault injection: an exit that waits for the local LM says so, and keeps the command's code.

A program whose prompt is long for the local model's context can write complete results and
then wait up to 60 s at exit for a request still reading its prompt (llama.cpp cannot stop it
before the prompt is read); leaving after that with exit code 130 and nothing on stderr would
look like a hang and a failure. The contract:
a line on stderr says what the exit waits for, and when the wait runs out, a second line;
the exit code is the command's own.

The running request is simulated (the count of requests in flight is raised and never
lowered), and the wait is shortened to half a second: no model is loaded.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import lift_metrics

PACKAGE_ROOT = Path(lift_metrics.__file__).resolve().parents[1]  # the code under test

CHILD = r"""
import atexit, os, sys

sys.path.insert(0, sys.argv[1])
from lift_metrics.lm import _server

_server._EXIT_WAIT_S = 0.5
with _server._SERVERS_LOCK:
    _server._IN_FLIGHT += 1  # a request reading a long prompt, still running at exit
atexit.register(_server._stop_at_exit, os.getpid())

from lift_metrics.cli import main

sys.exit(main(sys.argv[2:]))
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(PACKAGE_ROOT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_exit_that_cannot_wait_says_so_and_keeps_the_exit_code() -> None:
    done = _run("report")
    assert done.returncode == 0, done.stderr
    assert "T0" in done.stdout  # the command's own output is all there
    lines = done.stderr.strip().splitlines()
    assert lines == [
        "lift-metrics: waiting up to 0.5 s for 1 local LM request to stop (a request still "
        "reading its prompt stops once the prompt is read)",
        "lift-metrics: a local LM request was still running; leaving without waiting for it "
        "(exit code 0)",
    ]


def test_a_failed_command_keeps_its_code_too() -> None:
    done = _run("report", "no-such-file.jsonl")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith("(exit code 2)")
