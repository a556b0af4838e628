"""The DSPy signatures of the reference pipeline and the compact IR schema shown to the model.

Also :data:`CANDIDATE_INSTRUCTIONS`, the hand-written instructions MIPROv2 chooses among.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from dspy.signatures import InputField, OutputField, Signature

from lift_metrics.ir import IR

__all__ = ["CANDIDATE_INSTRUCTIONS", "PromptIR", "PromptToIR", "WriteBody"]

_SCHEMA_NOISE = ("description", "title", "default")


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """Resolve ``$ref``s and drop documentation keywords (not properties of those names)."""
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _inline(sub, defs) for name, sub in value.items()}
        elif key not in (*_SCHEMA_NOISE, "$defs"):
            out[key] = _inline(value, defs)
    return out


# Bounds written into the output schema, so that constrained decoding cannot loop: a small
# model otherwise repeats an effect until max_tokens (the reference tasks have at most 3
# effects; longer lists are a loop, not an answer).
_MAX_ITEMS = {"effects": 3, "constraints": 3, "parameters": 8}
_MAX_TEXT = {"description": 160, "target": 40, "name": 40}


def _bound(node: Any) -> Any:
    """Add ``maxItems`` to the IR's lists and ``maxLength`` to its free-text fields."""
    if isinstance(node, list):
        return [_bound(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _bound(value) for key, value in node.items()}
    for name, sub in out.get("properties", {}).items():
        if name in _MAX_ITEMS and sub.get("type") == "array":
            sub["maxItems"] = _MAX_ITEMS[name]
        if name in _MAX_TEXT:
            for option in [sub, *sub.get("anyOf", [])]:
                if option.get("type") == "string":
                    option["maxLength"] = _MAX_TEXT[name]
    return out


@functools.cache
def _compact_schema_json() -> str:
    schema = IR.json_schema()
    return json.dumps(_bound(_inline(schema, schema.get("$defs", {}))))


class PromptIR(IR):
    """The IR as the pipeline's output type.

    The fields and validation of :class:`~lift_metrics.IR`, with a compact JSON schema (no titles,
    docstrings or ``$ref``s). DSPy writes the schema into the prompt and sends it as
    ``response_format`` for constrained decoding; compact, it costs about a quarter of the prompt
    tokens, which matters for a small local model's context. It also bounds the lists (at most 3
    effects, 3 constraints, 8 parameters) and the free texts (160 characters for a description, 40
    for a name), so that constrained decoding cannot repeat an item until ``max_tokens``.
    """

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        """Return the compact, self-contained schema (also valid when nested in another schema)."""
        result: dict[str, Any] = json.loads(_compact_schema_json())
        return result


class PromptToIR(Signature):  # type: ignore[misc]  # dspy is untyped: mypy sees its classes as Any
    """Read a request for one Python function and describe that function as an IR: a one- or
    two-sentence intent, the signature (function name, parameters with type hints, return
    type), the ordered effects (reads, writes, calls, raises, returns, io, network, mutation)
    and checkable constraints."""  # noqa: D205, D209 (DSPy sends this text as the instructions)

    prompt: str = InputField(desc="what the function should do, in plain English")
    ir: PromptIR = OutputField(desc="the function's intermediate representation")


class WriteBody(Signature):  # type: ignore[misc]  # dspy is untyped: mypy sees its classes as Any
    """Write the Python function that the request asks for. Keep the given header line
    exactly and write the statements of its body; use only the standard library. Answer
    with the code only."""  # noqa: D205, D209 (DSPy sends this text as the instructions)

    prompt: str = InputField(desc="what the function should do, in plain English")
    header: str = InputField(desc="the function's first line, built from the IR's signature")
    body: str = OutputField(desc="the statements under the header, indented by four spaces")


#: Hand-written candidate instructions per predictor. MIPROv2 chooses among them (with the
#: demonstration sets) when no prompt model is configured to propose instructions; the
#: first of each is the signature's own instruction.
CANDIDATE_INSTRUCTIONS: dict[str, tuple[str, ...]] = {
    "to_ir": (
        " ".join((PromptToIR.__doc__ or "").split()),
        "Describe the requested Python function as an IR. Copy the function name and the "
        "parameter names exactly as the request writes them, give simple Python type hints "
        "(int, str, list[int], dict[str, int]), say in one sentence what it returns, list "
        "the effects in order (ending with returns) and two or three checkable constraints.",
        "Turn the request into the IR of one Python function: intent (one short sentence), "
        "signature (the name and parameters from the request, with type hints), effects "
        "(raises before returns) and constraints such as param_count, return_type and pure.",
    ),
    "to_code": (
        " ".join((WriteBody.__doc__ or "").split()),
        "Complete the Python function. The header is given; write only the indented body "
        "that computes what the request asks, handling the edge cases it names (an empty "
        "list, None, a ValueError to raise). Use built-ins where they fit. Code only.",
        "You are an expert Python programmer. Write a short, correct body for the given "
        "function header so that it does exactly what the request says. Return the code "
        "only, without explanations, examples or tests.",
    ),
}
