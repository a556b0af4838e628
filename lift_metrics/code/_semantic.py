"""Semantic similarity of code through sentence embeddings (docs/code.md#semantic_similarity)."""

from __future__ import annotations

from lift_metrics._checks import check_real
from lift_metrics.code._features import check_code
from lift_metrics.similarity import Embedder, text_similarity


def check_similarity_floor(value: object) -> float:
    """Validate a ``similarity_floor`` option: a real number in [0, 1).

    Examples
    --------
    >>> check_similarity_floor(0.44)
    0.44
    """
    floor = check_real("similarity_floor", value)
    if not 0.0 <= floor < 1.0:
        raise ValueError(f"similarity_floor must be in [0, 1), got {floor!r}")
    return floor


def rescale_similarity(similarity: float, floor: float) -> float:
    """Map a similarity in [0, 1] so that ``floor`` and below score 0 and 1 stays 1.

    Parameters
    ----------
    similarity : float
        A cosine similarity already clipped to [0, 1].
    floor : float
        In [0, 1): the similarity that unrelated texts reach (see Notes).

    Returns
    -------
    float
        :math:`\\max(0, (s - f) / (1 - f))`; ``floor=0`` returns ``similarity`` unchanged.

    Raises
    ------
    ValueError
        If ``floor`` is outside [0, 1).

    Notes
    -----
    Sentence embeddings of any two Python snippets, or of any two short task descriptions,
    have a clearly positive cosine: the floor removes that baseline, so a related-but-wrong
    text no longer earns most of the points. The calibrated profiles shipped with the labels
    (``datasets/labels/calibrated_*.json``) set the floor to the 95th percentile of the cosine
    between references of *different* functions. This is an opt-in option; the default
    metrics use no floor.

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


def semantic_similarity(
    predicted: str,
    expected: str,
    *,
    embedder: Embedder | None = None,
    similarity_floor: float = 0.0,
) -> float:
    """Cosine similarity of the embeddings of two pieces of code, clipped to [0, 1].

    Parameters
    ----------
    predicted, expected : str
        Generated code and the reference code.
    embedder : Embedder or None, default None
        ``None`` means :func:`lift_metrics.similarity.get_default_embedder` (the bundled
        all-MiniLM-L6-v2, CPU, cached by text).
    similarity_floor : float, default 0.0
        Opt-in rescaling ``max(0, (cos - floor) / (1 - floor))`` (see
        :func:`rescale_similarity`); 0 keeps the plain cosine.

    Returns
    -------
    float
        In [0, 1]; identical strings score exactly 1.0 without calling the model.

    Raises
    ------
    TypeError
        If ``predicted`` or ``expected`` is not a str, or ``embedder`` has no ``embed`` method.
    ValueError
        If ``similarity_floor`` is outside [0, 1).

    Notes
    -----
    The raw source text is embedded, so comments, docstrings and identifier names count:
    that is what a text embedding model sees, and it rewards code that reads like the
    reference. :func:`~lift_metrics.code.structural_similarity` is the name-blind
    counterpart. Code that does not parse is still embedded (it may be close to right).

    Examples
    --------
    >>> semantic_similarity("return a + b", "return a + b")
    1.0
    >>> semantic_similarity("return a + b", "return a + b", similarity_floor=0.5)
    1.0
    """
    check_code("predicted", predicted)
    check_code("expected", expected)
    floor = check_similarity_floor(similarity_floor)
    return rescale_similarity(text_similarity(predicted, expected, embedder=embedder), floor)
