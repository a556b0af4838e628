"""Fault injection: a damaged cache of the exported ONNX embedding model heals, never fails a run.

The embedder exports the bundled model to ONNX once and keeps it under
``$XDG_CACHE_HOME/lift-metrics/onnx`` with a ``.sha256`` sidecar. Three damaged caches
would fail every run that embeds anything if left alone: the model's path taken by a directory, the
sidecar's path taken by a directory (``unlink`` refuses both), and a corrupt model in a
cache folder that cannot be written (the corrupt file cannot be removed). The contract: the
run embeds with the exported model (from a fresh export, in a temporary file where the cache
cannot be written), and a cache that can be written is whole again afterwards.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.slow,  # each case exports the bundled model with torch
]

TEXT = "def add(a, b):\n    return a + b\n"


def _embedder() -> Any:
    from lift_metrics.similarity import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(cache_size=0)


def _cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The path the bundled model's export is cached at, under a cache of the test's own."""
    from lift_metrics.similarity._onnx_export import _onnx_spec

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    spec = _onnx_spec(_embedder()._resolve_model_path())
    assert spec is not None, "the bundled model has the ONNX fast path"
    cached: Path = spec.cache_file()
    assert cached.is_relative_to(tmp_path)
    return cached


def _embeds_with_onnx() -> None:
    embedder = _embedder()
    rows = embedder.embed([TEXT])
    assert rows.shape == (1, 384)
    assert embedder.active_backend == "onnx"


@pytest.mark.parametrize("taken", ["model", "sidecar"])
def test_a_directory_in_place_of_a_cache_file_is_replaced(
    taken: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = _cache_file(tmp_path, monkeypatch)
    sidecar = cached.with_name(cached.name + ".sha256")
    blocked = cached if taken == "model" else sidecar
    (blocked / "inside").mkdir(parents=True)
    _embeds_with_onnx()
    assert cached.is_file()
    assert sidecar.is_file()
    _embeds_with_onnx()  # and the healed cache is used as it is


def test_a_corrupt_model_in_a_cache_that_cannot_be_written_is_exported_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = _cache_file(tmp_path, monkeypatch)
    folder = cached.parent
    folder.mkdir(parents=True)
    cached.write_bytes(b"not an onnx model")
    cached.with_name(cached.name + ".sha256").write_text("0" * 64 + "\n")
    # a read-only folder (the suite runs as root, which chmod does not stop): nothing in it
    # can be removed, replaced or created
    real_unlink, real_mkstemp, real_replace = os.unlink, tempfile.mkstemp, os.replace

    def read_only(path: Any) -> bool:
        return Path(os.fsdecode(path)).resolve().parent == folder.resolve()

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        if read_only(path):
            raise OSError(errno.EROFS, "Read-only file system", os.fsdecode(path))
        real_unlink(path, *args, **kwargs)

    def mkstemp(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("dir") is not None and Path(kwargs["dir"]).resolve() == folder.resolve():
            raise OSError(errno.EROFS, "Read-only file system", str(kwargs["dir"]))
        return real_mkstemp(*args, **kwargs)

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if read_only(dst):
            raise OSError(errno.EROFS, "Read-only file system", os.fsdecode(dst))
        real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(os, "replace", replace)
    _embeds_with_onnx()
    assert cached.read_bytes() == b"not an onnx model"  # untouched: it could not be written
