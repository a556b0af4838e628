"""Text table and Markdown report of validation results."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from lift_metrics._checks import check_iterable
from lift_metrics.errors import InputTypeError, TooFewScoresError
from lift_metrics.validation._calibrate import CalibrationResult
from lift_metrics.validation._validate import ValidationResult


def _num(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    if math.isnan(value):
        return "nan"
    return f"{value:.{digits}f}"


def _signed(value: float, digits: int = 3) -> str:
    """``+ 0.12`` / ``- 0.31`` for the intercept of a line."""
    if math.isnan(value):
        return "+ nan"
    return f"{'-' if value < 0 else '+'} {abs(value):.{digits}f}"


def _verdict(ok: bool) -> str:
    return "pass" if ok else "FAIL"


def _row(result: ValidationResult) -> list[str]:
    return [
        result.metric,
        str(result.n),
        f"{_num(result.pearson)} [{_num(result.pearson_low)}, {_num(result.pearson_high)}]",
        _num(result.spearman),
        _num(result.kendall),
        f"{_num(result.slope, 2)}·s {_signed(result.intercept, 2)} "
        f"(±{_num(result.residual_std, 2)})",
        f"{result.target:g}",
        _verdict(result.passed),
        _verdict(result.passed_ci),
        str(len(result.missing)),
    ]


_HEADER = [
    "metric",
    "n",
    "pearson [CI]",
    "spearman",
    "kendall",
    "label ≈ fit (resid sd)",
    "target",
    "r >= target",
    "CI low >= target",
    "missing",
]


def _check_results(results: Any) -> list[ValidationResult]:
    """``results`` as a list of ValidationResult, or an error naming the parameter."""
    listed = list(check_iterable("results", results, of="ValidationResult"))
    for index, result in enumerate(listed):
        if not isinstance(result, ValidationResult):
            raise InputTypeError(
                f"results[{index}] must be a ValidationResult, got {type(result).__name__}"
            )
    return listed


def format_table(results: Sequence[ValidationResult]) -> str:
    """Return a plain-text table of validation results, one row per metric.

    Examples
    --------
    >>> from lift_metrics.validation import validate_scores
    >>> r = validate_scores([0.1, 0.4, 0.35, 0.8], [0.0, 0.5, 0.3, 1.0], metric="m")
    >>> print(format_table([r]).splitlines()[2])
    m       4  0.992 [0.669, 1.000]  1.000     1.000    1.44·s - 0.14 (±0.06)  0.8     pass ...
    """
    results = _check_results(results)
    rows = [_HEADER, *(_row(r) for r in results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    extra = []
    for r in results:
        if r.rater_alpha is not None:
            extra.append(
                f"{r.metric}: {r.raters} rating fields, Krippendorff's alpha "
                f"{_num(r.rater_alpha)}; r with the rater mean {_num(r.rater_mean_pearson)} "
                f"[{_num(r.rater_mean_low)}, {_num(r.rater_mean_high)}]"
            )
    return "\n".join(line.rstrip() for line in lines + extra)


def markdown_report(
    results: Sequence[ValidationResult],
    *,
    sources: Mapping[str, str] | None = None,
    split: str | None = None,
    plots: Mapping[str, str] | None = None,
    calibrations: Mapping[str, tuple[CalibrationResult, ValidationResult | None]] | None = None,
    categories: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """Return a Markdown report: results table, rater agreement, calibration, plots, missing items.

    Parameters
    ----------
    results : sequence of ValidationResult
    sources : mapping, optional
        Metric -> data file it was validated on.
    split : str, optional
        The split reported (``heldout``, ``calibration``, ``all``).
    plots : mapping, optional
        Metric -> PNG file name (relative to the report).
    calibrations : mapping, optional
        Metric -> (the fit on the calibration split, the fitted weights' validation on the
        reported split or None).
    categories : mapping, optional
        Metric -> item id -> category; adds a table of the mean ``score - label`` per
        category, largest disagreement first (where the metric over- or under-scores).

    Examples
    --------
    >>> from lift_metrics.validation import validate_scores
    >>> r = validate_scores([0.9, 0.8, 0.7, 0.1], [1.0, 0.2, 0.6, 0.0], metric="m",
    ...                     ids=["a", "b", "c", "d"])
    >>> text = markdown_report([r], categories={"m": {"a": "exact", "b": "wrong",
    ...                                               "c": "wrong", "d": "unrelated"}})
    >>> print(text[text.index("| category"):].splitlines()[2])
    | wrong | 2 | +0.350 |
    """
    results = _check_results(results)
    lines = ["# Metric validation", ""]
    if split:
        lines += [f"Split reported: **{split}**.", ""]
    lines += [
        "| metric | n | Pearson r | CI | Spearman | Kendall tau-b | slope | intercept "
        "| residual sd | target | r >= target | CI low >= target |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in results:
        level = round(r.confidence_level * 100)
        lines.append(
            f"| {r.metric} | {r.n} | {_num(r.pearson)} | [{_num(r.pearson_low)}, "
            f"{_num(r.pearson_high)}] ({level}%) | {_num(r.spearman)} | {_num(r.kendall)} | "
            f"{_num(r.slope)} | {_num(r.intercept)} | {_num(r.residual_std)} | {r.target:g} | "
            f"{_verdict(r.passed)} | {_verdict(r.passed_ci)} |"
        )
    lines.append("")
    for r in results:
        lines.append(f"## {r.metric}")
        lines.append("")
        if sources and r.metric in sources:
            lines.append(f"Data: `{sources[r.metric]}`.")
            lines.append("")
        lines.append(
            f"Pearson r = {_num(r.pearson)} with a {round(r.confidence_level * 100)}% interval "
            f"[{_num(r.pearson_low)}, {_num(r.pearson_high)}] (p = {r.pearson_pvalue:.2g}) on "
            f"{r.n} items; the target is {r.target:g}. Calibration line: label ≈ "
            f"{_num(r.slope)} × score {_signed(r.intercept)}, residual sd {_num(r.residual_std)}."
        )
        lines.append("")
        if r.rater_alpha is not None:
            lines.append(
                f"Raters: {r.raters} rating fields; Krippendorff's alpha (interval) = "
                f"{_num(r.rater_alpha)}. Pearson of the metric with the rater mean = "
                f"{_num(r.rater_mean_pearson)} [{_num(r.rater_mean_low)}, "
                f"{_num(r.rater_mean_high)}]. Agreement among raters bounds how well any "
                "metric can track the labels."
            )
            lines.append("")
        if plots and r.metric in plots:
            lines += [f"![{r.metric} scores against labels]({plots[r.metric]})", ""]
        if calibrations and r.metric in calibrations:
            fit, fitted_result = calibrations[r.metric]
            lines += [
                f"### Calibrated weights ({fit.objective}, fitted on {fit.n} calibration items, "
                f"{fit.folds}-fold CV)",
                "",
                "| | weights | Pearson (fit data) | Pearson (CV) | Pearson (reported split) |",
                "|---|---|---:|---:|---:|",
            ]
            default_w = ", ".join(f"{k} {v:.2f}" for k, v in (fit.default_weights or {}).items())
            fitted_w = ", ".join(f"{k} {v:.3f}" for k, v in fit.weights.items())
            reported = "-" if fitted_result is None else _num(fitted_result.pearson)
            lines.append(
                f"| default | {default_w} | {_num(fit.default_pearson)} | - | {_num(r.pearson)} |"
            )
            lines.append(
                f"| fitted | {fitted_w} | {_num(fit.in_sample_pearson)} | "
                f"{_num(fit.cv_pearson)} | {reported} |"
            )
            lines.append("")
        if categories and r.metric in categories:
            lines += _category_table(r, categories[r.metric])
        if r.missing:
            lines.append(f"Missing scores ({len(r.missing)}):")
            lines.append("")
            lines += [f"- `{item}`: {reason}" for item, reason in r.missing]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _category_table(result: ValidationResult, category_of: Mapping[str, str]) -> list[str]:
    residuals: dict[str, list[float]] = {}
    for item, score, label in zip(result.ids, result.scores, result.labels, strict=True):
        residuals.setdefault(category_of.get(item, "(none)"), []).append(score - label)
    if len(residuals) < 2:
        return []
    rows = sorted(residuals.items(), key=lambda kv: (-abs(sum(kv[1]) / len(kv[1])), kv[0]))
    lines = [
        "Where the metric disagrees with the labels (mean of score − label per category; "
        "positive: the metric scores too high):",
        "",
        "| category | n | mean score − label |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {len(v)} | {sum(v) / len(v):+.3f} |" for name, v in rows]
    lines.append("")
    return lines


def unscored_section(exc: TooFewScoresError) -> str:
    """Return the report's section on a metric that could not be validated at all."""
    lines = [
        "",
        f"## {exc.metric}",
        "",
        f"Not validated: {exc.scored} items could be scored, at least 3 are needed.",
        "",
        f"Missing scores ({len(exc.missing)}):",
        "",
        *(f"- `{item}`: {reason}" for item, reason in exc.missing),
    ]
    return "\n".join(lines) + "\n"


def json_report(
    results: Sequence[ValidationResult],
    *,
    split: str | None,
    unscored: Sequence[TooFewScoresError] = (),
    calibrations: Mapping[str, tuple[CalibrationResult, ValidationResult | None]] | None = None,
) -> dict[str, Any]:
    """Return the plain-JSON document of a validation run (``validation.json``)."""
    from lift_metrics._io import to_jsonable

    document: dict[str, Any] = to_jsonable(  # a dict stays a dict with the same keys
        {
            "split": split,
            "results": [r.to_dict() for r in results],
            "unscored": [
                {
                    "metric": bad.metric,
                    "scored": bad.scored,
                    "error": str(bad),
                    "missing": [{"id": i, "reason": r} for i, r in bad.missing],
                }
                for bad in unscored
            ],
            "calibration": {
                name: {"fit": fit.to_dict(), "reported": None if fr is None else fr.to_dict()}
                for name, (fit, fr) in (calibrations or {}).items()
            },
        }
    )
    return document
