"""Package-level properties of lift_metrics.stats: exports, docs, import cost."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import lift_metrics._checks
import lift_metrics._resampling
import lift_metrics.stats as stats

FUNCTIONS = [name for name in stats.__all__ if inspect.isfunction(getattr(stats, name))]
#: importable from lift_metrics.stats but outside its public API: their home is a shared
#: internal module (lift_metrics._resampling, lift_metrics._checks)
SHARED_INTERNALS = {
    "bootstrap_means": lift_metrics._resampling.bootstrap_means,
    "check_confidence_level": lift_metrics._checks.check_confidence_level,
}


def test_all_is_sorted() -> None:
    assert stats.__all__ == sorted(stats.__all__)


@pytest.mark.parametrize("name", sorted(SHARED_INTERNALS))
def test_shared_internals_import_from_stats_but_are_not_public(name: str) -> None:
    assert getattr(stats, name) is SHARED_INTERNALS[name]
    assert name not in stats.__all__


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
