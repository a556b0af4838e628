"""DSPy adapters of the reference pipeline: a fenced-code chat for code, compact JSON for the IR."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from dspy.adapters import ChatAdapter, JSONAdapter
from dspy.adapters.utils import format_field_value, serialize_for_json

__all__ = ["CompactJSONAdapter", "FencedCodeAdapter"]


class FencedCodeAdapter(ChatAdapter):  # type: ignore[misc]  # dspy is untyped: mypy sees its classes as Any
    r"""A DSPy adapter for small models writing code: plain chat turns, code in a fence.

    For a signature with one output field the system message is the instructions alone,
    each input field is a ``Name:`` section of the user message and the output field is
    the whole assistant reply, shown as a Markdown ``python`` fence in demonstrations. No
    field markers, JSON or ``{placeholder}`` templates reach the prompt, so a small model
    has nothing to copy but the demonstrations' code. Parsing takes the whole reply as the
    output field. Signatures with several output fields are handled as ``dspy.ChatAdapter``
    does (without its JSON fallback).

    Instructions and demonstrations stay the predictor's own, so MIPROv2, COPRO and GEPA
    optimize a step that uses it as any other.

    Examples
    --------
    >>> import dspy
    >>> class Double(dspy.Signature):
    ...     '''Write the body.'''
    ...     header: str = dspy.InputField()
    ...     body: str = dspy.OutputField()
    >>> messages = FencedCodeAdapter().format(
    ...     Double, [{"header": "def f(x):", "body": "    return 2 * x"}], {"header": "def g(y):"})
    >>> [m["role"] for m in messages]
    ['system', 'user', 'assistant', 'user']
    >>> messages[2]["content"]
    '```python\n    return 2 * x\n```'
    >>> FencedCodeAdapter().parse(Double, "```python\n    return 3\n```")
    {'body': '```python\n    return 3\n```'}
    """

    def __init__(self) -> None:
        super().__init__(use_json_adapter_fallback=False)

    @staticmethod
    def _single(signature: Any) -> str | None:
        names = list(signature.output_fields)
        return names[0] if len(names) == 1 else None

    def format_system_message(self, signature: Any) -> str:
        """Return the instructions (ChatAdapter's system message for several output fields)."""
        if self._single(signature) is None:
            return str(super().format_system_message(signature))
        return textwrap.dedent(signature.instructions).strip()

    def format_user_message_content(
        self,
        signature: Any,
        inputs: dict[str, Any],
        prefix: str = "",
        suffix: str = "",
        main_request: bool = False,
    ) -> str:
        """One ``Name:`` section per input field present."""
        if self._single(signature) is None:
            return str(
                super().format_user_message_content(signature, inputs, prefix, suffix, main_request)
            )
        parts = [prefix] if prefix else []
        for name, info in signature.input_fields.items():
            if name in inputs:
                value = format_field_value(field_info=info, value=inputs[name])
                parts.append(f"{name.replace('_', ' ').capitalize()}:\n{value}")
        if suffix:
            parts.append(suffix)
        return "\n\n".join(parts).strip()

    def format_assistant_message_content(
        self, signature: Any, outputs: dict[str, Any], missing_field_message: str | None = None
    ) -> str:
        """Return the output field's value in a ``python`` fence."""
        name = self._single(signature)
        if name is None:
            return str(
                super().format_assistant_message_content(signature, outputs, missing_field_message)
            )
        value = outputs.get(name, missing_field_message)
        return f"```python\n{'' if value is None else value}\n```"

    def parse(self, signature: Any, completion: str) -> dict[str, Any]:
        """Return the whole completion as the one output field."""
        name = self._single(signature)
        if name is None:
            return dict(super().parse(signature, completion))
        return {name: completion}


class CompactJSONAdapter(JSONAdapter):  # type: ignore[misc]  # dspy is untyped: mypy sees its classes as Any
    """``dspy.JSONAdapter`` writing its JSON on one line, without ``null`` fields.

    The output format and the demonstrations' answers are written that way.

    A small model copies the layout of the answers it is shown: indented JSON costs it about
    twice the tokens of the same object on one line, and generation time is most of a
    local model's latency. Parsing, the schema sent as ``response_format`` and everything
    else are ``JSONAdapter``'s.

    Examples
    --------
    >>> import dspy
    >>> class Pair(dspy.Signature):
    ...     question: str = dspy.InputField()
    ...     answer: dict = dspy.OutputField()
    >>> CompactJSONAdapter().format_assistant_message_content(Pair, {"answer": {"a": 1, "b": None}})
    '{"answer": {"a": 1}}'
    """

    def format_field_with_value(self, fields_with_values: Any, role: str = "user") -> str:
        """User turns as ``JSONAdapter``; assistant JSON compact and without nulls."""
        if role == "user":
            return str(super().format_field_with_value(fields_with_values, role=role))
        data = {field.name: value for field, value in fields_with_values.items()}
        return json.dumps(_drop_nulls(serialize_for_json(data)), ensure_ascii=False)


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value
