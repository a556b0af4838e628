"""Where shipped data lives, in a source checkout and in an installed wheel."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _shipped_dir(name: str) -> Path:
    installed = _PACKAGE_DIR / "_data" / name  # wheel: hatchling force-include
    if installed.is_dir():
        return installed
    checkout = _PACKAGE_DIR.parent / name  # source checkout / editable install
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        f"cannot find the shipped {name!r} folder (looked in {installed} and {checkout})"
    )


def datasets_dir() -> Path:
    """Return the folder holding the shipped datasets (``datasets/`` in the repository)."""
    return _shipped_dir("datasets")


def configs_dir() -> Path:
    """Return the folder holding the ready-made optimizer run configurations (``optimizers/``)."""
    return _shipped_dir("optimizers")


def cache_dir() -> Path:
    """Return this package's cache: ``$XDG_CACHE_HOME/lift-metrics`` or ``~/.cache/lift-metrics``.

    Not created by this function.
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lift-metrics"
