"""Scatter plot of a metric's scores against the labels (matplotlib, Agg, loaded on use)."""

from __future__ import annotations

import io
import math
import os
from pathlib import Path

from lift_metrics._checks import check_path
from lift_metrics._io import atomic_write_bytes
from lift_metrics.validation._validate import ValidationResult


def plot_validation(result: ValidationResult, path: str | os.PathLike[str]) -> Path:
    """Write a PNG scatter plot of ``result``: scores against labels, the fitted line, r and CI.

    The figure is drawn with matplotlib's Agg canvas directly (no pyplot, so the caller's
    backend is left alone). The fitted line is the calibration line of the result
    (``label ≈ slope * score + intercept``); the dotted diagonal is perfect agreement.

    Parameters
    ----------
    result : ValidationResult
    path : path-like
        Where to write the PNG; parent directories are created.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ImportError
        If matplotlib is missing (``pip install 'lift-metrics[validation]'``).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - declared in the validation extra
        raise ImportError(
            "the scatter plot needs matplotlib: pip install 'lift-metrics[validation]'"
        ) from exc
    import numpy as np

    target = check_path("path", path)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure = Figure(figsize=(5.5, 5.0), dpi=110)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.scatter(result.labels, result.scores, s=22, alpha=0.7, edgecolors="none")
    low = min([0.0, *result.labels, *result.scores])
    high = max([1.0, *result.labels, *result.scores])
    axes.plot([low, high], [low, high], linestyle=":", color="grey", linewidth=1, label="y = x")
    if not math.isnan(result.slope) and result.slope != 0:
        s = np.linspace(min(result.scores), max(result.scores), 50)
        axes.plot(
            result.slope * s + result.intercept,
            s,
            color="tab:red",
            linewidth=1.5,
            label=(
                f"fit: label = {result.slope:.2f}·score "
                f"{'-' if result.intercept < 0 else '+'} {abs(result.intercept):.2f}"
            ),
        )
    axes.set_xlabel("label (human score)")
    axes.set_ylabel(f"{result.metric} score")
    level = round(result.confidence_level * 100)
    axes.set_title(
        f"{result.metric}: r = {result.pearson:.3f} "
        f"[{result.pearson_low:.3f}, {result.pearson_high:.3f}] ({level}% CI), n = {result.n}",
        fontsize=9,
    )
    axes.set_xlim(low - 0.03, high + 0.03)
    axes.set_ylim(low - 0.03, high + 0.03)
    axes.legend(loc="lower right", fontsize=8)
    axes.grid(alpha=0.3)
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, format="png")
    return atomic_write_bytes(target, image.getvalue())  # never a half-written plot
