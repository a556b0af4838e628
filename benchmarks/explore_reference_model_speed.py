"""Exploration: the fastest this machine embeds the CoNaLa texts with a second model.

``explore_reference_models.py`` found that all-mpnet-base-v2's cosines lift the no-test score
to 0.712 (grouped CV, development figure) but measured the model through torch only. The
no-test score must keep 200 pairs/s on 2 cores, so this script measures the model's
fastest paths here through the bundled model's own ONNX fast path (``_export_onnx`` and
``_OnnxBackend`` of ``lift_metrics.similarity``, which ``_onnx_spec`` keeps for BERT-family
models; the spec is made by hand here): the transformer exported to ONNX (fp32), and the same
export with dynamic int8 weights (``onnxruntime.quantization``), each run by ONNX Runtime with
one thread per core, texts sorted by length, batches of 32, mean pooling. For each path it
prints the rate over the 1,469 distinct texts of ``datasets/conala/dev.jsonl`` (predictions,
references and intents: what scoring the 1,200 pairs must embed once), the pairs per second
that rate alone allows (1,200 pairs over the time to embed those texts, before any other
feature), the plain Pearson of ``cos(prediction, reference)`` with ``grade``, the grouped-CV
Pearson of the best variant of ``explore_reference_models.py`` (shipped features + ``pr`` +
``pi`` + ``intent_rel^4`` + mentions) on that path's embeddings, and the mean cosine between
the int8 and the fp32 embeddings.

Findings at the time of writing (2 cores, all-mpnet-base-v2; torch gave 28-34 texts/s): ONNX
fp32 90-94 texts/s (at most 73-77 pairs/s), grouped CV 0.7122 as through torch; ONNX int8
227-244 texts/s (at most 186-199 pairs/s before the score's other features, MiniLM's among
them), but its plain Pearson falls from 0.624 to 0.573 (mean cosine to the fp32 embeddings
0.68) and the variant's grouped CV to 0.6987. No path gives both 0.70 and 200 pairs/s.

Run: HF_HUB_OFFLINE=1 python benchmarks/explore_reference_model_speed.py MODEL_DIR   (minutes)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from explore_reference_intent import _grouped_cv, cosines, intent_features, load_conala

from lift_metrics.code._reference_features import reference_feature_matrix
from lift_metrics.similarity._onnx import _OnnxBackend
from lift_metrics.similarity._onnx_export import _export_onnx, _OnnxSpec


class _Keeping:
    """An embedder over an ONNX back end that keeps the last rows it returned."""

    def __init__(self, backend: _OnnxBackend) -> None:
        self.backend = backend
        self.rows: np.ndarray | None = None

    def embed(self, texts: list[str]) -> Any:
        self.rows = self.backend.encode(texts)
        return self.rows


def main() -> None:
    """Export the model to ONNX (fp32 and int8) and measure its embedding rate and agreement."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from sentence_transformers import SentenceTransformer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="a sentence-transformers model directory")
    args = parser.parse_args()
    _, predicted, expected, intents, grades, target, groups = load_conala()
    base, kinds, _ = reference_feature_matrix(predicted, expected)
    degenerate = np.array([kind is not None for kind in kinds])
    extra = intent_features(intents, predicted, expected, degenerate)
    texts = len(dict.fromkeys([*predicted, *expected, *intents]))
    config = json.loads((args.model / "config.json").read_text())
    spec = _OnnxSpec(
        model_dir=args.model,
        max_seq_length=int(
            json.loads((args.model / "sentence_bert_config.json").read_text())["max_seq_length"]
        ),
        hidden_size=int(config["hidden_size"]),
        pad_token_id=int(config.get("pad_token_id") or 0),
    )
    rows: dict[str, np.ndarray] = {}
    print(f"{texts:,} distinct texts (predictions, references, intents), 1,200 pairs")
    with tempfile.TemporaryDirectory(prefix="explore_speed_") as tmp:
        fp32, int8 = Path(tmp) / "model.onnx", Path(tmp) / "model-int8.onnx"
        _export_onnx(SentenceTransformer(str(args.model), device="cpu"), fp32)
        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
        for name, path in (("ONNX fp32", fp32), ("ONNX int8", int8)):
            embedder = _Keeping(_OnnxBackend(spec, str(path), batch_size=32))
            embedder.embed(predicted[:64])  # warm
            started = time.perf_counter()
            cos, cos_intent = cosines(embedder, predicted, expected, intents)
            seconds = time.perf_counter() - started
            assert embedder.rows is not None
            rows[name] = embedder.rows
            pearson = np.corrcoef(cos, grades)[0, 1]
            columns = [np.where(degenerate, 0.0, np.clip(c, 0, 1)) for c in (cos, cos_intent)]
            x = np.column_stack([base, *columns, extra["intent_rel^4"], extra["mentions"]])
            fitted = np.corrcoef(_grouped_cv(x, target, groups), grades)[0, 1]
            print(
                f"{name}: {texts / seconds:.0f} texts/s, at most {1200 / seconds:.0f} pairs/s; "
                f"plain Pearson of cos(prediction, reference) with grade {pearson:.3f}; "
                f"grouped CV of the shipped features + pr + pi + intent features {fitted:.4f}"
            )
    unit = {name: r / np.linalg.norm(r, axis=1, keepdims=True) for name, r in rows.items()}
    agreement = (unit["ONNX fp32"] * unit["ONNX int8"]).sum(1).mean()
    print(f"mean cosine between the int8 and the fp32 embeddings: {agreement:.3f}")


if __name__ == "__main__":
    main()
