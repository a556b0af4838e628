"""Parsing sloppy language-model output into an :class:`~lift_metrics.ir.IR`."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from lift_metrics.errors import InputTypeError, IRParseError as IRParseError
from lift_metrics.ir._model import IR

__all__ = ["IRParseError", "parse_ir"]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript|js)?[ \t]*\n?(.*?)```", re.DOTALL)
_EFFECT_ALIASES = {
    "read": "reads",
    "write": "writes",
    "call": "calls",
    "raise": "raises",
    "return": "returns",
    "i/o": "io",
    "i_o": "io",
    "net": "network",
    "mutate": "mutation",
    "mutates": "mutation",
    "mutating": "mutation",
}


def _preview(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


def _json_candidates(text: str) -> list[Any]:
    """Return the JSON objects found in ``text``: whole text, fenced blocks, then embedded."""
    found: list[Any] = []
    stripped = text.strip()
    with contextlib.suppress(ValueError):
        found.append(json.loads(stripped))
    for block in _FENCE.findall(text):
        try:
            found.append(json.loads(block.strip()))
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1 and len(found) < 8:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        found.append(value)
        break
    return [item for item in found if isinstance(item, dict)]


def _repair(text: str) -> Any:
    """Last resort for almost-JSON (trailing commas, single quotes), via json_repair."""
    start = text.find("{")
    if start == -1:
        return None
    try:
        import json_repair
    except ImportError:  # pragma: no cover - json_repair ships with dspy
        return None
    try:
        value = json_repair.loads(text[start : text.rfind("}") + 1])
    except Exception:  # json_repair is best-effort; any failure means "no JSON"
        return None
    return value if isinstance(value, dict) and value else None


def _loosen(data: Mapping[str, Any]) -> dict[str, Any]:
    """Apply the forgiving rewrites: wrapper keys, string intent, string effects, null lists."""
    result = dict(data)
    if "intent" not in result and "signature" not in result:
        for key in ("ir", "IR", "output", "result"):
            inner = result.get(key)
            if isinstance(inner, Mapping):
                result = dict(inner)
                break
    if isinstance(result.get("intent"), str):
        result["intent"] = {"description": result["intent"]}
    signature = result.get("signature")
    if isinstance(signature, Mapping):
        signature = dict(signature)
        params = signature.get("parameters")
        if params is None and "parameters" in signature:
            signature["parameters"] = []
        elif isinstance(params, list):
            signature["parameters"] = [{"name": p} if isinstance(p, str) else p for p in params]
        result["signature"] = signature
    for key in ("effects", "constraints"):
        if key in result and result[key] is None:
            result[key] = []
    effects = result.get("effects")
    if isinstance(effects, list):
        loosened = []
        for effect in effects:
            if isinstance(effect, str):
                effect = {"kind": effect}
            if isinstance(effect, Mapping) and isinstance(effect.get("kind"), str):
                kind = effect["kind"].strip().lower()
                effect = {**effect, "kind": _EFFECT_ALIASES.get(kind, kind)}
            loosened.append(effect)
        result["effects"] = loosened
    return result


def _describe_errors(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:5]:
        location = ".".join(str(p) for p in item["loc"]) or "<root>"
        message = str(item["msg"]).removeprefix("Value error, ")
        parts.append(f"{location}: {message}")
    more = error.error_count() - len(parts)
    if more > 0:
        parts.append(f"... and {more} more")
    return "; ".join(parts)


def parse_ir(source: IR | Mapping[str, Any] | str | bytes) -> IR:
    r"""Turn language-model output into an :class:`IR`, or raise :class:`IRParseError`.

    Parameters
    ----------
    source : IR, mapping, str or bytes
        An IR (returned as is), a dict in the IR JSON shape, or text that contains one:
        plain JSON, JSON inside a Markdown fence (```json ... ```), or JSON after leading
        prose ("Here is the IR: {...}").

    Returns
    -------
    IR

    Raises
    ------
    IRParseError
        When no JSON object is found, or the object is not a valid IR; the message names
        the failing fields (``signature.name: Field required``).
    TypeError
        When ``source`` is none of the accepted types.

    Notes
    -----
    Forgiving rewrites applied before validation: a top-level wrapper (``{"ir": {...}}``),
    ``"intent": "text"`` for ``{"description": "text"}``, parameters given as bare names,
    effects given as bare kind strings, effect kinds in any case and common spellings
    (``"I/O"`` -> ``io``, ``"raise"`` -> ``raises``, ``"mutates"`` -> ``mutation``), and
    ``null`` for the optional lists. Almost-JSON (trailing commas, single quotes) is repaired
    with ``json_repair`` as a last resort. Missing ``effects``/``constraints`` are empty.
    Keys that are not part of the IR are ignored.

    Examples
    --------
    >>> text = 'Sure! ```json\n{"intent": "Double x.", "signature": {"name": "double",'
    >>> text += ' "parameters": ["x"]}, "effects": ["RETURNS"]}\n```'
    >>> ir = parse_ir(text)
    >>> ir.signature.parameters[0].name, ir.effects[0].kind.value
    ('x', 'returns')
    >>> parse_ir("no json here")
    Traceback (most recent call last):
    ...
    lift_metrics.errors.IRParseError: no JSON object found in the text 'no json here'
    """
    if isinstance(source, IR):
        return source
    if isinstance(source, bytes):
        source = source.decode("utf-8", errors="replace")
    if isinstance(source, str):
        candidates = _json_candidates(source)
        if not candidates:
            repaired = _repair(source)
            if repaired is None:
                raise IRParseError(f"no JSON object found in the text {_preview(source)}")
            candidates = [repaired]
    elif isinstance(source, Mapping):
        candidates = [source]
    else:
        raise InputTypeError(
            f"parse_ir expects an IR, a mapping or a string, got {type(source).__name__}"
        )
    errors: list[ValidationError] = []
    for candidate in candidates:
        try:
            return IR.model_validate(_loosen(candidate))
        except ValidationError as exc:
            errors.append(exc)
    raise IRParseError(f"not a valid IR: {_describe_errors(errors[0])}") from errors[0]


def callable_ir(source: str) -> IR | None:
    """Return the IR in ``source`` with its parameter list made callable, or None.

    For the reference pipeline's code step only: an IR answer that :func:`parse_ir` refuses
    because of its parameters (a name repeated, a keyword, not an identifier) still names a
    function. Its parameters are kept in order with the repeats and the unusable names
    dropped, so that a header can be written; the answer itself stays refused (the IR
    metrics score what the step produced, not this repair).

    Examples
    --------
    >>> text = '{"intent": "First item.", "signature": {"name": "first", "parameters":'
    >>> text += ' ["items", "items", "class"]}}'
    >>> [p.name for p in callable_ir(text).signature.parameters]
    ['items']
    """
    import keyword
    import unicodedata

    # the whole answer repaired first: a model that repeats a parameter often runs out of
    # tokens too, and the objects found inside a cut answer are its effects, not the IR
    whole = _repair(source)
    candidates = ([] if whole is None else [whole]) + _json_candidates(source)
    for candidate in candidates:
        data = _loosen(candidate)
        signature = data.get("signature")
        if isinstance(signature, Mapping) and isinstance(signature.get("parameters"), list):
            seen: set[str] = set()
            kept = []
            for param in signature["parameters"]:
                name = param.get("name") if isinstance(param, Mapping) else None
                if (
                    isinstance(name, str)
                    and name.isidentifier()
                    and not keyword.iskeyword(name)
                    and unicodedata.normalize("NFKC", name) not in seen
                ):
                    seen.add(unicodedata.normalize("NFKC", name))
                    kept.append(param)
            data["signature"] = {**signature, "parameters": kept}
        try:
            return IR.model_validate(data)
        except ValidationError:
            continue
    return None
