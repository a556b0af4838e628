"""Fixtures for the code_quality family; the test doubles live in ``code_testkit.py``.

Registers ``code_testkit``, ``gaming_variants`` (the gaming suite's matrix),
``behaviour_rewrites`` and ``behaviour_variants`` (variants of the project tasks) in
``sys.modules`` for the test modules to import (see ``tests/conftest.py``); the
``hash_embedder`` fixture is the suite-wide one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import load_module

code_testkit = load_module(Path(__file__).with_name("code_testkit.py"))
load_module(Path(__file__).with_name("gaming_variants.py"))
load_module(Path(__file__).with_name("behaviour_rewrites.py"))
load_module(Path(__file__).with_name("behaviour_variants.py"))
FakeSandbox = code_testkit.FakeSandbox


@pytest.fixture
def fake_sandbox() -> FakeSandbox:
    return FakeSandbox()


@pytest.fixture(scope="session")
def real_sandbox() -> Iterator[Any]:
    from lift_metrics.sandbox import Sandbox

    with Sandbox(workers=2, timeout_s=5.0) as sandbox:
        yield sandbox
