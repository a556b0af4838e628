"""Registers ``optimizers_testkit`` (DummyLM answers for the reference pipeline) in
``sys.modules`` for the test modules of this directory to import (see ``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

from testkit import load_module

load_module(Path(__file__).with_name("optimizers_testkit.py"))
