"""Agreement among raters: Krippendorff's alpha (the ``krippendorff`` package)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from lift_metrics._checks import check_choice, check_iterable
from lift_metrics.errors import (
    ConstantInputWarning as ConstantInputWarning,
    InputTypeError,
    InputValueError,
)

_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def krippendorff_alpha(
    ratings: Sequence[Sequence[float | None]] | np.ndarray,
    *,
    level: Literal["nominal", "ordinal", "interval", "ratio"] = "interval",
) -> float:
    r"""Krippendorff's alpha among raters, missing ratings allowed.

    Parameters
    ----------
    ratings : 2-D array-like, shape (raters, items)
        One row per rater; ``None``/NaN where a rater did not rate an item.
    level : {"nominal", "ordinal", "interval", "ratio"}, default "interval"
        Level of measurement (scores in [0, 1] are interval data).

    Returns
    -------
    float
        :math:`\alpha = 1 - D_o / D_e`: 1 is perfect agreement, 0 is agreement at chance
        level, negative is systematic disagreement. nan (with a
        :class:`ConstantInputWarning`) when fewer than two items have two ratings or all
        pairable ratings are equal.

    Raises
    ------
    ValueError
        If ``ratings`` is not 2-D with at least 2 raters, or ``level`` is unknown.
    ImportError
        If the ``krippendorff`` package is missing (``pip install 'lift-metrics[validation]'``).

    Notes
    -----
    Computed by the maintained ``krippendorff`` package (coincidence-matrix method of
    Krippendorff, *Computing Krippendorff's Alpha-Reliability*, 2011). Only items with at
    least two ratings count.

    Examples
    --------
    Krippendorff's (2011) worked example, 4 observers and 12 units (interval alpha 0.849):

    >>> nan = float("nan")
    >>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    ...         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    ...         [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    ...         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    >>> round(krippendorff_alpha(data), 3)
    0.849
    """
    check_choice("level", level, _LEVELS)
    matrix = _as_matrix(ratings)
    pairable = np.sum(~np.isnan(matrix), axis=0) >= 2
    values = matrix[:, pairable]
    values = values[~np.isnan(values)]
    if pairable.sum() < 2 or values.size == 0 or np.all(values == values[0]):
        warnings.warn(
            "krippendorff_alpha: fewer than two items with two ratings, or all ratings equal; "
            "alpha is nan",
            ConstantInputWarning,
            stacklevel=2,
        )
        return math.nan
    try:
        import krippendorff
    except ImportError as exc:  # pragma: no cover - declared in the validation extra
        raise ImportError(
            "rater agreement needs the krippendorff package: pip install 'lift-metrics[validation]'"
        ) from exc
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    return float(alpha)


def _as_matrix(ratings: Any) -> np.ndarray:
    check_iterable("ratings", ratings, of="rows of ratings (one per rater)")
    for row in ratings:
        check_iterable("ratings", row, of="rows of ratings (one per rater)")
    rows = [list(row) for row in ratings]
    if len(rows) < 2:
        raise InputValueError(f"ratings must have at least 2 raters (rows), got {len(rows)}")
    width = len(rows[0])
    if any(len(row) != width for row in rows) or width == 0:
        raise InputValueError(
            "ratings must be a non-empty 2-D array: every rater rates the same items"
        )
    try:
        return np.array(
            [[math.nan if v is None else float(v) for v in row] for row in rows], dtype=float
        )
    except (TypeError, ValueError) as exc:
        raise InputTypeError(f"ratings must hold numbers or None: {exc}") from None
