"""The one-time ONNX export of the bundled model, the spec of that export and its checks."""

from __future__ import annotations

import contextlib
import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SentenceTransformer

from lift_metrics.similarity._cache import _package_version, _read_json, embedding_cache_dir

_ONNX_FORMAT = "lift-metrics-onnx-2"
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


@dataclass(frozen=True)
class _OnnxSpec:
    """What the ONNX fast path needs to know about a local sentence-transformers model."""

    model_dir: Path
    max_seq_length: int
    hidden_size: int
    pad_token_id: int

    def cache_file(self) -> Path:
        """Return the exported model's path, keyed by the model files and the exporting versions."""
        parts = [_ONNX_FORMAT, str(self.model_dir.resolve()), str(_ONNX_OPSET)]
        for name in _MODEL_FILES:
            path = self.model_dir / name
            if path.exists():
                info = path.stat()
                parts.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
        parts += [f"{name}={_package_version(name)}" for name in ("torch", "transformers", "onnx")]
        key = hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
        return embedding_cache_dir() / "onnx" / f"{self.model_dir.name}-{key[:24]}.onnx"


def _onnx_spec(model_path: str) -> _OnnxSpec | None:
    """Return the fast-path description of ``model_path``, or None where it does not apply.

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


def _export_onnx(model: SentenceTransformer, target: Path) -> None:
    """Write the transformer of a loaded sentence-transformers model to ``target`` as ONNX."""
    import inspect

    import torch

    transformer: Any = model[0].auto_model
    accepts_types = "token_type_ids" in inspect.signature(transformer.forward).parameters
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if accepts_types else [])

    class _Hidden(torch.nn.Module):  # type: ignore[misc]  # torch is untyped to mypy (pyproject)
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, *inputs: Any) -> Any:
            return self.transformer(**dict(zip(names, inputs, strict=True))).last_hidden_state

    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    # the plain ("eager") attention exports a graph ONNX Runtime runs about 10% faster than
    # that of torch's fused attention (same arithmetic in float32)
    attention = getattr(transformer.config, "_attn_implementation", None)
    with contextlib.suppress(Exception):
        transformer.set_attn_implementation("eager")
    try:
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
    finally:
        if attention is not None:
            with contextlib.suppress(Exception):
                transformer.set_attn_implementation(attention)
    with open(target, "rb+") as handle:  # durable before it is renamed into the cache
        os.fsync(handle.fileno())
