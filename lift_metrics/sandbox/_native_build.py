"""Compiling the sandbox's server loop (``_native.c``), at install time or at run time.

Standard library only, and no import of ``lift_metrics``: the package's build hook
(``hatch_build.py``) loads this file by path to compile the loop into the wheel (or, for an
editable install, next to this file), before any dependency is installed. At run time,
:func:`lift_metrics.sandbox._native_cache.native_library` uses the library compiled at install
time when it was compiled from the ``_native.c`` beside it, and otherwise compiles it here and
caches it (see there).

The install-time file, :data:`PREBUILT_PATH`, holds the SHA-256 of the source it was compiled
from (32 bytes), the SHA-256 of the library (32 bytes), then the library: a checkout whose
``_native.c`` changed after the install, or a damaged file, is never used.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

NATIVE_SOURCE_PATH = Path(__file__).with_name("_native.c")
PREBUILT_NAME = "_native_loop.bin"  # ignored by git; in wheels, added by hatch_build.py
PREBUILT_PATH = Path(__file__).with_name(PREBUILT_NAME)
COMPILE_FLAGS = ("-O2", "-s", "-shared", "-fPIC")
COMPILE_TIMEOUT_S = 120


def find_compiler() -> str | None:
    """Return the C compiler to use (``$CC``, ``cc`` or ``gcc``), or None.

    None when there is none, or off Linux (the loop uses Linux system calls).
    """
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    return compiler if compiler and sys.platform == "linux" else None


def compile_library(compiler: str, source: Path = NATIVE_SOURCE_PATH) -> bytes:
    """Compile ``source`` into a shared library with ``compiler``; ``b""`` if that fails."""
    with tempfile.TemporaryDirectory(prefix="lift-sandbox-build-") as build:
        target = os.path.join(build, "native.so")
        command = [compiler, *COMPILE_FLAGS, "-o", target, str(source), "-lm"]
        try:
            done = subprocess.run(
                command, capture_output=True, timeout=COMPILE_TIMEOUT_S, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return b""
        if done.returncode != 0 or not os.path.isfile(target):
            return b""
        return Path(target).read_bytes()


def pack_prebuilt(library: bytes, source: bytes) -> bytes:
    """Return the contents of :data:`PREBUILT_PATH` for ``library`` compiled from ``source``."""
    return hashlib.sha256(source).digest() + hashlib.sha256(library).digest() + library


def read_prebuilt(path: Path = PREBUILT_PATH, source: Path = NATIVE_SOURCE_PATH) -> bytes | None:
    """Return the library in ``path`` if compiled from ``source`` as it is now and intact.

    Return None otherwise (missing, stale or damaged).
    """
    try:
        blob = path.read_bytes()
        current = hashlib.sha256(source.read_bytes()).digest()
    except OSError:
        return None
    source_digest, library_digest, library = blob[:32], blob[32:64], blob[64:]
    if source_digest != current or not library:
        return None
    if hashlib.sha256(library).digest() != library_digest:
        return None
    return library


def build_prebuilt(destination: Path) -> str | None:
    """Compile the loop into ``destination`` (the :data:`PREBUILT_PATH` format).

    Returns None on success, else why nothing was written (no compiler, or compiling failed);
    the package then compiles the loop at run time, or runs the Python loop.
    """
    compiler = find_compiler()
    if compiler is None:
        return "no C compiler ($CC, cc or gcc) on Linux"
    library = compile_library(compiler)
    if not library:
        return f"{compiler} could not compile {NATIVE_SOURCE_PATH.name}"
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(f"{destination.name}.{os.getpid()}.tmp")
    partial.write_bytes(pack_prebuilt(library, NATIVE_SOURCE_PATH.read_bytes()))
    os.replace(partial, destination)
    return None
