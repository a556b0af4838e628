"""The check a new sandbox makes before it serves: it runs a known-good program, or says why not."""

from __future__ import annotations

import os
from typing import Any

from lift_metrics.errors import SandboxUnavailableError

#: the capabilities a root server needs, by bit number (:data:`SERVER_CAPS` but CAP_SETPCAP,
#: which it only uses to shrink its bounding set where it has it)
_NEEDED_CAPS = {
    0: "CAP_CHOWN",
    1: "CAP_DAC_OVERRIDE",
    3: "CAP_FOWNER",
    5: "CAP_KILL",
    6: "CAP_SETGID",
    7: "CAP_SETUID",
}
_PROBES: tuple[tuple[str, Any], ...] = (
    ("def f():\n    return 1\n", [({}, 1)]),
    ("def f():\n    return 1\n", "def check(candidate):\n    assert candidate() == 1\n"),
)


def missing_capabilities() -> list[str]:
    """Return the capabilities a root sandbox needs that this process lacks (none when not root).

    Read from ``/proc/self/status``: a capability missing from the effective or the bounding
    set (a container started with a reduced set, or ``setpriv --bounding-set=-dac_override``).
    """
    if os.geteuid() != 0:
        return []
    sets: dict[str, int] = {}
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("CapEff", "CapBnd"):
                    sets[key] = int(value.strip(), 16)
    except (OSError, ValueError):
        return []
    have = sets.get("CapEff", -1) & sets.get("CapBnd", -1)
    return [name for bit, name in _NEEDED_CAPS.items() if not have >> bit & 1]


def self_check(sandbox: Any) -> None:
    """Run a known-good program once, with an I/O case and with a check script.

    Raises
    ------
    SandboxUnavailableError
        Either does not pass: the sandbox cannot set up or run its children here (its result
        would otherwise score every program as failing). The message names what it got and,
        as root, the capabilities this process lacks.
    """
    for code, tests in _PROBES:
        result = sandbox.run_tests(code, tests, entry_point="f")
        if result.status == "passed":
            continue
        missing = missing_capabilities()
        hint = (
            f"; as root it needs {', '.join(_NEEDED_CAPS.values())}, and this process lacks "
            f"{', '.join(missing)} (a container started with fewer capabilities? add them, for "
            "example docker run --cap-add, or run as a normal user)"
            if missing
            else ""
        )
        raise SandboxUnavailableError(
            f"the sandbox ({sandbox.isolation} isolation) started but cannot run a known-good "
            f"program: {result.status}, {result.reason}{hint}"
        )
