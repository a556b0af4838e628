"""The ONNX Runtime back end: the exported transformer with the model's tokenizer and pooling."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import numpy.typing as npt

from lift_metrics.similarity._onnx_export import _OnnxSpec


def _onnx_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


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
        summed: npt.NDArray[np.float32] = np.einsum("bsh,bsk->bh", hidden, weights)
        counts: npt.NDArray[np.float32] = np.maximum(weights.sum(axis=1), 1e-9)
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
