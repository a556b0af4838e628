"""The package-wide conventions stated in the package docstring hold for every public function."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from testkit import importable_names

import lift_metrics

MODULES = (
    "lift_metrics",
    "lift_metrics.code",
    "lift_metrics.ir",
    "lift_metrics.composite",
    "lift_metrics.stats",
    "lift_metrics.validation",
)


def public_functions() -> Iterator[tuple[str, Callable[..., Any]]]:
    seen: set[int] = set()
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in importable_names(module):
            value = getattr(module, name)
            if inspect.isfunction(value) and id(value) not in seen:
                seen.add(id(value))
                yield f"{module_name}.{name}", value


def compared_pairs(params: list[str]) -> list[tuple[str, str]]:
    """(predicted-like, expected-like) parameter pairs of one signature."""
    pairs = [("predicted", "expected"), ("retrieved", "relevant")]
    pairs += [(f"predicted_{p[9:]}", p) for p in params if p.startswith("expected_")]
    if "scores" in params:  # calibrate_weights(components, labels) takes no scores
        pairs.append(("scores", "labels"))
    return [pair for pair in pairs if pair[1] in params]


FUNCTIONS = dict(public_functions())


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_the_prediction_comes_before_the_reference(name: str) -> None:
    params = list(inspect.signature(FUNCTIONS[name]).parameters)
    for predicted, expected in compared_pairs(params):
        assert predicted in params, f"{name} has {expected} without {predicted}"
        assert params.index(predicted) < params.index(expected), (
            f"{name} takes {expected} before {predicted}: {params}"
        )


def test_every_pure_metric_of_a_reference_is_covered() -> None:
    """The check above sees the metrics it is meant for (a rename would silently skip them)."""
    covered = {
        n for n, f in FUNCTIONS.items() if compared_pairs(list(inspect.signature(f).parameters))
    }
    for name in ("ir_quality", "code_quality", "reference_score", "structural_similarity"):
        assert f"lift_metrics.{name}" in covered
    assert "lift_metrics.end_to_end" in covered  # the function: no module has that name
    assert "lift_metrics.stats.retrieval_precision" in covered
    assert "lift_metrics.validation.validate_scores" in covered


def test_the_package_docstring_states_the_order_that_the_code_follows() -> None:
    doc = lift_metrics.__doc__
    assert doc is not None
    assert "``(predicted, expected)``" in doc
    assert "reverse of scikit-learn" in doc
    assert "``a - b``" in doc
    assert "ttest_rel" in doc
