"""Crash-safe file output and JSON encoding shared by reports, runs and the CLI.

Nothing a run has written may be lost or corrupted when it is interrupted, so every file is
written to a temporary sibling, flushed, fsynced and then renamed over the target (an atomic
operation on POSIX file systems).
"""

from __future__ import annotations

import dataclasses
import enum
import errno
import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def existing_file(path: str | os.PathLike[str], what: str) -> Path:
    """Return ``path`` as a Path when it names a file.

    Raises
    ------
    IsADirectoryError
        When it names a directory (the message says so, with ``what`` and the path).
    FileNotFoundError
        When nothing is there: ``"{what} not found: {path}"``.
    """
    file = Path(path)
    if file.is_dir():
        raise IsADirectoryError(errno.EISDIR, f"{what} is a directory, not a file", str(file))
    if not file.is_file():
        raise FileNotFoundError(f"{what} not found: {file}")
    return file


def read_text_file(path: str | os.PathLike[str], what: str) -> str:
    """Read a UTF-8 text file; errors name the file (and for bad bytes, the line).

    Raises
    ------
    IsADirectoryError, FileNotFoundError
        As :func:`existing_file`.
    ValueError
        When the file is not UTF-8 text: ``"{path}: line N is not UTF-8 text (...)"``.
    """
    file = existing_file(path, what)
    data = file.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(
            f"{file}: line {line} is not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None


def _umask() -> int:
    """The process's file-creation mask, read without changing it (Linux: /proc/self/status).

    ``os.umask`` can only be read by setting it, which races with other threads creating
    files; where /proc does not say, the common default 022 is assumed.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file + fsync + rename); return the path.

    The file gets the permissions any new file of the user's gets (``0666`` less the umask),
    like one written by ``open(path, "w")``, not the ``0600`` of a temporary file.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on directories
        pass
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def to_jsonable(value: Any) -> Any:
    """Convert ``value`` into plain JSON types.

    Non-finite floats become ``None`` (JSON has no infinity); a mapping that held one gets a
    ``"<key>_is_infinite": true`` flag next to it so that readers can tell ``inf`` from missing.
    Dataclasses, enums, numpy scalars/arrays, paths, sets and tuples are converted too.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        to_dict = getattr(value, "to_dict", None)
        if callable(to_dict):
            return to_jsonable(to_dict())
        return to_jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            converted = to_jsonable(item)
            out[str(key)] = converted
            if isinstance(item, float) and math.isinf(item):
                out[f"{key}_is_infinite"] = True
        return out
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [to_jsonable(item) for item in items]
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        return to_jsonable(tolist())
    model_dump = getattr(value, "model_dump", None)  # pydantic models
    if callable(model_dump):
        return to_jsonable(model_dump(mode="json"))
    raise TypeError(f"cannot convert {type(value).__name__} to JSON")


def dumps_json(value: Any, *, indent: int | None = 2) -> str:
    """Serialize ``value`` with :func:`to_jsonable`; never emits ``Infinity``/``NaN``."""
    return json.dumps(to_jsonable(value), indent=indent, allow_nan=False, ensure_ascii=False)


def atomic_write_json(path: str | os.PathLike[str], value: Any) -> Path:
    """Write ``value`` as JSON (see :func:`dumps_json`) to ``path`` atomically."""
    return atomic_write_text(path, dumps_json(value) + "\n")


def format_number(value: float, *, digits: int = 4) -> str:
    """Human-readable number for reports: ``∞`` for infinities, ``nan`` for NaN."""
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if math.isnan(value):
        return "nan"
    return f"{value:.{digits}g}"
