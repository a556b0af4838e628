"""Package-level properties of lift_metrics.stats: exports, docs, import cost."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import lift_metrics.stats as stats

FUNCTIONS = [name for name in stats.__all__ if inspect.isfunction(getattr(stats, name))]


def test_all_is_sorted_and_complete() -> None:
    assert stats.__all__ == sorted(stats.__all__)
    public = {
        name
        for name, value in vars(stats).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }
    assert set(stats.__all__) == public


def test_design_contract_names_are_exported() -> None:
    required = [
        "Statistics",
        "summarize",
        "letter_grade",
        "tier_uplift",
        "cost_of_pass",
        "composite_score",
        "pass_at_k",
        "forge_score",
        "compare_reports",
        "paired_comparison",
        "retrieval_precision",
        "retrieval_recall",
    ]
    assert set(required) <= set(stats.__all__)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_public_functions_have_numpydoc_sections(name: str) -> None:
    doc = inspect.getdoc(getattr(stats, name)) or ""
    for section in ("Parameters", "Returns", "Examples"):
        assert f"\n{section}\n" in doc, f"{name} lacks a {section} section"
    assert ">>> " in doc


def test_import_does_not_load_scipy_or_heavy_libraries() -> None:
    code = (
        "import sys, lift_metrics.stats; "
        "bad = [m for m in ('scipy', 'scipy.stats', 'torch', 'dspy', 'rich') if m in sys.modules]; "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
