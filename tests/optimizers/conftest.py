"""Shared helpers of the optimizer tests live in ``optimizers_testkit.py``.

The suite runs with ``--import-mode=importlib``, which leaves ``sys.path`` alone, so this
conftest (imported before the test modules of this directory) registers
``optimizers_testkit`` in ``sys.modules`` for the test modules to import.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any


def _load_testkit() -> Any:
    name = "optimizers_testkit"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        if spec is None or spec.loader is None:  # pragma: no cover - the file sits next to us
            raise ImportError(f"cannot load {name}.py next to {__file__}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


testkit = _load_testkit()
