"""The reference pipeline: natural-language prompt -> IR -> Python code, as a DSPy module.

This module imports dspy at import time (``LiftPipeline`` subclasses ``dspy.Module``);
``lift_metrics.optimizers`` loads it on first use only.
"""

from __future__ import annotations

import functools
import json
import re
import time
from typing import Any

from dspy.adapters import JSONAdapter
from dspy.dsp.utils.settings import settings
from dspy.predict import Predict
from dspy.primitives import Module, Prediction
from dspy.signatures import InputField, OutputField, Signature
from pydantic import BaseModel

from lift_metrics.ir import IR, parse_ir
from lift_metrics.optimizers._budget import UsageRecorder

__all__ = ["GenerateCode", "LiftPipeline", "PromptIR", "PromptToIR", "strip_code_fences"]

_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL | re.IGNORECASE)
_MAX_ERROR_CHARS = 500


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


@functools.cache
def _compact_schema_json() -> str:
    schema = IR.json_schema()
    return json.dumps(_inline(schema, schema.get("$defs", {})))


class PromptIR(IR):
    """The IR as the pipeline's output type: the fields and validation of
    :class:`~lift_metrics.IR`, with a compact JSON schema (no titles, docstrings or
    ``$ref``s). DSPy writes the schema into the prompt and sends it as ``response_format``
    for constrained decoding; compact, it costs about a quarter of the prompt tokens, which
    matters for a small local model's context, and it constrains the output the same way."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        """The compact, self-contained schema (also valid when nested in another schema)."""
        result: dict[str, Any] = json.loads(_compact_schema_json())
        return result


class PromptToIR(Signature):
    """Read a request for one Python function and describe that function as an IR: a one- or
    two-sentence intent, the signature (function name, parameters with type hints, return
    type), the ordered effects (reads, writes, calls, raises, returns, io, network, mutation)
    and checkable constraints."""

    prompt: str = InputField(desc="what the function should do, in plain English")
    ir: PromptIR = OutputField(desc="the function's intermediate representation")


class GenerateCode(Signature):
    """Write the complete Python function that the request and its IR describe. Return only
    Python source code: the function definition with type hints (and any imports it needs)."""

    prompt: str = InputField(desc="what the function should do, in plain English")
    ir: str = InputField(desc="the function's IR as JSON: intent, signature, effects")
    code: str = OutputField(desc="Python source code defining the function")


def strip_code_fences(text: str) -> str:
    """Return the code inside the first Markdown fence of ``text``, or ``text`` stripped.

    Examples
    --------
    >>> strip_code_fences("```python\\ndef f():\\n    return 1\\n```")
    'def f():\\n    return 1'
    >>> strip_code_fences("  def g(): pass ")
    'def g(): pass'
    """
    match = _FENCE.search(text)
    return (match.group(1) if match else text).strip()


def _error_line(exc: BaseException) -> str:
    line = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return line if len(line) <= _MAX_ERROR_CHARS else line[: _MAX_ERROR_CHARS - 1] + "…"


class LiftPipeline(Module):
    """Prompt -> IR (constrained to the IR JSON schema) -> Python code.

    Two predictors, both optimizable: ``to_ir`` (:class:`PromptToIR`, whose output field is
    typed :class:`lift_metrics.IR`, so DSPy's ``JSONAdapter`` sends the IR's JSON schema as
    ``response_format`` to LMs that support structured output) and ``to_code``
    (:class:`GenerateCode`).

    Parameters
    ----------
    adapter : dspy.Adapter or None, default None
        The adapter both steps use; ``None`` means ``dspy.JSONAdapter()`` unless one was set
        with ``dspy.configure(adapter=...)``.

    Notes
    -----
    ``forward(prompt)`` returns a ``dspy.Prediction`` with

    - ``ir``: the parsed :class:`~lift_metrics.IR`, or ``None`` when the LM's answer did not
      parse (after a lenient second try with :func:`lift_metrics.ir.parse_ir`);
    - ``ir_json``: the IR as JSON text (the raw answer when parsing failed);
    - ``ir_error`` / ``code_error``: ``None``, or the one-line error of that step;
    - ``code``: the generated source (Markdown fences removed; ``""`` when the step failed);
    - ``latency_ms``: wall time of the whole forward pass;
    - ``lm_calls``, ``prompt_tokens``, ``completion_tokens``, ``total_tokens``, ``cost_usd``:
      billed usage of this call (cache hits count zero), read from DSPy's usage tracker.

    A bad LM answer never raises: the error is kept in the prediction and the metrics score
    it. (A :class:`~lift_metrics.optimizers._budget.BudgetExceeded` or ``KeyboardInterrupt``
    does propagate.) Save and load with DSPy's own format: ``program.save("p.json")`` and
    ``LiftPipeline().load("p.json")``.

    Examples
    --------
    >>> import dspy
    >>> from dspy.utils import DummyLM
    >>> ir = {"intent": {"description": "Add two integers."},
    ...       "signature": {"name": "add", "parameters": [], "return_type": "int"}}
    >>> lm = DummyLM([{"ir": ir}, {"code": "def add(a, b):\\n    return a + b"}],
    ...              adapter=dspy.JSONAdapter())
    >>> with dspy.context(lm=lm):
    ...     out = LiftPipeline()(prompt="Add two integers.")
    >>> out.ir.signature.name, out.code, out.ir_error
    ('add', 'def add(a, b):\\n    return a + b', None)
    """

    def __init__(self, *, adapter: Any = None) -> None:
        super().__init__()
        self.adapter = adapter
        self.to_ir = Predict(PromptToIR)
        self.to_code = Predict(GenerateCode)

    def _adapter(self) -> Any:
        if self.adapter is not None:
            return self.adapter
        return settings.adapter or JSONAdapter()

    def forward(self, prompt: str) -> Prediction:
        """Run both steps on ``prompt``; see the class notes for the prediction's fields."""
        started = time.perf_counter()
        recorder = UsageRecorder(parent=settings.usage_tracker)
        with settings.context(adapter=self._adapter(), usage_tracker=recorder):
            ir, ir_json, ir_error = self._predict_ir(prompt)
            code, code_error = self._predict_code(prompt, ir_json)
        usage = recorder.totals()
        return Prediction(
            ir=ir,
            ir_json=ir_json,
            ir_error=ir_error,
            code=code,
            code_error=code_error,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            lm_calls=usage.lm_calls,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            total_tokens=usage.total_tokens,
            cost_usd=usage.cost_usd,
        )

    def _predict_ir(self, prompt: str) -> tuple[IR | None, str, str | None]:
        try:
            value = self.to_ir(prompt=prompt).ir
            if isinstance(value, BaseModel):  # PromptIR -> a plain IR (equality is per class)
                value = value.model_dump()
            ir = parse_ir(value)
        except Exception as exc:  # a bad answer is scored, not raised
            raw = getattr(exc, "lm_response", None)
            if isinstance(raw, str) and raw.strip():
                try:  # a lenient second reading of the same answer
                    return parse_ir(raw), raw, None
                except Exception:
                    return None, raw, _error_line(exc)
            return None, "", _error_line(exc)
        return ir, ir.model_dump_json(), None

    def _predict_code(self, prompt: str, ir_json: str) -> tuple[str, str | None]:
        try:
            code = self.to_code(prompt=prompt, ir=ir_json or "{}").code
        except Exception as exc:
            raw = getattr(exc, "lm_response", None)
            if isinstance(raw, str) and "def " in raw:
                return strip_code_fences(raw), _error_line(exc)
            return "", _error_line(exc)
        return strip_code_fences(str(code or "")), None
