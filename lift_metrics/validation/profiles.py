"""Calibrated profiles: weights files, the options that go with them, the shipped profiles.

The profiles themselves (:class:`CalibrationProfile`, reading and writing them, the shipped
ones) are data that the metrics read, defined in ``lift_metrics._profiles`` and exported here;
this module adds :func:`unrelated_similarity_floor`, which measures a floor with the embedder.
See docs/validation.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lift_metrics._checks import check_iterable
from lift_metrics._profiles import (
    SHIPPED_PROFILES,
    CalibrationProfile,
    load_profile,
    load_weights,
    resolve_profile,
    save_weights,
    shipped_profile_path,
    weights_file_metric,
)
from lift_metrics.errors import InputValueError

__all__ = [
    "CalibrationProfile",
    "SHIPPED_PROFILES",
    "load_profile",
    "load_weights",
    "resolve_profile",
    "save_weights",
    "shipped_profile_path",
    "unrelated_similarity_floor",
    "weights_file_metric",
]


def unrelated_similarity_floor(
    texts: Sequence[str], *, quantile: float = 0.95, embedder: Any = None
) -> float:
    """Return a similarity floor from the cosine between texts that describe different things.

    Parameters
    ----------
    texts : sequence of str
        At least 3 distinct texts, each about a different function (e.g. the references of
        the calibration split, one per function). Labels are not used.
    quantile : float, default 0.95
        Which quantile of the pairwise cosines (clipped to [0, 1]) to return.
    embedder : Embedder, optional
        Default the bundled all-MiniLM-L6-v2.

    Returns
    -------
    float
        The quantile, rounded to 2 decimals: the cosine that unrelated texts reach.

    Raises
    ------
    ValueError
        Fewer than 3 distinct texts, or ``quantile`` outside [0, 1].

    Examples
    --------
    >>> class Axes:  # a toy embedder: text i -> unit vector along axis i
    ...     def embed(self, texts):
    ...         return np.eye(len(texts))
    >>> unrelated_similarity_floor(["a", "b", "c"], embedder=Axes())
    0.0
    """
    from lift_metrics._checks import check_unit_interval
    from lift_metrics.similarity import resolve_embedder

    q = check_unit_interval("quantile", quantile)
    distinct = list(dict.fromkeys(str(t) for t in check_iterable("texts", texts, of="texts")))
    if len(distinct) < 3:
        raise InputValueError(f"texts must hold at least 3 distinct texts, got {len(distinct)}")
    rows = np.asarray(resolve_embedder(embedder).embed(distinct), dtype=float)
    cosines = np.clip(rows @ rows.T, 0.0, 1.0)[np.triu_indices(len(distinct), 1)]
    return round(float(np.quantile(cosines, q)), 2)
