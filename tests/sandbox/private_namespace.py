"""Run pytest as root inside a private PID and mount namespace where process isolation works.

Usage (as root)::

    unshare --mount --pid --fork --mount-proc --propagation private \\
        python tests/sandbox/private_namespace.py [--as-user UID] [pytest arguments]

``--as-user 65534`` runs the suite as that unprivileged user instead (the interpreter
becomes readable to it in the namespace).

Process isolation refuses to run as root when the children's unprivileged uid cannot read
the interpreter (for example a Python under ``/root``, mode 0700). Inside the private mount
namespace this script gives the private ``/tmp`` a fresh tmpfs and puts an empty, traversable
tmpfs over each such directory with only the interpreter's trees bound back, so the
process-mode tests run as root with the uid drop. Nothing changes outside the namespace, and
an escape of the code under test reaches only the namespace's processes and mounts.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

MARK = "LIFT_SANDBOX_PRIVATE_NAMESPACE"


def _closed_ancestor(path: str) -> str | None:
    """Return the top-most directory above ``path`` that other users cannot traverse."""
    parts = path.strip("/").split("/")
    for depth in range(1, len(parts)):
        above = "/" + "/".join(parts[:depth])
        if not os.stat(above).st_mode & stat.S_IXOTH:
            return above
    return None


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


def prepare() -> None:
    """Make the interpreter reachable by unprivileged uids, in this mount namespace only."""
    from lift_metrics.sandbox._isolation import python_trees

    if os.getpid() != 1 or os.geteuid() != 0:
        raise SystemExit("run me as root under unshare --mount --pid --fork --mount-proc")
    _mount("--make-rprivate", "/")
    # a checkout or a virtualenv under /tmp (CI clones often live there) is bound back into
    # the fresh /tmp, read through a descriptor of the old one
    keep = sorted(
        {
            path
            for path in (str(Path(__file__).resolve().parents[2]), os.path.realpath(sys.prefix))
            if path.startswith("/tmp/")
        }
    )
    old_tmp = os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY)
    _mount("-t", "tmpfs", "-o", "mode=1777", "lift-private-tmp", "/tmp")
    for path in keep:
        os.makedirs(path, 0o755, exist_ok=True)
        source = f"/proc/{os.getpid()}/fd/{old_tmp}/{os.path.relpath(path, '/tmp')}"
        _mount("--no-canonicalize", "--rbind", source, path)  # a path would resolve anew
    os.close(old_tmp)
    closed: dict[str, list[str]] = {}
    for tree in python_trees():
        above = _closed_ancestor(tree)
        if above is not None:
            closed.setdefault(above, []).append(tree)
    for index, (above, trees) in enumerate(sorted(closed.items())):
        stash = f"/tmp/.lift-stash-{index}"
        os.mkdir(stash, 0o700)
        _mount("--rbind", above, stash)
        _mount("-t", "tmpfs", "-o", "mode=0755", "lift-private-mask", above)
        for tree in trees:
            inside = os.path.relpath(tree, above)
            os.makedirs(tree, 0o755, exist_ok=True)
            _mount("--rbind", os.path.join(stash, inside), tree)


if __name__ == "__main__":
    prepare()
    env = dict(os.environ, **{MARK: "1"})
    args = sys.argv[1:]
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    if args[:1] == ["--as-user"]:  # e.g. --as-user 65534: the suite as an unprivileged user
        uid, args = args[1], args[2:]
        home = f"/tmp/home-{uid}"
        os.makedirs(home, 0o700, exist_ok=True)
        os.chown(home, int(uid), int(uid))
        env.update(HOME=home, XDG_CACHE_HOME=os.path.join(home, ".cache"))
        drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
        command = drop + command
    command += args
    raise SystemExit(subprocess.run(command, env=env, check=False, cwd="/").returncode)
