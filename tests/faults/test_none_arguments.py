"""Fault injection: every public function that takes data names the parameter given ``None``.

Unchecked, ``load_labels(None)``, ``format_table(None)``, ``krippendorff_alpha(None)``,
``ab_decision(None, None)`` and a dozen more public functions of ``lift_metrics.stats`` and
``lift_metrics.validation`` raise a bare ``TypeError`` (``expected str, bytes or os.PathLike
object, not NoneType``, ``'NoneType' object is not iterable``) or an ``AttributeError`` from
deep inside. The contract (docs/errors.md): a :class:`~lift_metrics.errors.LiftMetricsError`
whose message starts with the name of the parameter.

The functions are found, not listed: every public function of the two packages (and every
public ``load_*`` function of the package) is called with ``None`` for each of its required
parameters, so a function added later is checked too.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest
from testkit import importable_names

from lift_metrics.errors import LiftMetricsError

DATA_PACKAGES = ("lift_metrics.stats", "lift_metrics.validation")
LOADER_PACKAGES = (
    "lift_metrics",
    "lift_metrics.scoring",
    "lift_metrics.optimizers",
    "lift_metrics.validation",
    "lift_metrics.stats",
)
# None is a value these accept, as documented: a metric's result that is no number (reported
# as unscorable), every split of the task file.
NONE_IS_VALID = {"lift_metrics.validation.score_value", "lift_metrics.optimizers.load_tasks"}


def _required(function: Callable[..., Any]) -> list[str]:
    kinds = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )
    parameters = inspect.signature(function).parameters.values()
    return [p.name for p in parameters if p.default is p.empty and p.kind in kinds]


def _public_functions() -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}
    for package in {*DATA_PACKAGES, *LOADER_PACKAGES}:
        module = importlib.import_module(package)
        for name in importable_names(module):
            value = getattr(module, name)
            if not inspect.isfunction(value) or not _required(value):
                continue
            if package in DATA_PACKAGES or name.startswith("load"):
                found[f"{package}.{name}"] = value
    return {name: found[name] for name in sorted(found) if name not in NONE_IS_VALID}


FUNCTIONS = _public_functions()


def test_the_sweep_finds_the_functions_that_once_raised_a_bare_type_error() -> None:
    assert {
        "lift_metrics.stats.ab_decision",
        "lift_metrics.stats.load_run_records",
        "lift_metrics.stats.paired_comparison",
        "lift_metrics.validation.format_table",
        "lift_metrics.validation.krippendorff_alpha",
        "lift_metrics.validation.load_labels",
        "lift_metrics.validation.validate_metric",
        "lift_metrics.scoring.load_samples",
        "lift_metrics.optimizers.load_config",
    } <= set(FUNCTIONS)
    assert len(FUNCTIONS) >= 50


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_none_for_every_required_argument_is_named_in_the_error(name: str) -> None:
    function = FUNCTIONS[name]
    parameters = _required(function)
    with pytest.raises(LiftMetricsError) as refused:
        function(**dict.fromkeys(parameters, None))
    names = "|".join(re.escape(parameter) for parameter in parameters)
    assert re.match(rf"^({names})(\[\d+\])? must ", str(refused.value)), str(refused.value)
