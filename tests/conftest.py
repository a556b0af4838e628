"""Suite-wide pieces: the shared test kit, the ``hash_embedder`` fixture, the lane record.

The suite runs with ``--import-mode=importlib``, which leaves ``sys.path`` alone, so this
conftest (imported before every other one) registers ``tests/testkit.py`` in
``sys.modules`` as ``testkit``; the directories' conftests register their own kits with
:func:`testkit.load_module`.

Lanes: ``scripts/test.sh`` runs the fast lane (``-m "not slow"``), then the slow lane
(``-m slow``), each with ``--lane-record=FILE``; every run appends the number of tests it
collected and selected, and the script checks that the two lanes' selections add up to the
suite (``testkit.check_lanes``), so that no test falls between them.

Whole-dataset checks (marker ``full``: every HumanEval problem through every scorer, about
20 minutes on 2 cores) belong to the slow lane but skip, saying so, unless ``--full`` is given
(``bash scripts/test.sh --full``); the slow lane runs the same checks on a fixed subset.
"""

from __future__ import annotations

import importlib.util
import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# A suite started in the background by a non-interactive shell (``cmd &``, nohup) inherits
# SIGINT ignored, and so would every command the tests start: the Ctrl-C tests would then
# see a command run to its end. A Python handler here is reset to the default on exec, so
# the commands the tests start get Ctrl-C as a terminal would send it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Property tests check values, never timings: on a busy machine (the suite must pass at load 10)
# Hypothesis's deadline and its "data generation too slow" health check fail for the load, not
# for the code. A test may still set its own settings on top of this profile.
settings.register_profile(
    "lift-metrics", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("lift-metrics")

_TESTKIT = Path(__file__).with_name("testkit.py")
if "testkit" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("testkit", _TESTKIT)
    assert _spec is not None
    assert _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["testkit"] = _module
    _spec.loader.exec_module(_module)

from testkit import LONGEST_FIRST, HashEmbedder  # noqa: E402  (registered just above)


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    """A fresh deterministic embedder (see :class:`testkit.HashEmbedder`)."""
    return HashEmbedder()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--lane-record",
        metavar="FILE",
        default=None,
        help="append one JSON line to FILE: the -m expression, tests collected and selected "
        "(scripts/test.sh checks that its two lanes add up to the whole suite)",
    )
    parser.addoption(
        "--full",
        action="store_true",
        default=False,
        help="also run the whole-dataset checks (marker full; about 20 minutes on 2 cores)",
    )


_FULL_REASON = (
    "whole-dataset check (about 20 minutes on 2 cores): run with --full "
    "(bash scripts/test.sh --full); the slow lane checks a fixed subset"
)


def _file_rank(item: pytest.Item) -> int:
    path = Path(str(item.path))
    root = Path(__file__).parent.parent
    name = path.relative_to(root).as_posix() if path.is_relative_to(root) else ""
    return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=_file_rank)  # stable: the order within a file and among the rest is kept
    if config.getoption("--full"):
        return
    skip = pytest.mark.skip(reason=_FULL_REASON)
    for item in items:
        if item.get_closest_marker("full") is not None:
            item.add_marker(skip)


_deselected: list[int] = [0]


def pytest_deselected(items: list[Any]) -> None:
    _deselected[0] += len(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    path = session.config.getoption("--lane-record")
    worker = getattr(session.config, "workerinput", {}).get("workerid", "gw0")
    if not path or worker != "gw0":  # under pytest-xdist each worker collects the whole lane
        return
    selected = len(session.items)
    record = {
        "markexpr": session.config.getoption("markexpr") or "",
        "keyword": session.config.getoption("keyword") or "",
        "args": [str(arg) for arg in session.config.args],
        "collected": selected + _deselected[0],
        "selected": selected,
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
