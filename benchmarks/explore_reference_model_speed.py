"""Exploration: the fastest this machine embeds the CoNaLa texts with a second model.

``explore_reference_models.py`` found that all-mpnet-base-v2's cosines lift the no-test score
to 0.712 (grouped CV, development figure) but measured the model through torch only. The
no-test score must keep 200 pairs/s on 2 cores (issue 11), so this script measures the model's
fastest paths here: the transformer exported to ONNX (fp32, opset 17, as the bundled model's
fast path) and the same export with dynamic int8 weights (``onnxruntime.quantization``), run
by ONNX Runtime on 2 threads, texts sorted by length and batched by 32, mean pooling, L2
normalisation. For each path it prints the rate over the 1,469 distinct texts of
``datasets/conala/dev.jsonl`` (predictions, references and intents: what scoring the 1,200 pairs
must embed once), the pairs per second that rate alone allows (1,200 pairs over the time to
embed those texts, before any other feature), the plain Pearson of ``cos(prediction,
reference)`` with ``grade``, and the mean cosine between the int8 and the fp32 embeddings.

Findings at the time of writing (2 cores, all-mpnet-base-v2; torch gave 28-34 texts/s): ONNX
fp32 57-59 texts/s (48 pairs/s at most); ONNX int8 134-135 texts/s (111 pairs/s at most), with
its plain Pearson falling from 0.624 to 0.573 (mean cosine to the fp32 embeddings 0.68). No
path reaches 200 pairs/s, even before the score's other features.

Run: HF_HUB_OFFLINE=1 python benchmarks/explore_reference_model_speed.py MODEL_DIR   (minutes)
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from explore_reference_intent import load_conala


def _embed(session: object, tokenizer: object, texts: list[str]) -> np.ndarray:
    """Mean-pooled, L2-normalised embeddings of ``texts`` by an ONNX session."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    rows: dict[int, np.ndarray] = {}
    for start in range(0, len(order), 32):
        batch = order[start : start + 32]
        encoded = tokenizer(  # type: ignore[operator]
            [texts[i] for i in batch],
            padding=True,
            truncation=True,
            max_length=384,
            return_tensors="np",
        )
        feeds = {name: encoded[name].astype(np.int64) for name in ("input_ids", "attention_mask")}
        hidden = session.run(None, feeds)[0]  # type: ignore[attr-defined]
        mask = encoded["attention_mask"][..., None]
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        rows.update(zip(batch, pooled, strict=True))
    return np.stack([rows[i] for i in range(len(texts))])


def main() -> None:
    """Export the model to ONNX (fp32 and int8) and measure its embedding rate and agreement."""
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="a sentence-transformers model directory")
    args = parser.parse_args()
    _, predicted, expected, intents, grades, _, _ = load_conala()
    texts = list(dict.fromkeys([*predicted, *expected, *intents]))
    index = {text: i for i, text in enumerate(texts)}
    tokenizer = AutoTokenizer.from_pretrained(str(args.model))
    model = AutoModel.from_pretrained(str(args.model)).eval()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    embeddings: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory(prefix="explore_speed_") as tmp:
        fp32, int8 = Path(tmp) / "model.onnx", Path(tmp) / "model-int8.onnx"
        probe = tokenizer(["def f(x): return x"], return_tensors="pt")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                model,
                (probe["input_ids"], probe["attention_mask"]),
                str(fp32),
                dynamo=False,
                input_names=["input_ids", "attention_mask"],
                output_names=["last_hidden_state"],
                dynamic_axes={
                    name: {0: "batch", 1: "sequence"}
                    for name in ("input_ids", "attention_mask", "last_hidden_state")
                },
                opset_version=17,
            )
            quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
        print(f"{len(texts):,} distinct texts (predictions, references, intents), 1,200 pairs")
        for name, path in (("ONNX fp32", fp32), ("ONNX int8", int8)):
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            _embed(session, tokenizer, texts[:64])  # warm
            started = time.perf_counter()
            embeddings[name] = _embed(session, tokenizer, texts)
            seconds = time.perf_counter() - started
            vectors = embeddings[name]
            cos = np.array(
                [
                    vectors[index[p]] @ vectors[index[e]]
                    for p, e in zip(predicted, expected, strict=True)
                ]
            )
            pearson = np.corrcoef(cos, grades)[0, 1]
            print(
                f"{name}: {len(texts) / seconds:.0f} texts/s, at most "
                f"{1200 / seconds:.0f} pairs/s; plain Pearson of cos(prediction, reference) "
                f"with grade {pearson:.3f}"
            )
    agreement = (embeddings["ONNX fp32"] * embeddings["ONNX int8"]).sum(1).mean()
    print(f"mean cosine between the int8 and the fp32 embeddings: {agreement:.3f}")


if __name__ == "__main__":
    main()
