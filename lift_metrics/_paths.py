"""Where shipped data lives, in a source checkout and in an installed wheel."""

from __future__ import annotations

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
    """The folder holding the shipped datasets (``datasets/`` in the repository)."""
    return _shipped_dir("datasets")


def configs_dir() -> Path:
    """The folder holding the ready-made optimizer run configurations (``optimizers/``)."""
    return _shipped_dir("optimizers")
