"""One chat completion on a llama.cpp server: DSPy's request in, DSPy's response out.

:func:`_request_body` maps a ``dspy.lm15.Request`` onto llama.cpp's OpenAI-shaped chat body,
:func:`_generate` streams the tokens (stopping between two when the call is cancelled) and
:func:`_response` maps the reply back. The engine calls ``_generation._generate`` through this
module, so a test or benchmark can wrap it here.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from lift_metrics.errors import GenerationCancelledError
from lift_metrics.lm._cancel import cancel_checker
from lift_metrics.lm._prompt import note_refusal, prompt_too_long

# Request settings llama.cpp cannot honour here; the engine refuses them rather than drop them.
_REFUSED_CONFIG = (
    "tool_choice",
    "reasoning",
    "logprobs",
    "probabilities",
    "cache",
    "service_tier",
    "user_id",
    "store",
)
_FINISH_REASONS = {"stop": "stop", "length": "length", "tool_calls": "tool_call"}


def _unsupported(feature: str) -> Exception:
    from dspy.lm15 import UnsupportedFeatureError

    error: Exception = UnsupportedFeatureError(  # an Exception subclass; dspy is untyped
        f"the local llama.cpp engine does not support {feature}"
    )
    return error


def _text_of(parts: Any, where: str) -> str:
    texts = []
    for part in parts:
        if getattr(part, "type", None) != "text":
            raise _unsupported(f"{getattr(part, 'type', type(part).__name__)} parts ({where})")
        texts.append(part.text)
    return "".join(texts)


def _response_format(value: Mapping[str, Any]) -> dict[str, Any]:
    """Canonical lm15 response_format -> llama.cpp's (OpenAI chat) response_format.

    lm15 allows exactly two shapes: ``{"type": "json_object"}`` and
    ``{"type": "json_schema", "schema": ..., "name"?: ..., "strict"?: ...}``.
    """
    if value.get("type") == "json_schema":
        spec = {key: item for key, item in value.items() if key != "type"}
        return {"type": "json_schema", "json_schema": spec}
    return {"type": "json_object"}


def _request_body(request: Any) -> dict[str, Any]:
    """Translate a ``dspy.lm15.Request`` into the body ``handle_chat_completions`` takes."""
    if request.tools:
        raise _unsupported("tools")
    messages: list[dict[str, str]] = []
    if request.system is not None:
        system = request.system
        text = system if isinstance(system, str) else _text_of(system, "system prompt")
        messages.append({"role": "system", "content": text})
    for message in request.messages:
        if message.role not in ("user", "assistant"):
            raise _unsupported(f"{message.role!r} messages")
        messages.append({"role": message.role, "content": _text_of(message.parts, message.role)})
    config = request.config
    for name in _REFUSED_CONFIG:
        if getattr(config, name) is not None:
            raise _unsupported(f"the {name!r} setting")
    body: dict[str, Any] = {"messages": messages}
    for name in ("max_tokens", "temperature", "top_p", "top_k", "seed"):
        value = getattr(config, name)
        if value is not None:
            body[name] = value
    for name in ("frequency_penalty", "presence_penalty"):
        value = getattr(config, name)
        if value is not None:
            body[name] = value
    if config.stop:
        body["stop"] = list(config.stop)
    if config.response_format is not None:
        body["response_format"] = _response_format(config.response_format)
    # llama.cpp-specific sampling knobs (min_p, repeat_penalty, grammar, ...) pass through.
    body.update(config.extensions or {})
    return body


def _generate(server: Any, body: Mapping[str, Any]) -> dict[str, Any]:
    """Run one chat completion, streamed so that it can stop between tokens.

    llama.cpp hands each new token to ``on_chunk``; when the caller's cancel flag or the
    process-wide shutdown flag is set, ``on_chunk`` answers True and llama.cpp stops the
    generation and frees the slot. A streamed reply is reassembled into the shape of a
    non-streamed one. An exception raised while handling a token (Ctrl-C arrives as
    ``KeyboardInterrupt`` in whichever Python code runs) stops the generation and is
    re-raised here, instead of being lost inside the native call.
    """
    stop_requested = cancel_checker()
    if stop_requested():
        raise GenerationCancelledError("the LM call was cancelled before it started")
    chunks: list[Mapping[str, Any]] = []
    failures: list[BaseException] = []
    interrupts: list[tuple[int, Any]] = []
    stopped = False

    def on_chunk(chunk: Mapping[str, Any]) -> bool:
        nonlocal stopped
        try:
            chunks.append(chunk)
            stopped = bool(interrupts) or stop_requested()
        except BaseException as exc:  # re-raised on the calling thread below
            failures.append(exc)
            stopped = True
        return stopped

    streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
    try:
        with _deferred_sigint(interrupts) as previous:
            result = server.handle_chat_completions(streamed, on_chunk)
    finally:
        # Exit frees a server once no request holds it; an exception's traceback keeps this
        # frame, so the reference goes now.
        del server
    if interrupts and callable(previous):
        previous(*interrupts[0])  # Ctrl-C: the usual handler, now on the caller's frame
    if failures:
        raise failures[0]
    if stopped:
        raise GenerationCancelledError(
            "the LM call was cancelled mid-generation (its example timed out or the process "
            "is exiting)"
        )
    if isinstance(result, Mapping):  # an error reported without streaming
        return dict(result)
    return _reassemble(chunks)


@contextlib.contextmanager
def _deferred_sigint(interrupts: list[tuple[int, Any]]) -> Iterator[Any]:
    """On the main thread, record Ctrl-C instead of raising it while native code streams.

    A Python SIGINT handler runs at the entry of whatever Python function runs next: here
    the per-token callback, called from xllamacpp, which swallows exceptions raised there
    (the generation went on and Ctrl-C was lost). While the call runs, a recording handler
    takes SIGINT; the callback then stops the generation and the caller replays the
    original handler. Off the main thread, or with a non-Python handler, nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        yield previous
        return

    def record(signum: int, frame: Any) -> None:
        interrupts.append((signum, frame))

    signal.signal(signal.SIGINT, record)
    try:
        yield previous
    finally:
        signal.signal(signal.SIGINT, previous)


def _reassemble(chunks: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Streamed chunks -> the reply ``handle_chat_completions`` gives without streaming."""
    texts: list[str] = []
    reply: dict[str, Any] = {}
    finish_reason = None
    for chunk in chunks:
        if "error" in chunk:
            return {"error": chunk["error"]}
        for choice in chunk.get("choices") or ():
            content = (choice.get("delta") or {}).get("content")
            if content:
                texts.append(content)
            finish_reason = choice.get("finish_reason") or finish_reason
        for key in ("id", "usage", "timings"):
            if chunk.get(key):
                reply[key] = chunk[key]
    if not chunks:
        return {"error": {"message": "the local model returned nothing", "code": 500}}
    message = {"role": "assistant", "content": "".join(texts)}
    reply["choices"] = [{"index": 0, "message": message, "finish_reason": finish_reason}]
    return reply


def _response(reply: Mapping[str, Any], model_name: str, *, n_ctx: int | None = None) -> Any:
    """Translate llama.cpp's OpenAI-shaped reply (or error) into a ``dspy.lm15.Response``.

    llama.cpp's own refusal of a prompt longer than its context (when the engine could not
    count the prompt first) is recorded for :func:`~lift_metrics.lm.refused_prompts` too.
    """
    from dspy.lm15 import (
        ContextLengthError,
        InvalidRequestError,
        Message,
        Response,
        ServerError,
        TextPart,
        Usage,
    )

    error = reply.get("error")
    if error is not None:
        message = str(error.get("message", error)) if isinstance(error, Mapping) else str(error)
        code = error.get("code") if isinstance(error, Mapping) else None
        kind = error.get("type") if isinstance(error, Mapping) else None
        status = code if isinstance(code, int) else None
        if kind == "exceed_context_size_error":
            tokens = error.get("n_prompt_tokens") if isinstance(error, Mapping) else None
            limit = error.get("n_ctx") if isinstance(error, Mapping) else None
            limit = limit if isinstance(limit, int) else n_ctx
            if isinstance(tokens, int) and limit is not None:
                message = prompt_too_long(tokens, None, limit) or message
            note_refusal(message)
            raise ContextLengthError(message, provider="local", status=status)
        if status is not None and 400 <= status < 500:
            raise InvalidRequestError(message, provider="local", status=status)
        raise ServerError(message, provider="local", status=status)
    choice = reply["choices"][0]
    text = choice.get("message", {}).get("content") or ""
    usage = reply.get("usage", {})
    provider_data = {"timings": dict(reply["timings"])} if "timings" in reply else None
    return Response(
        id=reply.get("id") or None,
        model=model_name,
        message=Message.assistant([TextPart(text)]),
        finish_reason=_FINISH_REASONS.get(choice.get("finish_reason") or "stop", "stop"),
        usage=Usage(
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
            total_tokens=usage.get("total_tokens"),
        ),
        provider_data=provider_data,
    )


# --------------------------------------------------------------------------- public factories
