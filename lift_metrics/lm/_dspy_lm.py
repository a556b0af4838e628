"""The ``dspy.LM`` subclass behind :func:`lift_metrics.lm.local_lm`.

Kept apart from ``_factory`` because defining it imports dspy; this module is imported only
when a local LM is created.
"""

from __future__ import annotations

from typing import Any

from dspy.clients.lm import LM

LOCAL_COST_DETAILS = {"kind": "local", "reason": "runs in-process; no per-token price"}


class LocalLM(LM):  # type: ignore[misc]  # dspy is untyped: mypy sees its classes as Any
    """A ``dspy.LM`` over :class:`~lift_metrics.lm.LocalEngine` whose calls cost 0.0.

    DSPy prices custom engines as "unknown" (``cost=None``); a local model has no bill, so
    this LM records ``cost=0.0`` in its history, as cost sums over ``lm.history`` expect.
    Everything else (caching, history, threads, callbacks) is plain ``dspy.LM``.
    """

    def update_history(self, entry: dict[str, Any]) -> None:
        """Record ``entry`` with ``cost`` 0.0 where DSPy left it unknown."""
        if entry.get("cost") is None:
            entry = {**entry, "cost": 0.0, "cost_details": dict(LOCAL_COST_DETAILS)}
        super().update_history(entry)
