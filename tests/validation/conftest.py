"""Fixtures for the validation tests: the ``validate`` command registered, small label files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import testkit

import lift_metrics.cli as cli

VALIDATE_MODULE = "lift_metrics.validation._cli"


@pytest.fixture
def cli_main() -> object:
    """``lift_metrics.cli.main``, which registers the ``validate`` command."""
    assert VALIDATE_MODULE in cli._COMMAND_MODULES
    return cli.main


@pytest.fixture
def write_jsonl() -> Callable[[Path, list[dict[str, object]]], Path]:
    """``write_jsonl(path, rows)`` writes one JSON object a line and returns the path."""
    return testkit.write_jsonl
