"""Fixtures for the IR tests: a reference IR (the ir_spec example); ``hash_embedder`` is
the suite-wide fixture (``tests/conftest.py``)."""

from __future__ import annotations

from typing import Any

import pytest

# The example from the IR JSON contract (/tmp/briefs/ir_spec.md, shared with the datasets).
FIB_IR: dict[str, Any] = {
    "intent": {"description": "Return the n-th Fibonacci number, starting from fib(0) = 0."},
    "signature": {
        "name": "fibonacci",
        "parameters": [{"name": "n", "type_hint": "int"}],
        "return_type": "int",
    },
    "effects": [
        {"kind": "raises", "description": "ValueError when n is negative"},
        {"kind": "returns", "description": "the n-th Fibonacci number"},
    ],
    "constraints": [
        {"kind": "return_type", "type_hint": "int"},
        {"kind": "has_parameter", "name": "n", "type_hint": "int"},
        {"kind": "effect_absent", "effect": "io"},
        {"kind": "pure"},
    ],
}


@pytest.fixture
def fib_ir() -> dict[str, Any]:
    import copy

    return copy.deepcopy(FIB_IR)
