"""Fixtures for the IR tests: a deterministic embedder and a reference IR (ir_spec example)."""

from __future__ import annotations

import re
import threading
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest


class HashEmbedder:
    """Deterministic bag-of-words embedder (crc32 buckets); counts its calls."""

    dim = 64

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                out[row, zlib.crc32(token.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


# The example from the IR JSON contract (/tmp/briefs/ir_spec.md, shared with the datasets).
FIB_IR: dict[str, Any] = {
    "intent": {"description": "Return the n-th Fibonacci number, starting from fib(0) = 0."},
    "signature": {
        "name": "fibonacci",
        "parameters": [{"name": "n", "type_hint": "int"}],
        "return_type": "int",
    },
    "effects": [
        {"kind": "raises", "description": "ValueError when n is negative"},
        {"kind": "returns", "description": "the n-th Fibonacci number"},
    ],
    "constraints": [
        {"kind": "return_type", "type_hint": "int"},
        {"kind": "has_parameter", "name": "n", "type_hint": "int"},
        {"kind": "effect_absent", "effect": "io"},
        {"kind": "pure"},
    ],
}


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def fib_ir() -> dict[str, Any]:
    import copy

    return copy.deepcopy(FIB_IR)
