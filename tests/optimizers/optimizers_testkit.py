"""DummyLM answers for the reference pipeline: JSON for the IR step, raw text for the code step.

The IR step speaks ``JSONAdapter`` (its prompt ends with "order of fields: `ir`"); the code
step speaks :class:`~lift_metrics.optimizers._adapters.FencedCodeAdapter`, whose reply is
the code itself (its prompt ends with a ``Header:`` section).
"""

from __future__ import annotations

from typing import Any

import dspy
from dspy.utils import DummyLM

IR_KEY = "order of fields: `ir`"
CODE_KEY = "\n\nHeader:\ndef "


class AnswerFormat(dspy.JSONAdapter):
    """Formats DummyLM's answers: a ``body`` answer as raw text, anything else as JSON."""

    def format_field_with_value(self, fields_with_values: Any, role: str = "user") -> str:
        names = [field.name for field in fields_with_values]
        if role != "user" and names == ["body"]:
            return str(next(iter(fields_with_values.values())))
        return str(super().format_field_with_value(fields_with_values, role=role))


def pipeline_lm(ir: Any, body: Any, extra: dict[str, Any] | None = None) -> DummyLM:
    """A DummyLM answering the IR step with ``ir`` and the code step with ``body`` (a body,
    a whole function, or a fenced answer), plus ``extra`` answers tried first."""
    answers = {**(extra or {}), IR_KEY: {"ir": ir}, CODE_KEY: {"body": body}}
    return DummyLM(answers, adapter=AnswerFormat())
