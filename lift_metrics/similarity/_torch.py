"""The torch back end: sentence-transformers' own ``encode``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SentenceTransformer


class _TorchBackend:
    """The sentence-transformers model itself (torch)."""

    name = "torch"

    def __init__(self, model: SentenceTransformer, batch_size: int) -> None:
        self.model = model
        self.batch_size = batch_size
        max_tokens = getattr(model, "max_seq_length", None)
        self.max_tokens = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else None
        dim = model.get_embedding_dimension()
        self.dimension = int(dim) if dim is not None else None

    def encode(self, texts: list[str]) -> npt.NDArray[Any]:
        return np.asarray(
            self.model.encode(
                texts,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        )
