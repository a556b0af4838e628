"""The default sandbox grows with its callers' concurrency beyond its first 2 workers."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from lift_metrics.sandbox import Sandbox, _default, get_default_sandbox

SLOW = "def f():\n    import time\n    time.sleep(2.0)\n    return 1\n"


@pytest.fixture
def fresh_default() -> Iterator[None]:
    _default._close_default()
    yield
    _default._close_default()


def _started(box: Sandbox) -> int:
    return sum(1 for worker in box._slots if worker is not None)


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_default")
def test_concurrent_callers_get_a_worker_each() -> None:
    box = get_default_sandbox()
    assert box.workers == 2
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(box.run_tests(SLOW, [({}, 1)]).status))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == ["passed"] * 6
    # six executions at a time: the default grows to six workers instead of running them
    # two by two
    assert box.workers == 6
    assert _started(box) == 6


@pytest.mark.usefixtures("fresh_default")
def test_requested_workers_are_capped() -> None:
    box = get_default_sandbox(workers=5)
    assert box.workers == 5
    assert _started(box) == 2  # the new slots start on first use
    assert get_default_sandbox(workers=100).workers == _default.MAX_DEFAULT_WORKERS
    assert get_default_sandbox(workers=3) is box
    assert box.workers == 32


def test_requested_workers_are_validated() -> None:
    with pytest.raises(ValueError, match="workers must be >= 1"):
        get_default_sandbox(workers=0)


def test_a_sandbox_made_by_the_caller_keeps_its_size() -> None:
    with Sandbox(workers=1) as box:
        results: list[str] = []
        threads = [
            threading.Thread(
                target=lambda: results.append(
                    box.run_tests("def f():\n    return 1\n", [({}, 1)]).status
                )
            )
            for _ in range(3)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == ["passed"] * 3
        assert box.workers == 1


def test_check_scripts_are_compiled_once_and_still_judged_each_time() -> None:
    from lift_metrics.sandbox import _prepare

    script = "def check(candidate):\n    assert candidate(2) == 4\n"
    with Sandbox(workers=1) as box:
        first = box.run_tests("def f(x):\n    return x * 2\n", script)
        assert script in _prepare._script_cache
        second = box.run_tests("def f(x):\n    return x + 3\n", script)
        assert (first.status, second.status) == ("passed", "failed")
        for _ in range(2):  # a script without check() is refused, cached or not
            with pytest.raises(ValueError, match="defines no top-level check"):
                box.run_tests("def f(x):\n    return x\n", "def other(candidate):\n    pass\n")
