"""The compiled server loop (``_native.c``) as bytes for the workers, cached per machine."""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import threading
from pathlib import Path

from lift_metrics._io import atomic_write_bytes
from lift_metrics.sandbox._native_build import (
    NATIVE_SOURCE_PATH,
    compile_library,
    find_compiler,
    read_prebuilt,
)

NATIVE_ENV = "LIFT_METRICS_SANDBOX_NATIVE"
_native_lock = threading.Lock()
_native: list[bytes] = []  # the compiled library, once per process


def native_library() -> bytes:
    """Return the compiled server loop (``_native.c``) as shared-library bytes, or ``b""``.

    Compiled when the package is installed (``hatch_build.py``; the library sits next to
    ``_native.c``, see :mod:`lift_metrics.sandbox._native_build`), and used as long as it was
    compiled from the ``_native.c`` installed with it. Otherwise (installed without a
    compiler, or a checkout whose ``_native.c`` changed) compiled once with the system C
    compiler (``$CC``, ``cc`` or ``gcc``) and cached under ``$XDG_CACHE_HOME/lift-metrics``
    keyed by the source, the machine and the compiler. The workers receive the bytes on
    their control pipe and load them from a memfd, so nothing inside the sandbox needs to see
    the library's file. ``b""`` (the workers then run the same loop in Python: 5 to 10% fewer
    executions per second on 2 idle cores, 15 to 30% fewer on busy ones,
    ``benchmarks/bench_native_loop.py``) when no compiler is found or compiling fails, or
    when the environment variable ``LIFT_METRICS_SANDBOX_NATIVE`` is ``0``.

    The cached file starts with the SHA-256 of the library it holds; a file whose digest does
    not match (truncated, or overwritten in part) is compiled again and replaced, so a damaged
    cache costs one compile, never a sandbox that cannot start. Beyond that the cached file is
    trusted like the rest of the user's files: code run with process isolation as a non-root
    user could replace it (digest included), as it could replace this package itself (see
    :data:`PROCESS_ISOLATION_GAPS`); under bwrap and Landlock the cache is out of reach. If
    workers still fail to start with the compiled loop, the sandbox calls
    :func:`discard_native_library` and runs the Python loop.
    """
    if os.environ.get(NATIVE_ENV, "1").strip() == "0":
        return b""
    with _native_lock:
        if not _native:
            _native.append(_build_native())
        return _native[0]


def discard_native_library() -> None:
    """Stop using the compiled server loop in this process and delete its cached copy.

    Called when workers fail to start with it; the next process compiles it again.
    """
    with _native_lock:
        _native[:] = [b""]
    # the install-time library is part of the package and stays: a process that finds it
    # broken falls back to the Python loop in the same way, with the same warning
    cached = native_cache_path()
    if cached is not None:
        with contextlib.suppress(OSError):
            cached.unlink()


def native_cache_path() -> Path | None:
    """Return where the compiled server loop is cached, or None when there is no compiler.

    The name is keyed by the source of ``_native.c``, the machine and the compiler; the file
    holds the SHA-256 digest of the library (32 bytes), then the library.
    """
    compiler = find_compiler()
    if compiler is None:
        return None
    source = NATIVE_SOURCE_PATH.read_bytes()
    identity = b"\0".join(
        [source, platform.machine().encode(), os.path.realpath(compiler).encode()]
    )
    from lift_metrics._paths import cache_dir

    return cache_dir() / f"sandbox-native-{hashlib.sha256(identity).hexdigest()[:24]}.bin"


def _read_cached_native(cached: Path) -> bytes | None:
    """Return the library in ``cached`` if its digest matches; None if missing or damaged."""
    try:
        blob = cached.read_bytes()
    except OSError:
        return None
    digest, data = blob[:32], blob[32:]
    if not data or hashlib.sha256(data).digest() != digest:
        return None
    return data


def _build_native() -> bytes:
    prebuilt = read_prebuilt()
    if prebuilt is not None:
        return prebuilt
    compiler = find_compiler()
    cached = native_cache_path()
    if compiler is None or cached is None:
        return b""
    data = _read_cached_native(cached)
    if data is not None:
        return data
    data = compile_library(compiler)
    if not data:
        return b""
    # cache it for the next process; a read-only home only costs a compile per process
    with contextlib.suppress(OSError):
        atomic_write_bytes(cached, hashlib.sha256(data).digest() + data)
    return data
