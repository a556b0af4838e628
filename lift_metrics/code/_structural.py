"""Structural similarity of code from its syntax tree (no neural model)."""

from __future__ import annotations

from lift_metrics.code._features import check_code, pair_features
from lift_metrics.similarity import sequence_similarity


def structural_similarity(predicted: str, expected: str) -> float:
    r"""Similarity of the shapes of two syntax trees, blind to names, literals and comments.

    Parameters
    ----------
    predicted, expected : str
        Generated code and the reference code.

    Returns
    -------
    float
        In [0, 1]; 1.0 when the two programs have the same syntax tree up to identifiers,
        literal values, comments and docstrings.

    Raises
    ------
    TypeError
        If either argument is not a str.
    ValueError
        If ``expected`` (the reference, a caller's input) does not parse.

    Notes
    -----
    Each program becomes the pre-order sequence of its AST node types, with identifiers
    abstracted away (``Name``, ``FunctionDef``, ``arg``), literals reduced to their type
    (``Constant:int``), load/store contexts and docstrings dropped. The score is the
    normalised Levenshtein similarity of the two sequences
    (:func:`lift_metrics.similarity.sequence_similarity`):

    .. math:: 1 - \frac{d(s_p, s_e)}{\max(|s_p|, |s_e|)}

    What it captures that embeddings miss: it is blind to naming and prose, so a correct
    solution with renamed identifiers or different comments scores 1.0, while a text
    embedding is distracted by names and comments (and can rate a wrong program that
    reuses the reference's names and docstring highly). It also sees control flow exactly:
    a missing ``if`` or loop costs edits. What it misses: two different algorithms for the
    same task look different, and ``a + b`` vs ``a - b`` differ by one operator node only.
    A prediction that does not parse scores 0.0.

    Examples
    --------
    >>> reference = "def add(a, b):\n    return a + b\n"
    >>> structural_similarity("def plus(x, y):\n    # sum\n    return x + y\n", reference)
    1.0
    >>> structural_similarity("def add(a, b):\n    return a\n", reference)
    0.7
    """
    predicted = check_code("predicted", predicted)
    expected = check_code("expected", expected)
    candidate, reference = pair_features(predicted, expected)
    if not candidate.parses:
        return 0.0
    return sequence_similarity(candidate.structure, reference.structure)
