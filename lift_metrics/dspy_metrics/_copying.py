"""How metric objects travel through pickling: a bundled embedder or sandbox as its settings."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lift_metrics.similarity import Embedder


def _is_pool(sandbox: Any) -> bool:
    """Whether ``sandbox`` is this package's worker pool (not a user's stand-in)."""
    from lift_metrics.sandbox import Sandbox

    return isinstance(sandbox, Sandbox)


def _is_bundled_embedder(embedder: Any) -> bool:
    """Whether ``embedder`` is this package's sentence-transformers embedder."""
    from lift_metrics.similarity import SentenceTransformerEmbedder

    return isinstance(embedder, SentenceTransformerEmbedder)


@dataclasses.dataclass(frozen=True)
class _EmbedderSettings:
    """A :class:`~lift_metrics.similarity.SentenceTransformerEmbedder` as it is pickled.

    Its settings, not its locks, cache or loaded model: the copy loads the model on its first
    embedding. The process-wide default embedder is the copy's process-wide default.
    """

    default: bool
    model: str
    batch_size: int
    cache_size: int
    device: str
    backend: str

    @classmethod
    def of(cls, embedder: Any) -> _EmbedderSettings:
        from lift_metrics.similarity import is_default_embedder

        return cls(
            default=is_default_embedder(embedder),
            model=embedder.model_name,
            batch_size=embedder.batch_size,
            cache_size=embedder.cache_size,
            device=embedder.device,
            backend=embedder.backend,
        )

    def build(self) -> Embedder:
        from lift_metrics.similarity import SentenceTransformerEmbedder, get_default_embedder

        if self.default:
            return get_default_embedder()
        return SentenceTransformerEmbedder(
            self.model,
            batch_size=self.batch_size,
            cache_size=self.cache_size,
            device=self.device,
            backend=self.backend,
        )
