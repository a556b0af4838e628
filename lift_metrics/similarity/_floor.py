"""The similarity floor: a calibrated baseline removed from a similarity (IR and code metrics)."""

from __future__ import annotations

from lift_metrics._checks import check_similarity_floor


def rescale_similarity(similarity: float, floor: float) -> float:
    r"""Map a similarity in [0, 1] so that ``floor`` and below score 0 and 1 stays 1.

    Parameters
    ----------
    similarity : float
        A cosine similarity already clipped to [0, 1].
    floor : float
        In [0, 1): the similarity that unrelated texts reach (see Notes).

    Returns
    -------
    float
        :math:`\max(0, (s - f) / (1 - f))`; ``floor=0`` returns ``similarity`` unchanged.

    Raises
    ------
    ValueError
        If ``floor`` is outside [0, 1).

    Notes
    -----
    Sentence embeddings of any two Python snippets, or of any two short task descriptions,
    have a clearly positive cosine: the floor removes that baseline, so a related-but-wrong
    text does not earn most of the points, as it does with the plain cosine. The calibrated
    profiles shipped with the labels (``datasets/labels/calibrated_*.json``) set the floor to
    the 95th percentile of the cosine between references of *different* functions. This is an
    opt-in option; the default metrics use no floor.

    Examples
    --------
    >>> rescale_similarity(0.72, 0.44)
    0.5
    >>> rescale_similarity(0.3, 0.44), rescale_similarity(1.0, 0.44)
    (0.0, 1.0)
    >>> rescale_similarity(0.9, 0.0)
    0.9
    """
    f = check_similarity_floor(floor)
    if f == 0.0:
        return float(similarity)
    return round(max(0.0, (float(similarity) - f) / (1.0 - f)), 12)
