"""The reference pipeline: natural-language prompt -> IR -> Python code, as a DSPy module.

This module imports dspy at import time (``LiftPipeline`` subclasses ``dspy.Module``);
``lift_metrics.optimizers`` loads it on first use only.
"""

from __future__ import annotations

import ast
import functools
import json
import keyword
import re
import textwrap
import time
from typing import Any

from dspy.adapters import ChatAdapter, JSONAdapter
from dspy.adapters.utils import format_field_value, serialize_for_json
from dspy.dsp.utils.settings import settings
from dspy.predict import Predict
from dspy.primitives import Module, Prediction
from dspy.signatures import InputField, OutputField, Signature
from pydantic import BaseModel

from lift_metrics import _pyast as pyast
from lift_metrics._checks import check_int
from lift_metrics.code import extract_code
from lift_metrics.ir import IR, parse_ir
from lift_metrics.optimizers._budget import UsageRecorder

__all__ = [
    "CANDIDATE_INSTRUCTIONS",
    "CODE_STOP",
    "CompactJSONAdapter",
    "FencedCodeAdapter",
    "LiftPipeline",
    "PromptIR",
    "PromptToIR",
    "WriteBody",
    "assemble_function",
    "function_body",
    "function_header",
    "is_placeholder",
]

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
    """The IR as the pipeline's output type: the fields and validation of
    :class:`~lift_metrics.IR`, with a compact JSON schema (no titles, docstrings or
    ``$ref``s). DSPy writes the schema into the prompt and sends it as ``response_format``
    for constrained decoding; compact, it costs about a quarter of the prompt tokens, which
    matters for a small local model's context. It also bounds the lists (at most 3 effects,
    3 constraints, 8 parameters) and the free texts (160 characters for a description, 40
    for a name), so
    that constrained decoding cannot repeat an item until ``max_tokens``."""

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


class WriteBody(Signature):
    """Write the Python function that the request asks for. Keep the given header line
    exactly and write the statements of its body; use only the standard library. Answer
    with the code only."""

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

#: Stop sequences of the code step: the end of the fenced answer, or a line at column 0 that
#: starts a usage example (never part of a function). Four, the most OpenAI's API accepts.
CODE_STOP: tuple[str, ...] = ("\n```", "\nprint(", "\nif __name__", "\n# Example")

# Names a type hint may use without an import; a hint with other names is left out.
_HINT_NAMES = frozenset(
    {"int", "float", "str", "bool", "bytes", "list", "dict", "tuple", "set", "frozenset"}
)
_NAME = re.compile(r"\s*(?:def\s+)?([A-Za-z_]\w*)\s*(?:\(.*)?$", re.DOTALL)
_PLACEHOLDER = re.compile(r"^\s*(?:\{\s*\w+\s*\}|\[\[ ## \w+ ## \]\])\s*$")


def is_placeholder(text: str) -> bool:
    """Whether ``text`` is only a copy of a prompt-template placeholder.

    Examples
    --------
    >>> is_placeholder("{code}"), is_placeholder(" [[ ## body ## ]] "), is_placeholder("x = 1")
    (True, True, False)
    """
    return bool(_PLACEHOLDER.match(text))


def _usable_hint(hint: str | None) -> str | None:
    """``hint`` when it is an annotation over built-in names only, else ``None``."""
    if not hint or not hint.strip():
        return None
    try:
        tree = pyast.parse(hint.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        allowed = (
            (isinstance(node, ast.Constant) and node.value is None)
            or (isinstance(node, ast.Name) and node.id in _HINT_NAMES)
            or (isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr))
            or isinstance(node, ast.Expression | ast.Subscript | ast.Tuple | ast.BitOr | ast.Load)
        )
        if not allowed:
            return None
    return ast.unparse(tree)


def function_header(ir: Any, *, return_type: bool = False) -> str:
    """The ``def`` line of the function an IR describes, always valid Python.

    Parameters
    ----------
    ir : IR, mapping or JSON string
        Anything :func:`lift_metrics.ir.parse_ir` reads.
    return_type : bool, default False
        Also write the IR's return type as the return annotation. Off by default: a small
        model's IR often gets the return type wrong (``list[int]`` for ``largest``) and the
        body then follows the wrong annotation; on the main job's 16 test tasks the same
        optimized program solved 5 tasks without it and 3 with it.

    Returns
    -------
    str
        ``def name(param: hint, ...):`` (``-> return_type`` before the colon with
        ``return_type=True``). Type hints that are not
        annotations over built-in names (``"a number"``, ``"json"``, ``"List[int]"``, which
        would need an import) are left out; repeated or invalid parameter names are dropped.
        A name written as a call (``"add(a, b)"``) counts as its leading identifier.

    Raises
    ------
    ValueError
        When ``ir`` is not a valid IR or its function name is not a Python identifier.

    Examples
    --------
    >>> function_header({"intent": {"description": "Add."},
    ...                  "signature": {"name": "add", "return_type": "int",
    ...                                "parameters": [{"name": "a", "type_hint": "int"},
    ...                                               {"name": "b", "type_hint": "a number"}]}})
    'def add(a: int, b):'
    """
    signature = parse_ir(ir).signature
    match = _NAME.match(signature.name)  # "add(a, b)" and "add()" name the function add
    name = match.group(1) if match else signature.name.strip()
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"the IR's function name must be a Python identifier, got {name!r}")
    seen: set[str] = set()
    params = []
    for param in signature.parameters:
        pname = param.name.strip()
        if not pname.isidentifier() or keyword.iskeyword(pname) or pname in seen:
            continue
        seen.add(pname)
        hint = _usable_hint(param.type_hint)
        params.append(f"{pname}: {hint}" if hint else pname)
    returns = _usable_hint(signature.return_type) if return_type else None
    return f"def {name}({', '.join(params)})" + (f" -> {returns}" if returns else "") + ":"


def function_body(code: str, entry_point: str) -> str:
    """The body of the top-level function ``entry_point`` of ``code``, indented by four
    spaces and without its docstring; the module's imports move into the body.

    The code step's demonstrations are labelled with it (from the tasks' reference code).

    Raises
    ------
    ValueError
        When ``code`` defines no top-level function ``entry_point``.
    SyntaxError
        When ``code`` does not parse.

    Examples
    --------
    >>> source = "import math\\ndef f(x):\\n    '''Doc.'''\\n    return math.sqrt(x)\\n"
    >>> print(function_body(source, "f"))
        import math
        return math.sqrt(x)
    """
    tree = pyast.parse(code)
    function = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point), None
    )
    if function is None:
        raise ValueError(f"code defines no top-level function {entry_point!r}")
    statements = function.body
    first = statements[0]
    if (
        len(statements) > 1
        and isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        statements = statements[1:]
    lines = code.splitlines()
    body = lines[statements[0].lineno - 1 : statements[-1].end_lineno]
    imports = [
        "    " + (ast.get_source_segment(code, node) or "").strip()
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    return "\n".join([*imports, *body])


def _parses(code: str) -> bool:
    try:
        pyast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def assemble_function(header: str, answer: str) -> str:
    """Put the code step's answer under the header: the generated function's source.

    Parameters
    ----------
    header : str
        The ``def`` line (:func:`function_header`).
    answer : str
        The LM's answer, already out of Markdown fences and prose
        (:func:`lift_metrics.code.extract_code`): the body, indented or not, or a whole
        function with its own ``def`` line (kept as written when it parses).

    Returns
    -------
    str
        The function's source ending in a newline, or ``""`` when the answer is empty or
        a copy of a template placeholder such as ``{body}``. Of three ways to indent a body
        (the first line's stripped indentation restored; every line shifted by four
        spaces; dedented, then shifted) the first that parses is used; when none parses
        the first is returned and the code metrics score the syntax error.

    Examples
    --------
    >>> print(assemble_function("def add(a, b):", "return a + b"), end="")
    def add(a, b):
        return a + b
    >>> answer = "if x < 0:\\n        return -1\\n    return 1"
    >>> print(assemble_function("def sign(x):", answer), end="")
    def sign(x):
        if x < 0:
            return -1
        return 1
    >>> assemble_function("def f():", "{body}")
    ''
    """
    lines = answer.replace("\r\n", "\n").replace("\t", "    ").rstrip().split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines or is_placeholder("\n".join(lines)):
        return ""
    if lines[0].lstrip().startswith(("def ", "async def ", "import ", "from ")):
        whole = textwrap.dedent("\n".join(lines))
        if _parses(whole):
            return whole + "\n"
    first, rest = lines[0].strip(), lines[1:]
    candidates = [
        "\n".join([header, "    " + first, *rest]),
        "\n".join([header, *("    " + line if line.strip() else "" for line in lines)]),
        header + "\n" + textwrap.indent(textwrap.dedent("\n".join(lines)), "    "),
    ]
    for candidate in candidates:
        if _parses(candidate):
            return candidate + "\n"
    return candidates[0] + "\n"


class FencedCodeAdapter(ChatAdapter):
    """A DSPy adapter for small models writing code: plain chat turns, code in a fence.

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
    '```python\\n    return 2 * x\\n```'
    >>> FencedCodeAdapter().parse(Double, "```python\\n    return 3\\n```")
    {'body': '```python\\n    return 3\\n```'}
    """

    def __init__(self) -> None:
        super().__init__(use_json_adapter_fallback=False)

    @staticmethod
    def _single(signature: Any) -> str | None:
        names = list(signature.output_fields)
        return names[0] if len(names) == 1 else None

    def format_system_message(self, signature: Any) -> str:
        """The instructions (ChatAdapter's system message for several output fields)."""
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
        """The output field's value in a ``python`` fence."""
        name = self._single(signature)
        if name is None:
            return str(
                super().format_assistant_message_content(signature, outputs, missing_field_message)
            )
        value = outputs.get(name, missing_field_message)
        return f"```python\n{'' if value is None else value}\n```"

    def parse(self, signature: Any, completion: str) -> dict[str, Any]:
        """The whole completion as the one output field."""
        name = self._single(signature)
        if name is None:
            return dict(super().parse(signature, completion))
        return {name: completion}


class CompactJSONAdapter(JSONAdapter):
    """``dspy.JSONAdapter`` whose JSON (the output format and the demonstrations' answers)
    is written on one line, without ``null`` fields.

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


def _error_line(exc: BaseException) -> str:
    line = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return line if len(line) <= _MAX_ERROR_CHARS else line[: _MAX_ERROR_CHARS - 1] + "…"


class LiftPipeline(Module):
    """Prompt -> IR (constrained to the IR JSON schema) -> Python function.

    Two predictors, both optimizable (instructions and demonstrations):

    - ``to_ir`` (:class:`PromptToIR`): its output field is typed as the IR, so
      ``dspy.JSONAdapter`` sends the IR's JSON schema as ``response_format`` and LMs that
      support structured output (the local LM among them) always answer a parsable IR;
    - ``to_code`` (:class:`WriteBody`): the pipeline writes the function's ``def`` line from
      the IR's signature (:func:`function_header`) and the LM writes the body, through
      :class:`FencedCodeAdapter`, stopping at the end of its code fence or at a usage
      example (:data:`CODE_STOP`).
      The answer goes through :func:`lift_metrics.code.extract_code` and
      :func:`assemble_function`, which indents it under the header (or keeps a whole
      function the LM wrote itself).

    Parameters
    ----------
    ir_adapter, code_adapter : dspy.Adapter or None, default None
        The adapter of each step; ``None`` means :class:`CompactJSONAdapter` (a
        ``dspy.JSONAdapter`` writing one-line JSON) for ``to_ir`` and
        :class:`FencedCodeAdapter` for ``to_code``. An adapter set with
        ``dspy.configure(adapter=...)`` is not used: each step needs its own.
    code_max_tokens : int or None, default 192
        Most tokens of the code step's answer (``None``: the LM's own limit).

    Notes
    -----
    ``forward(prompt)`` returns a ``dspy.Prediction`` with

    - ``ir``: the parsed :class:`~lift_metrics.IR`, or ``None`` when the LM's answer did not
      parse (after a lenient second try with :func:`lift_metrics.ir.parse_ir`);
    - ``ir_json``: the IR as JSON text (the raw answer when parsing failed);
    - ``header``: the ``def`` line built from the IR (``""`` without an IR);
    - ``body``: the code step's raw answer;
    - ``code``: the assembled function (``""`` when the step failed or the answer was
      empty or a template placeholder);
    - ``ir_error`` / ``code_error``: ``None``, or the one-line error of that step;
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
    ...       "signature": {"name": "add", "return_type": "int",
    ...                     "parameters": [{"name": "a", "type_hint": "int"},
    ...                                    {"name": "b", "type_hint": "int"}]}}
    >>> lm = DummyLM([{"ir": ir}, {"body": "    return a + b"}], adapter=dspy.JSONAdapter())
    >>> program = LiftPipeline(code_adapter=dspy.JSONAdapter())  # DummyLM answers in JSON
    >>> with dspy.context(lm=lm):
    ...     out = program(prompt="Add two integers.")
    >>> print(out.code, end="")
    def add(a: int, b: int):
        return a + b
    >>> out.header, out.ir_error, out.code_error
    ('def add(a: int, b: int):', None, None)
    """

    def __init__(
        self,
        *,
        ir_adapter: Any = None,
        code_adapter: Any = None,
        code_max_tokens: int | None = 192,
    ) -> None:
        super().__init__()
        self.ir_adapter = ir_adapter if ir_adapter is not None else CompactJSONAdapter()
        self.code_adapter = code_adapter if code_adapter is not None else FencedCodeAdapter()
        self.code_max_tokens = (
            None
            if code_max_tokens is None
            else check_int("code_max_tokens", code_max_tokens, minimum=1)
        )
        self.to_ir = Predict(PromptToIR)
        self.to_code = Predict(WriteBody)

    def forward(self, prompt: str) -> Prediction:
        """Run both steps on ``prompt``; see the class notes for the prediction's fields."""
        started = time.perf_counter()
        recorder = UsageRecorder(parent=settings.usage_tracker)
        with settings.context(usage_tracker=recorder):
            ir, ir_json, ir_error = self._predict_ir(prompt)
            header, body, code, code_error = self._predict_code(prompt, ir)
        usage = recorder.totals()
        return Prediction(
            ir=ir,
            ir_json=ir_json,
            ir_error=ir_error,
            header=header,
            body=body,
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
            with settings.context(adapter=self.ir_adapter):
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

    def _predict_code(self, prompt: str, ir: IR | None) -> tuple[str, str, str, str | None]:
        """(header, raw answer, assembled code, error)."""
        if ir is None:
            return "", "", "", "no code: the IR step gave no signature to write the header from"
        try:
            header = function_header(ir)
        except ValueError as exc:
            return "", "", "", f"no code: {exc}"
        config: dict[str, Any] = {"stop": list(CODE_STOP)}
        if self.code_max_tokens is not None:
            config["max_tokens"] = self.code_max_tokens
        try:
            with settings.context(adapter=self.code_adapter):
                body = str(self.to_code(prompt=prompt, header=header, config=config).body or "")
        except Exception as exc:
            raw = getattr(exc, "lm_response", None)
            body = raw if isinstance(raw, str) else ""
            code = assemble_function(header, extract_code(body)) if body.strip() else ""
            return header, body, code, _error_line(exc)
        code = assemble_function(header, extract_code(body))
        error = None if code else "no code: the answer was empty or a template placeholder"
        return header, body, code, error
