"""Package-level contracts: the public API map and the command line (import cost: test_common)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from testkit import importable_names

import lift_metrics
from lift_metrics.cli import build_parser, main

PUBLIC_PACKAGES = (
    "lift_metrics",
    "lift_metrics.stats",
    "lift_metrics.sandbox",
    "lift_metrics.code",
    "lift_metrics.composite",
    "lift_metrics.dspy_metrics",
    "lift_metrics.ir",
    "lift_metrics.similarity",
    "lift_metrics.validation",
    "lift_metrics.optimizers",
    "lift_metrics.scoring",
    "lift_metrics.lm",
)


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_all_is_sorted_unique_and_resolvable(package: str) -> None:
    module = importlib.import_module(package)
    names = list(module.__all__)
    assert names == sorted(names), f"{package}.__all__ is not sorted"
    assert len(names) == len(set(names)), f"{package}.__all__ has duplicates"
    for name in names:
        assert getattr(module, name) is not None, f"{package}.{name} does not resolve"


#: (package, name, home): importable from the package, outside its __all__; home is the
#: module the library itself imports it from
INTERNALS = [
    ("lift_metrics.code", "check_stub_cap", "lift_metrics._checks"),
    ("lift_metrics.code", "check_wrong_answer_gate", "lift_metrics._checks"),
    ("lift_metrics.code", "FAIL_CEILING", "lift_metrics._profiles"),
    ("lift_metrics.code", "parses", "lift_metrics._pyast"),
    ("lift_metrics.code", "score_code", "lift_metrics.code._quality"),
    ("lift_metrics.stats", "bootstrap_means", "lift_metrics._resampling"),
    ("lift_metrics.stats", "check_confidence_level", "lift_metrics._checks"),
]


@pytest.mark.parametrize(
    "package", [*PUBLIC_PACKAGES[1:], "lift_metrics.judge", "lift_metrics.pricing"]
)
def test_what_a_package_keeps_outside_all_is_named_in_its_docstring(package: str) -> None:
    """``__all__`` is what a newcomer reads; every other name the package offers (a result
    type, a default, a name whose home is elsewhere, a shared internal) keeps its import path
    and is named in the package's docstring, so nothing is importable unannounced."""
    module = importlib.import_module(package)
    doc = module.__doc__ or ""
    outside = [name for name in importable_names(module) if name not in module.__all__]
    if package in {"lift_metrics.judge", "lift_metrics.pricing"}:  # modules: what they define
        outside = [
            n for n in outside if getattr(getattr(module, n), "__module__", package) == package
        ]
    assert [name for name in outside if f"``{name}``" not in doc and f"`{name}`" not in doc] == []


@pytest.mark.parametrize(("package", "name", "home"), INTERNALS)
def test_internals_keep_their_import_path_outside_all(package: str, name: str, home: str) -> None:
    module = importlib.import_module(package)
    assert name not in module.__all__
    assert getattr(module, name) is getattr(importlib.import_module(home), name)


def test_top_level_exports_are_the_design_contract() -> None:
    design = {  # the public API contract (README, docs/)
        "IR", "ir_quality", "intent_match", "signature_match", "structure_match",
        "constraint_match", "code_quality", "syntax_correctness", "test_pass_rate",
        "semantic_similarity", "style_conformance", "end_to_end", "latency_penalty",
        "aggregate_metric", "ProviderRoute", "route_cost", "route_quality",
        "suggest_route_migration",
    }  # fmt: skip
    assert design <= set(lift_metrics.__all__)


def test_unknown_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        lift_metrics.no_such_name  # noqa: B018


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    subparsers = next(action for action in build_parser()._actions if action.dest == "command")
    commands = set(subparsers.choices)  # type: ignore[attr-defined]
    assert {"report", "compare", "ab", "analyze", "validate"} <= commands
    for command in commands:
        assert command in out


def test_every_command_has_a_help_line_and_a_description() -> None:
    subparsers = next(action for action in build_parser()._actions if action.dest == "command")
    helps = {action.dest: action.help for action in subparsers._choices_actions}  # type: ignore[attr-defined]
    for name, parser in subparsers.choices.items():  # type: ignore[attr-defined]
        assert helps[name], name  # the first paragraph of the handler's docstring
        assert parser.description, name  # the paragraphs after it
    # listed as argparse lists help: lower-case first letter, no final period
    assert helps["analyze"] == (
        "static code-quality metrics (radon + ast + ruff) of Python files or directories"
    )


def test_console_script_runs_as_module() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "lift_metrics", "--version"], capture_output=True, text=True
    )
    assert result.returncode == 0
    assert result.stdout.strip() == f"lift-metrics {lift_metrics.__version__}"


def test_lazy_export_map_matches_all() -> None:
    assert set(lift_metrics.__all__) == set(lift_metrics._EXPORTS)
