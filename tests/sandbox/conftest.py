"""Sandboxes for the tests (one per isolation mode, shared per module) and leak probes.

A "leak" is anything of an execution that outlives it: a process under a fork server (the
server is a child subreaper, so every orphan of an execution ends up under it), a file in a
worker's private temp dir, an open descriptor or a thread in this (the parent) process.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from lift_metrics.sandbox import Sandbox, _pool
from lift_metrics.sandbox._isolation import bwrap_binary, process_refusal
from lift_metrics.sandbox._native_cache import native_library

# LIFT_SANDBOX_TEST_MODES narrows the modes (the private-namespace run takes "process")
MODES = tuple(os.environ.get("LIFT_SANDBOX_TEST_MODES", "bwrap,process").split(","))


def _stat(pid: int) -> tuple[int, str] | None:
    """Return (ppid, cmdline) of ``pid``, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[1]), cmdline


def process_table() -> dict[int, tuple[int, str]]:
    """Return {pid: (ppid, cmdline)} of every process, read from /proc (no psutil)."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (entry := _stat(int(name))) is not None:
            table[int(name)] = entry
    return table


def descendants(root: int, table: dict[int, tuple[int, str]]) -> set[int]:
    """Return every pid below ``root`` in ``table``."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def server_pids(table: dict[int, tuple[int, str]]) -> set[int]:
    """Return the fork servers under this process (the bootstrap is on their command line)."""
    mine = descendants(os.getpid(), table)
    servers = {
        pid
        for pid in mine
        if "lift_sandbox_worker" in table[pid][1] and "bwrap" not in table[pid][1].split()[0]
    }
    # a forked execution has the same command line as its server: keep the top-most ones
    return {pid for pid in servers if table[pid][0] not in servers}


#: the system calls a server's idle processes wait in, by number: read(2) for the pre-forked
#: child (x86_64: 0, aarch64: 63), recvmsg(2) for the checking process (47, 212)
_READ_CALLS = ("0", "63")
_RECVMSG_CALLS = ("47", "212")


def _idle_kind(pid: int) -> str | None:
    """How ``pid`` waits: ``"read"`` (a pre-forked child), ``"recvmsg"`` (the checking
    process), ``"sleeping"`` where that cannot be told, or None (it is not waiting).

    The children are not dumpable, so a caller that is not root cannot read their
    ``/proc/PID/syscall``; then a sleeping process (state S) may be either.
    """
    try:
        with open(f"/proc/{pid}/syscall") as fh:
            call = fh.read().split()[0]
        return "read" if call in _READ_CALLS else "recvmsg" if call in _RECVMSG_CALLS else None
    except PermissionError:
        pass
    except (OSError, IndexError):
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    return "sleeping" if stat[stat.rfind(b")") + 2 :].split()[0] == b"S" else None


def checker_pid(sandbox: Sandbox) -> int:
    """Return the pid of the checking process of the one worker of ``sandbox``.

    It is the server's child waiting in recvmsg(2) (the pre-forked child waits in read(2));
    where that cannot be read (not root), the test is skipped.
    """
    worker = sandbox._slots[0]
    assert worker is not None
    deadline = time.monotonic() + 5.0  # a fresh one may still be on its way to recvmsg
    while True:
        table = process_table()
        mine = descendants(worker.proc.pid, table) | {worker.proc.pid}
        (server,) = server_pids(table) & mine
        below = [pid for pid in descendants(server, table) if table[pid][0] == server]
        kinds = {pid: _idle_kind(pid) for pid in below}
        if "sleeping" in kinds.values():
            pytest.skip("only root can tell the checking process from the pre-forked child here")
        waiting = [pid for pid, kind in kinds.items() if kind == "recvmsg"]
        if len(waiting) == 1 or time.monotonic() > deadline:
            (pid,) = waiting
            return pid
        time.sleep(0.01)


def execution_leftovers(settle_s: float = 2.0) -> list[str]:
    """Return a description of every process left under a fork server.

    Each server keeps one child forked in advance for the next execution, blocked reading
    its request, and one checking process, blocked receiving the next check script (see
    docs/sandbox.md); those are expected, anything else is a leftover. The spare is forked
    right after a response, so the probe gives it ``settle_s`` to reach its read.
    """
    deadline = time.monotonic() + settle_s
    while (left := _leftovers_now()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def _leftovers_now() -> list[str]:
    table = process_table()
    left = []
    for server in server_pids(table):
        below = descendants(server, table)
        idle: dict[str, list[int]] = {}
        for pid in below:
            if table[pid][0] == server and (kind := _idle_kind(pid)) is not None:
                idle.setdefault(kind, []).append(pid)
        expected = idle.get("read", [])[:1] + idle.get("recvmsg", [])[:1]
        expected += idle.get("sleeping", [])[: 2 - len(expected)]
        for pid in below - set(expected):
            left.append(f"{pid}: {table[pid][1][:80]}")
    return left


def private_tmp_entries(box: Sandbox) -> list[str]:
    """Return what the fork servers' private temp dirs contain, apart from the empty working
    directory ("run") already made for the next, pre-forked execution.

    Process mode: each worker's temp root. bwrap: the private /tmp seen through
    ``/proc/SERVER/root``, which only root may open (the servers are not dumpable); as
    another user the bwrap case is not inspected here.
    """
    roots = {w.tmp_root: w.tmp_root for w in box._slots if w is not None and w.tmp_root}
    if box.isolation == "bwrap" and os.geteuid() == 0:
        for server in server_pids(process_table()):
            if os.readlink(f"/proc/{server}/cwd") == "/tmp":
                roots[str(server)] = f"/proc/{server}/root/tmp"
    entries = []
    for label, root in roots.items():
        root_device = os.stat(root).st_dev
        for name in os.listdir(root):
            path = os.path.join(root, name)
            # a read-only bind (a virtualenv under /tmp) lives on another device: not a leak.
            # os.path.ismount compares with the parent found through "..", which a path
            # through /proc/PID/root does not resolve inside the server's mount namespace.
            if os.lstat(path).st_dev != root_device:
                continue
            if name == "run" and os.path.isdir(path):
                entries += [f"{label}:run/{inner}" for inner in os.listdir(path)]
            else:
                entries.append(f"{label}:{name}")
    return entries


@pytest.fixture(scope="module", autouse=True)
def _frozen_heap() -> Iterator[None]:
    """Collect once and freeze what exists while a module of sandbox tests runs.

    :func:`snapshot` collects garbage before every count; a full collection walks every
    object of the process (about a second where earlier tests loaded torch and DSPy), a
    collection after :func:`gc.freeze` only what the module made since.
    """
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@dataclass
class Snapshot:
    fds: int
    threads: int
    temp_roots: set[str]


def snapshot(box: Sandbox) -> Snapshot:
    """Descriptors and threads of this process; the process-mode temp roots of ``box``."""
    # garbage of earlier tests (sandboxes, sessions) in reference cycles would otherwise be
    # collected at any moment, closing descriptors in the middle of a test's count
    gc.collect()
    roots = {w.tmp_root for w in box._slots if w is not None and w.tmp_root is not None}
    return Snapshot(
        fds=len(os.listdir("/proc/self/fd")),
        threads=len(os.listdir("/proc/self/task")),
        temp_roots=roots,
    )


def bwrap_works() -> bool:
    if bwrap_binary() is None:
        return False
    try:
        Sandbox(workers=1, isolation="bwrap").close()
    except Exception:
        return False
    return True


_BWRAP = bwrap_works()


def process_mode_refused() -> bool:
    """Whether isolation="process" refuses to start here (root, and the unprivileged uid of
    the children cannot read the interpreter: it lives under a directory closed to others)."""
    return process_refusal() is not None


PROCESS_REFUSED_REASON = (
    "process isolation refuses to run as root here (uid of the children cannot read the "
    "interpreter); test_root_private_namespace.py runs these tests in a private mount "
    "namespace where it can"
)


LOOPS = ("native", "python")


def make_sandbox(loop: str, **options: Any) -> Sandbox:
    """A Sandbox whose servers run the compiled loop (``native``) or the Python one."""
    if loop == "native" and not native_library():
        pytest.skip("no C compiler here: the servers run the Python loop, tested as 'python'")
    saved = _pool._USE_NATIVE
    _pool._USE_NATIVE = loop == "native"
    try:
        sandbox = Sandbox(**options)
    finally:
        _pool._USE_NATIVE = saved
    assert sandbox.native is (loop == "native")
    return sandbox


@pytest.fixture(
    scope="module",
    params=[(m, loop) for m in MODES for loop in LOOPS],
    ids=[f"{m}-{loop}" for m in MODES for loop in LOOPS],
)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """A 2-worker sandbox in each isolation mode (bwrap is skipped where it cannot run), with
    the server loop compiled from C and in Python."""
    mode, loop = request.param
    if mode == "bwrap" and not _BWRAP:
        pytest.skip("bwrap cannot start on this machine; the process fallback is tested")
    if mode == "process" and process_mode_refused():
        pytest.skip(PROCESS_REFUSED_REASON)
    sandbox = make_sandbox(loop, workers=2, timeout_s=5.0, isolation=mode)
    yield sandbox
    sandbox.close()


@pytest.fixture(params=MODES)
def isolation_mode(request: pytest.FixtureRequest) -> str:
    """Each isolation mode by name, for tests that build their own sandbox."""
    if request.param == "bwrap" and not _BWRAP:
        pytest.skip("bwrap cannot start on this machine; the process fallback is tested")
    if request.param == "process" and process_mode_refused():
        pytest.skip(PROCESS_REFUSED_REASON)
    mode: str = request.param
    return mode


@pytest.fixture
def loop_sandbox() -> Callable[..., Sandbox]:
    """``make_sandbox(loop, **options)``: a Sandbox running the given server loop."""
    return make_sandbox


@pytest.fixture
def leftovers() -> Callable[[], list[str]]:
    """The probe for processes left under fork servers (see :func:`execution_leftovers`)."""
    return execution_leftovers


@pytest.fixture
def checker_of() -> Callable[[Sandbox], int]:
    """The probe for a one-worker sandbox's checking process (see :func:`checker_pid`)."""
    return checker_pid


@pytest.fixture
def no_leaks(box: Sandbox) -> Iterator[None]:
    """Fail the test if anything of its executions outlives them."""

    def settle() -> None:
        for _ in range(box.workers):  # touch every worker: a killed one is restarted here
            assert box.run_tests("def f():\n    return 1\n", [({}, 1)]).status == "passed"

    settle()  # what an earlier test started (a worker's restart) ends before the snapshot
    before = snapshot(box)
    yield
    settle()
    assert execution_leftovers() == []
    assert private_tmp_entries(box) == []
    after = snapshot(box)
    # a thread the test joined may still be listed while the system ends it (join returns
    # before the thread is gone): a leaked thread is still there after two seconds
    deadline = time.monotonic() + 2.0
    while after.threads > before.threads and time.monotonic() < deadline:
        time.sleep(0.05)
        after = snapshot(box)
    # a leak adds; fewer would mean that something begun before the snapshot ended during
    # the test, which the settling above leaves no room for on a quiet machine
    assert after.fds <= before.fds, "open descriptors were left behind"
    assert after.threads <= before.threads, "threads of the parent were left behind"
    for root in before.temp_roots - after.temp_roots:  # a restarted worker's old temp root
        assert not os.path.exists(root), f"{root} outlived its worker"
