"""Fixtures for the code_quality family; the test doubles live in ``code_testkit.py``.

The suite runs with ``--import-mode=importlib``, which leaves ``sys.path`` alone, so this
conftest (imported before the test modules of this directory) registers ``code_testkit`` and
``gaming_variants`` (the gaming suite's matrix) in ``sys.modules`` for the test modules to
import.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def _load_testkit(name: str = "code_testkit") -> Any:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        if spec is None or spec.loader is None:  # pragma: no cover - the file sits next to us
            raise ImportError(f"cannot load {name}.py next to {__file__}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


testkit = _load_testkit()
_load_testkit("gaming_variants")
FakeSandbox = testkit.FakeSandbox
HashEmbedder = testkit.HashEmbedder


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def fake_sandbox() -> FakeSandbox:
    return FakeSandbox()


def real_sandbox_available() -> bool:
    return importlib.util.find_spec("lift_metrics.sandbox") is not None and hasattr(
        importlib.import_module("lift_metrics.sandbox"), "Sandbox"
    )


@pytest.fixture(scope="session")
def real_sandbox() -> Iterator[Any]:
    if not real_sandbox_available():
        pytest.skip("lift_metrics.sandbox is not available yet (built by another helper)")
    from lift_metrics.sandbox import Sandbox

    with Sandbox(workers=2, timeout_s=5.0) as sandbox:
        yield sandbox
