"""Similarity scores: cosine of vectors, text similarity through an embedder, sequences."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from lift_metrics._text import clean_text
from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.similarity._embedder import resolve_embedder
from lift_metrics.similarity._protocol import Embedder


def cosine_similarity(u: npt.ArrayLike, v: npt.ArrayLike) -> float:
    r"""Cosine similarity of two vectors, clipped to [0, 1].

    Parameters
    ----------
    u, v : array_like
        One-dimensional vectors of the same length.

    Returns
    -------
    float
        :math:`\max(0, \min(1, u \cdot v / (\lVert u\rVert \lVert v\rVert)))`.

    Raises
    ------
    ValueError
        If the shapes differ or a vector is not one-dimensional or contains NaN/inf.

    Notes
    -----
    Negative similarity scores 0
    (docs/decisions.md#cosine-similarity-is-clipped-to-0-1). A zero vector has no
    direction: its similarity to anything is 0, unless both vectors are zero, which counts
    as identical (1.0), the way two empty texts are the same text.

    Examples
    --------
    >>> cosine_similarity([1.0, 0.0], [1.0, 1.0])
    0.7071067811865475
    >>> cosine_similarity([1.0, 0.0], [-1.0, 0.0])
    0.0
    """
    a = np.asarray(u, dtype=np.float64)
    b = np.asarray(v, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise InputValueError(
            f"u and v must be 1-D vectors of the same length, got shapes {a.shape} and {b.shape}"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise InputValueError("u and v must be finite (no NaN or inf)")
    norm_a = float(np.linalg.norm(a))
    norm_b = float(np.linalg.norm(b))
    if norm_a == 0.0 or norm_b == 0.0:
        return 1.0 if norm_a == norm_b else 0.0
    value = float(np.dot(a, b)) / (norm_a * norm_b)
    return min(1.0, max(0.0, value))


def pairwise_cosine_similarity(
    left: npt.ArrayLike, right: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """Row-by-row cosine similarity of two matrices of the same shape, clipped to [0, 1].

    Parameters
    ----------
    left, right : array_like, shape (n, dim)

    Returns
    -------
    numpy.ndarray
        float64 of shape ``(n,)``: ``cosine_similarity(left[i], right[i])`` for each ``i``
        (same zero-vector rule).

    Examples
    --------
    >>> pairwise_cosine_similarity([[1.0, 0.0], [0.0, 2.0]], [[3.0, 0.0], [1.0, 0.0]])
    array([1., 0.])
    """
    a = np.asarray(left, dtype=np.float64)
    b = np.asarray(right, dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape:
        raise InputValueError(
            f"left and right must be 2-D with the same shape, got {a.shape} and {b.shape}"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise InputValueError("left and right must be finite (no NaN or inf)")
    norm_a = np.linalg.norm(a, axis=1)
    norm_b = np.linalg.norm(b, axis=1)
    denom = norm_a * norm_b
    dots = np.einsum("ij,ij->i", a, b)
    values = np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)
    values = np.where((norm_a == 0) & (norm_b == 0), 1.0, values)
    return np.clip(values, 0.0, 1.0)


def text_similarity(a: str, b: str, *, embedder: Embedder | None = None) -> float:
    r"""Semantic similarity of two texts: cosine of their embeddings, clipped to [0, 1].

    Parameters
    ----------
    a, b : str
        The texts (natural language or code).
    embedder : Embedder or None, default None
        ``None`` means :func:`get_default_embedder` (bundled all-MiniLM-L6-v2).

    Returns
    -------
    float
        In [0, 1]; 1.0 for identical texts.

    Raises
    ------
    TypeError
        If ``a`` or ``b`` is not a str, or ``embedder`` has no ``embed`` method.

    Notes
    -----
    Identical strings score exactly 1.0 without calling the model. Both texts go to the
    embedder in one batch, and the default embedder caches by text, so a reference compared
    with many predictions is embedded once. A lone surrogate (JSON's ``"\ud800"``, which no
    tokenizer takes) is embedded as U+FFFD, the replacement character.

    Examples
    --------
    >>> text_similarity("return a + b", "return a + b")
    1.0
    """
    if not isinstance(a, str):
        raise InputTypeError(f"a must be a str, got {type(a).__name__}")
    if not isinstance(b, str):
        raise InputTypeError(f"b must be a str, got {type(b).__name__}")
    if a == b:
        return 1.0
    a, b = clean_text(a), clean_text(b)
    model = resolve_embedder(embedder)
    rows = np.asarray(model.embed([a, b]))
    if rows.ndim != 2 or rows.shape[0] != 2:
        raise InputValueError(
            f"embedder returned shape {rows.shape} for 2 texts, expected (2, dim)"
        )
    return cosine_similarity(rows[0], rows[1])


def sequence_similarity(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    r"""Normalised Levenshtein similarity of two sequences, in [0, 1].

    Parameters
    ----------
    a, b : sequence of hashable items, or str
        Compared element by element (characters for strings); order matters.

    Returns
    -------
    float
        :math:`1 - d(a, b) / \max(|a|, |b|)` where :math:`d` is the Levenshtein edit distance
        (insertions, deletions and substitutions cost 1).

    Notes
    -----
    Two empty sequences are identical: 1.0. One empty and one not: 0.0. The distance is
    ``rapidfuzz.distance.Levenshtein.distance``; it compares list items by value and hash,
    except that a one-character string equals the integer of its code point (``"A"`` and
    ``65``), so do not mix the two in one comparison.

    Examples
    --------
    >>> sequence_similarity(["Read", "Write"], ["Read", "Write"])
    1.0
    >>> sequence_similarity("kitten", "sitting")
    0.5714285714285714
    >>> sequence_similarity([], [])
    1.0
    """
    for name, value in (("a", a), ("b", b)):
        if not isinstance(value, Sequence):
            raise InputTypeError(f"{name} must be a sequence, got {type(value).__name__}")
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    from rapidfuzz.distance import Levenshtein

    distance = Levenshtein.distance(a, b)
    return 1.0 - distance / longest
