"""Semantic similarity of code through sentence embeddings (docs/code.md#semantic_similarity)."""

from __future__ import annotations

from lift_metrics.code._features import check_code, over_limit
from lift_metrics.similarity import (
    Embedder,
    check_similarity_floor,
    rescale_similarity,
    text_similarity,
)


def similarity_score(
    predicted: str, expected: str, embedder: Embedder | None, floor: float
) -> float:
    """Return the semantic component of validated inputs: 0 for code over ``MAX_CODE_CHARS``.

    Such code is not embedded (:func:`semantic_reason` says so).
    """
    if over_limit(predicted) is not None:
        return 0.0
    return rescale_similarity(text_similarity(predicted, expected, embedder=embedder), floor)


def semantic_reason(semantic: float, predicted: str) -> str | None:
    """Why the semantic component of ``predicted`` is below 1, or None when it is not."""
    too_long = over_limit(predicted)
    if too_long is not None:
        return f"semantic: 0 because the code is not embedded ({too_long})"
    return f"semantic: embedding similarity {semantic:.3f}" if semantic < 1.0 else None


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
        In [0, 1]; identical strings score exactly 1.0 without calling the model, and a
        prediction over ``MAX_CODE_CHARS`` (100,000 characters) 0.0 without being embedded.

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
    predicted = check_code("predicted", predicted)
    expected = check_code("expected", expected)
    floor = check_similarity_floor(similarity_floor)
    return similarity_score(predicted, expected, embedder, floor)
