"""Fixtures for the validation tests: the ``validate`` command registered, small label files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import testkit

import lift_metrics.cli as cli

VALIDATE_MODULE = "lift_metrics.validation._cli"


@pytest.fixture
def cli_main(monkeypatch: pytest.MonkeyPatch) -> object:
    """``lift_metrics.cli.main`` with the ``validate`` command registered.

    The lead adds the module to ``cli._COMMAND_MODULES``; until then the fixture adds it.
    """
    if VALIDATE_MODULE not in cli._COMMAND_MODULES:
        monkeypatch.setattr(cli, "_COMMAND_MODULES", (*cli._COMMAND_MODULES, VALIDATE_MODULE))
    return cli.main


@pytest.fixture
def write_jsonl() -> Callable[[Path, list[dict[str, object]]], Path]:
    """``write_jsonl(path, rows)`` writes one JSON object a line and returns the path."""
    return testkit.write_jsonl
