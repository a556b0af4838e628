"""Caches: the text keys of the in-memory embedding cache and the on-disk cache of exports."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

_HASHED_KEY_CHARS = 1024
_CHARS_PER_TOKEN_BOUND = 64


def _cache_key(text: str) -> str:
    """Short texts are their own key; long ones are keyed by a digest (bounded memory)."""
    if len(text) <= _HASHED_KEY_CHARS:
        return text
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
    return f"\0blake2b:{len(text)}:{digest}"


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


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checksum_file(model_file: Path) -> Path:
    """Return the sidecar recording the SHA-256 of an exported model, written after the export."""
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
