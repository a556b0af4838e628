"""Package contracts of lift_metrics.validation and lift_metrics.judge."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

HEAVY = ("torch", "sentence_transformers", "dspy", "litellm", "matplotlib", "krippendorff")


@pytest.mark.parametrize(
    "statement",
    [
        "import lift_metrics.validation",
        "import lift_metrics.judge",
        "import lift_metrics.validation._cli",
    ],
)
def test_import_is_light(statement: str) -> None:
    code = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    loaded = set(json.loads(out.stdout))
    assert sorted(name for name in HEAVY if name in loaded) == []


@pytest.mark.parametrize("package", ["lift_metrics.validation", "lift_metrics.judge"])
def test_all_is_sorted_unique_and_resolvable(package: str) -> None:
    module = importlib.import_module(package)
    names = list(module.__all__)
    assert names == sorted(names)
    assert len(names) == len(set(names))
    for name in names:
        assert getattr(module, name) is not None


def test_validate_command_help(cli_main, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main(["validate", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--data", "--split", "--target", "--out", "--weights", "--calibrate"):
        assert option in text
