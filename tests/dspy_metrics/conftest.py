"""Registers ``dspy_testkit`` (tasks, a small program, a scripted DummyLM) in ``sys.modules``
for the test modules of this directory to import (see ``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

from testkit import load_module

load_module(Path(__file__).with_name("dspy_testkit.py"))
