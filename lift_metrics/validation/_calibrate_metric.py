"""Calibrating a built-in metric on labelled items: the whole recipe of a shipped profile.

:func:`calibrate_weights` fits weights to component values; this module gets those values
from the metric itself and applies, before the fit, the options the profile will be used
with: the embedding similarity floor (a number, or ``"auto"`` for
:func:`unrelated_similarity_floor` on the items' references), and for ``code_quality`` the
wrong-answer gate and the stub cap. :func:`calibrate_metric` returns the fit and the profile;
``lift-metrics validate --calibrate`` is a front end to it (docs/validation.md).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lift_metrics._builtin_metrics import (
    BUILTIN_METRICS,
    CodePairScorer,
    ReferenceScorer,
    builtin_scorer,
)
from lift_metrics._checks import check_iterable
from lift_metrics._profiles import CalibrationProfile, _code_options
from lift_metrics.errors import InputValueError
from lift_metrics.validation._calibrate import CalibrationResult, Objective, calibrate_weights
from lift_metrics.validation._labels import LabelledItem
from lift_metrics.validation.profiles import (
    save_weights,
    unrelated_similarity_floor,
)

__all__ = ["MetricCalibration", "calibrate_code_quality", "calibrate_metric"]


@dataclass(frozen=True)
class MetricCalibration:
    """A built-in metric calibrated on labelled items.

    Attributes
    ----------
    fit : CalibrationResult
        The weights with their in-sample and cross-validated Pearson.
    profile : CalibrationProfile
        The weights plus the options they were fitted with: pass
        ``**profile.metric_options()`` to the metric, or save it with :meth:`save`.
    """

    fit: CalibrationResult
    profile: CalibrationProfile

    def scorer(self) -> Any:
        """Return the metric's item scorer with this profile (for :func:`validate_metric`)."""
        metric = self.profile.metric or self.fit.metric
        return builtin_scorer(metric, **self.profile.metric_options())

    def save(self, path: str | os.PathLike[str], **metadata: Any) -> Path:
        """Write the profile to a ``.json``/``.toml`` file that :func:`load_profile` reads.

        The fit's figures (:meth:`CalibrationResult.to_dict`) and ``metadata`` go into the
        file's ``calibration`` table.
        """
        return save_weights(
            path,
            self.profile.weights,
            metric=self.fit.metric,
            similarity_floor=self.profile.similarity_floor or None,
            wrong_answer_gate=self.profile.wrong_answer_gate,
            stub_cap=self.profile.stub_cap,
            metadata={**self.fit.to_dict(), **metadata},
        )


def metric_components(scorer: Any, items: Sequence[LabelledItem]) -> dict[str, list[float]]:
    """Each component's value on every item, from breakdowns with the default options.

    For ``code_quality`` also ``tests.wrong_answers`` and ``stub`` (1.0 for a placeholder),
    which the opt-in gate and stub cap need; :func:`calibrate_metric` takes them out before
    fitting.
    """
    # the plain weighted sum: every component computed (what the weights are fitted on)
    code = isinstance(scorer, CodePairScorer)
    full = type(scorer)(embedder=scorer.embedder, **({"profile": "seed"} if code else {}))
    full.prefetch([item.item for item in items])
    columns: dict[str, list[float]] = {name: [] for name in scorer.components}
    if code:
        columns.update({"tests.wrong_answers": [], "stub": []})
    for item in items:
        breakdown = full.breakdown(item.item)
        components = breakdown.components
        for name in scorer.components:
            columns[name].append(float(components[name]))
        if code:
            columns["tests.wrong_answers"].append(float(components.get("tests.wrong_answers", 0)))
            columns["stub"].append(1.0 if breakdown.stub else 0.0)
    return columns


def gate_columns(columns: dict[str, list[float]], wrong: Sequence[float]) -> dict[str, list[float]]:
    """Apply code_quality's wrong-answer gate to every item's components (the metric's rule)."""
    from lift_metrics.code import gate_by_wrong_answers

    rows = [
        gate_by_wrong_answers(
            {**{name: values[i] for name, values in columns.items()}, "tests.wrong_answers": w}
        )
        for i, w in enumerate(wrong)
    ]
    return {name: [row[name] for row in rows] for name in columns}


def _reference_texts(scorer: Any, items: Sequence[LabelledItem]) -> list[str]:
    """Return the reference text the similarity component embeds, one per item (for 'auto')."""
    if scorer.similarity_component == "intent":
        return [scorer.spec.arguments(item.item)["expected"].intent.description for item in items]
    return [str(item.item["expected_code"]) for item in items]


def calibrate_metric(
    metric: str,
    items: Sequence[LabelledItem],
    *,
    objective: Objective = "pearson",
    folds: int = 5,
    seed: int = 0,
    similarity_floor: float | Literal["auto"] | None = None,
    wrong_answer_gate: bool = False,
    stub_cap: float | None = None,
) -> MetricCalibration:
    """Fit a built-in metric's weights on labelled items, with the options it will use.

    Parameters
    ----------
    metric : {"ir_quality", "code_quality", "end_to_end"}
    items : sequence of LabelledItem
        The items to fit on, e.g. the ``calibration`` split of :func:`load_labels`; never
        the split the result will be reported on. At least ``2 * folds``.
    objective, folds, seed
        As :func:`calibrate_weights`; the folds are grouped by the scorer's group (the
        function a pair is built on), else by item.
    similarity_floor : float in [0, 1), "auto" or None
        Rescale the embedding similarity (``intent`` for IR, ``semantic`` for code) by this
        floor before fitting; ``"auto"`` takes :func:`unrelated_similarity_floor` of the
        items' references. Not for ``end_to_end``.
    wrong_answer_gate : bool, default False
        ``code_quality`` only: fit the gated components.
    stub_cap : float, optional
        ``code_quality`` only: fit the capped score (``upper_bounds`` of
        :func:`calibrate_weights` on the items that are stubs).

    Returns
    -------
    MetricCalibration
        ``.fit`` (figures) and ``.profile`` (weights and options).

    Raises
    ------
    ValueError
        An unknown metric, ``reference_score`` (its model ships fitted) or ``aggregate``
        (its weights price quality against cost and latency), a floor with
        ``end_to_end``, the gate or cap with another metric than ``code_quality``, too few
        items (as :func:`calibrate_weights`).
    """
    if metric not in BUILTIN_METRICS:
        raise InputValueError(f"metric must be one of {BUILTIN_METRICS}, got {metric!r}")
    scorer = builtin_scorer(metric)
    if isinstance(scorer, ReferenceScorer):
        raise InputValueError("reference_score cannot be calibrated (its model ships fitted)")
    if metric == "aggregate":
        raise InputValueError(
            "aggregate cannot be calibrated: its weights trade quality against cost and "
            "latency, a choice of the user's, not a fit to quality labels"
        )
    key = scorer.similarity_component
    if similarity_floor is not None and key is None:
        raise InputValueError("similarity_floor applies to ir_quality and code_quality only")
    options = _code_options(metric, wrong_answer_gate, stub_cap)  # validated before scoring
    items = list(items)
    columns = metric_components(scorer, items)
    wrong = columns.pop("tests.wrong_answers", None)
    stubs = columns.pop("stub", None)
    floor: float | None = None
    if similarity_floor is not None and key is not None:
        from lift_metrics.similarity import check_similarity_floor, rescale_similarity

        floor = (
            unrelated_similarity_floor(_reference_texts(scorer, items))
            if similarity_floor == "auto"
            else check_similarity_floor(similarity_floor)
        )
        columns[key] = [rescale_similarity(v, floor) for v in columns[key]]
    if options.get("wrong_answer_gate") and wrong is not None:
        columns = gate_columns(columns, wrong)
    bounds = None
    if options.get("stub_cap") is not None and stubs is not None:
        bounds = [options["stub_cap"] if stub else math.inf for stub in stubs]
    fit = calibrate_weights(
        columns,
        [item.label for item in items],
        objective=objective,
        folds=folds,
        groups=[scorer.group(item.item) or item.id for item in items],
        default_weights=scorer.default_weights,
        metric=metric,
        seed=seed,
        upper_bounds=bounds,
    )
    profile = CalibrationProfile(
        metric=metric, weights=dict(fit.weights), similarity_floor=floor or 0.0, **options
    )
    return MetricCalibration(fit=fit, profile=profile)


def calibrate_code_quality(
    items: Sequence[LabelledItem],
    *,
    similarity_floor: float | Literal["auto"] | None = "auto",
    wrong_answer_gate: bool = True,
    stub_cap: float | None = 0.1,
    **options: Any,
) -> MetricCalibration:
    """:func:`calibrate_metric` for ``code_quality``, by default with the shipped recipe.

    The defaults are the options of the shipped profile (floor ``"auto"``, wrong-answer gate
    on, stub cap 0.1); ``options`` go to :func:`calibrate_metric` (``folds``, ``seed``, ...).

    Examples
    --------
    >>> from lift_metrics.validation import load_labels, shipped_labels_path
    >>> items = load_labels(shipped_labels_path("code_quality"))
    >>> fitted = calibrate_code_quality(
    ...     [i for i in items if i.split == "calibration"])  # doctest: +SKIP
    >>> fitted.profile.metric_options()  # doctest: +SKIP
    {'weights': {...}, 'similarity_floor': 0.44, 'wrong_answer_gate': True, 'stub_cap': 0.1}
    """
    check_iterable("items", items, of="labelled items")
    return calibrate_metric(
        "code_quality",
        items,
        similarity_floor=similarity_floor,
        wrong_answer_gate=wrong_answer_gate,
        stub_cap=stub_cap,
        **options,
    )
