"""The no-test score: how useful generated code is, judged against a reference only.

Stand-in with the final interface (embedding cosine); the calibrated version replaces it.
"""

from __future__ import annotations

from collections.abc import Sequence

from lift_metrics.similarity import Embedder, text_similarity


def reference_score(predicted: str, expected: str, *, embedder: Embedder | None = None) -> float:
    """Score ``predicted`` against the reference ``expected`` without tests, in [0, 1]."""
    return text_similarity(predicted, expected, embedder=embedder)


def reference_scores(
    predicted: Sequence[str], expected: Sequence[str], *, embedder: Embedder | None = None
) -> list[float]:
    """:func:`reference_score` for many pairs at once (batched embeddings)."""
    return [
        reference_score(p, e, embedder=embedder) for p, e in zip(predicted, expected, strict=True)
    ]
