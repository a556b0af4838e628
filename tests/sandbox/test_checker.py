"""The checking process each fork server keeps for check scripts (docs/sandbox.md).

A check script runs in one long-lived process per server, never in the process of the code
under test. These tests hold it to what the design promises: a check that runs on by itself
ends at the deadline and the next one runs in a fresh checking process; a checking process
that was killed is forked again; one is forked again after ``CHECKER_RUNS`` checks; and how
the code's process (the execution's child) ends in the middle of a check (an exit code, a
signal, the deadline) is the execution's status.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator

import pytest

from lift_metrics.sandbox import Sandbox
from lift_metrics.sandbox._worker import CHECKER_RUNS

# slow: real sandboxes in both loops and both isolation modes, deadlines
pytestmark = pytest.mark.slow

CODE = "def f(x):\n    return x + 1\n"
SCRIPT = "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) == 3\n"
Probe = Callable[[Sandbox], int]


def _wait_until_dead(pid: int) -> None:
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            return
        if stat[stat.rfind(b")") + 2 :].split()[0] == b"Z":
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not die")


@pytest.fixture(params=["native", "python"])
def one_worker(
    request: pytest.FixtureRequest, isolation_mode: str, loop_sandbox: Callable[..., Sandbox]
) -> Iterator[Sandbox]:
    sandbox = loop_sandbox(request.param, workers=1, timeout_s=3.0, isolation=isolation_mode)
    yield sandbox
    sandbox.close()


def test_a_check_that_runs_on_by_itself_times_out_and_the_next_check_runs(
    one_worker: Sandbox, checker_of: Probe, leftovers: Callable[[], list[str]]
) -> None:
    spin = "def check(candidate):\n    assert candidate(1) == 2\n    while True:\n        pass\n"
    before = checker_of(one_worker)
    result = one_worker.run_tests(CODE, spin, entry_point="f", timeout_s=0.5)
    assert result.status == "timeout", result
    assert one_worker.run_tests(CODE, SCRIPT, entry_point="f").status == "passed"
    assert checker_of(one_worker) != before  # the spinning one was killed, a fresh one runs
    assert leftovers() == []


def test_a_killed_checking_process_is_forked_again(
    one_worker: Sandbox, checker_of: Probe, leftovers: Callable[[], list[str]]
) -> None:
    first = checker_of(one_worker)
    os.kill(first, signal.SIGKILL)
    _wait_until_dead(first)  # killed between executions (one it was in would crash)
    assert one_worker.run_tests(CODE, SCRIPT, entry_point="f").status == "passed"
    second = checker_of(one_worker)
    assert second != first
    # a check that ends its own process: that execution crashed, the next one runs
    suicide = "import os\ndef check(candidate):\n    os.kill(os.getpid(), 9)\n"
    result = one_worker.run_tests(CODE, suicide, entry_point="f")
    assert result.status == "crashed", result
    assert one_worker.run_tests(CODE, SCRIPT, entry_point="f").status == "passed"
    assert checker_of(one_worker) not in (first, second)
    assert one_worker.run_tests(CODE, [({"x": 1}, 2)]).status == "passed"
    assert leftovers() == []


def test_a_checking_process_is_forked_again_after_its_runs(
    one_worker: Sandbox, checker_of: Probe
) -> None:
    first = checker_of(one_worker)
    assert one_worker.run_tests(CODE, [({"x": 1}, 2)]).status == "passed"
    for _ in range(CHECKER_RUNS - 1):
        assert one_worker.run_tests(CODE, SCRIPT, entry_point="f").status == "passed"
    assert checker_of(one_worker) == first  # I/O cases do not count: one check is left
    assert one_worker.run_tests(CODE, SCRIPT, entry_point="f").status == "passed"
    assert checker_of(one_worker) != first


@pytest.mark.parametrize(
    ("code", "status", "reason"),
    [
        (
            "import os\ndef f(x):\n    if x == 2: os._exit(3)\n    return x + 1\n",
            "crashed",
            "code 3",
        ),
        (
            "import os\ndef f(x):\n    if x == 2: os._exit(0)\n    return x + 1\n",
            "crashed",
            "code 0",
        ),
        (
            "import os\ndef f(x):\n    if x == 2: os.kill(os.getpid(), 11)\n    return x + 1\n",
            "crashed",
            "SIGSEGV",
        ),
        ("def f(x):\n    while x == 2: pass\n    return x + 1\n", "timeout", "time limit"),
        ("import sys\ndef f(x):\n    if x == 2: sys.exit(0)\n    return x + 1\n", "failed", "Exit"),
        ("import os\nos._exit(5)\ndef f(x):\n    return x\n", "crashed", "code 5"),
    ],
    ids=["exit-3", "exit-0", "segfault", "timeout", "sys-exit", "exit-while-loading"],
)
def test_how_the_code_ends_in_the_middle_of_a_check_is_its_status(
    one_worker: Sandbox, code: str, status: str, reason: str, leftovers: Callable[[], list[str]]
) -> None:
    result = one_worker.run_tests(code, SCRIPT, entry_point="f", timeout_s=1.0)
    assert result.status == status, result
    assert reason in result.reason
    assert one_worker.run_tests(CODE, SCRIPT, entry_point="f").status == "passed"
    assert leftovers() == []


def test_a_process_is_exiting_only_once_its_exit_has_begun() -> None:
    """The server replaces a checker whose exit has begun, before its socket reads as closed."""
    from lift_metrics.sandbox._worker import _exiting

    assert _exiting(os.getpid()) is False  # running
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child ends at once
        os._exit(0)
    _wait_until_dead(pid)
    assert _exiting(pid) is True  # a zombie: its exit began (and ended)
    os.waitpid(pid, 0)
    assert _exiting(pid) is False  # reaped: no such process is known
