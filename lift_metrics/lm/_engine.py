"""The DSPy engine for a GGUF model run in-process: :class:`LocalEngine` and its async twin.

DSPy 3.4 drives an LM through an *engine*: an object with ``complete(Request) -> Response``
passed as ``dspy.LM(model, engine=...)``. :class:`LocalEngine` is that object for a GGUF model
served by xllamacpp's in-process llama.cpp server.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from lift_metrics._checks import check_int
from lift_metrics.errors import InputTypeError
from lift_metrics.lm import _generation  # called as _generation._generate: wrappable there
from lift_metrics.lm._generation import _request_body, _response
from lift_metrics.lm._model import _fingerprint, check_gguf
from lift_metrics.lm._prompt import count_prompt_tokens, note_refusal, prompt_too_long
from lift_metrics.lm._server import _access, _get_server, _lease, default_n_threads

__all__ = ["DEFAULT_N_CTX", "SUPPORTED_PARAMS", "AsyncLocalEngine", "LocalEngine"]

DEFAULT_N_CTX = 4096

# The request settings the engine maps onto llama.cpp's OpenAI-shaped body. JSONAdapter sends
# the structured-output schema only when "response_format" is listed here.
SUPPORTED_PARAMS = frozenset(
    {
        "frequency_penalty",
        "max_tokens",
        "presence_penalty",
        "response_format",
        "seed",
        "stop",
        "temperature",
        "top_k",
        "top_p",
    }
)


class LocalEngine:
    """DSPy engine running a GGUF model in-process with llama.cpp (xllamacpp).

    Pass it as ``dspy.LM("local/NAME", engine=LocalEngine(...))``, or use :func:`local_lm`,
    which does that with good defaults. The engine maps DSPy's canonical request onto
    llama.cpp's OpenAI-shaped chat body and back.

    Parameters
    ----------
    model_path : str or os.PathLike or None, default None
        A GGUF model file; ``None`` means the bundled SmolLM2-135M-Instruct
        (:func:`default_model_path`).
    n_ctx : int, default 4096
        Context window per request, in tokens (prompt + completion); llama.cpp may round it
        up to a multiple of 256.
    n_threads : int or None, default None
        CPU threads for llama.cpp; ``None`` means half the CPUs this process may use
        (:func:`default_n_threads`: 1 on a 2-core machine, which keeps the LM fast while
        metrics run beside it).
    n_parallel : int, default 1
        Requests decoded together (llama.cpp slots, each with its own ``n_ctx``). With 1,
        concurrent calls queue. More slots batch concurrent calls; on the 2-core development
        machine 4 slots gave no clear gain for 8 concurrent calls, so 1 is the default.

    Raises
    ------
    FileNotFoundError
        If ``model_path`` does not exist (or the default model is not installed).
    ValueError
        If the file is not a GGUF model, or llama.cpp cannot load it; if a number is out of range.
    TypeError
        If an argument has the wrong type.
    ImportError
        If xllamacpp is not installed.

    Notes
    -----
    The model is loaded when the engine is created and shared: every engine (and copy, and
    unpickled engine) with the same file and settings uses one server per process. The
    server queues concurrent requests, so the engine is safe under DSPy's thread pools.

    ``response_format`` with a JSON schema becomes a llama.cpp grammar: the output is
    guaranteed to parse as JSON matching the schema (unless ``max_tokens`` cuts it short,
    which the response reports as ``finish_reason="length"``). Requests with tools,
    reasoning, logprobs or non-text content are refused with ``UnsupportedFeatureError``.

    Tokens are streamed from llama.cpp, so a generation can stop between two tokens: when
    the evaluation it belongs to times out, on Ctrl-C (``KeyboardInterrupt`` reaches the
    caller) and at interpreter exit, which waits for running generations and then frees the
    model (:func:`stop_local_servers`). A stopped call raises ``GenerationCancelledError``.

    Examples
    --------
    >>> engine = LocalEngine(n_ctx=512, n_threads=1)
    >>> engine.supports_response_schema, "response_format" in engine.supported_params
    (True, True)
    """

    supports_response_schema = True
    supports_function_calling = False
    supports_reasoning = False
    supported_params = SUPPORTED_PARAMS

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        n_parallel: int = 1,
    ) -> None:
        path = check_gguf(model_path)
        # What the caller asked for, for dump_state: None (the bundled model, the default
        # thread count) stays None, so a saved program loads on another machine too.
        self._requested = {
            "model_path": None if model_path is None else str(path),
            "n_threads": n_threads,
        }
        self.n_ctx = check_int("n_ctx", n_ctx, minimum=64)
        threads = default_n_threads() if n_threads is None else n_threads
        self.n_threads = check_int("n_threads", threads, minimum=1)
        self.n_parallel = check_int("n_parallel", n_parallel, minimum=1)
        self.model_path = path
        self.model_name = f"local/{path.stem}-{_fingerprint(path)}"
        _get_server(path, self.n_ctx, self.n_threads, self.n_parallel)  # load now: fail early

    def __repr__(self) -> str:
        return (
            f"LocalEngine({self.model_path.name!r}, n_ctx={self.n_ctx}, "
            f"n_threads={self.n_threads}, n_parallel={self.n_parallel})"
        )

    # The engine holds only settings; the server lives in the process-wide table, so copies
    # (DSPy deep-copies programs and their LMs) share the engine, and a pickle carries only
    # the settings and reattaches to (or loads) the model when unpickled.
    def __copy__(self) -> LocalEngine:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> LocalEngine:
        return self

    def __getstate__(self) -> dict[str, Any]:
        return self.dump_state()

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(  # the class's __init__, as self.__init__ would be
            self,
            state["model_path"],
            n_ctx=state["n_ctx"],
            n_threads=state["n_threads"],
            n_parallel=state["n_parallel"],
        )

    def dump_state(self) -> dict[str, Any]:
        """Return the settings that rebuild this engine (DSPy saves custom engines with them).

        ``model_path`` and ``n_threads`` are ``None`` where the defaults were used, so the
        state means "the bundled model, this machine's default threads" wherever it loads.
        """
        return {
            "model_path": self._requested["model_path"],
            "n_ctx": self.n_ctx,
            "n_threads": self._requested["n_threads"],
            "n_parallel": self.n_parallel,
        }

    @classmethod
    def load_state(cls, state: Mapping[str, Any]) -> LocalEngine:
        """Rebuild an engine from :meth:`dump_state`'s output."""
        return cls(
            state["model_path"],
            n_ctx=state["n_ctx"],
            n_threads=state["n_threads"],
            n_parallel=state["n_parallel"],
        )

    @property
    def _server(self) -> Any:
        return _get_server(self.model_path, self.n_ctx, self.n_threads, self.n_parallel)

    def _lease(self) -> contextlib.AbstractContextManager[Any]:
        return _lease(self.model_path, self.n_ctx, self.n_threads, self.n_parallel)

    def complete(self, request: Any) -> Any:
        """Run one chat completion: ``dspy.lm15.Request`` in, ``dspy.lm15.Response`` out."""
        from dspy.clients.engines.base import validate_request
        from dspy.lm15 import InvalidRequestError

        validate_request(request)
        body = _request_body(request)
        try:
            with self._lease() as server:
                try:
                    self._check_prompt(body)
                    reply = _generation._generate(server, body)
                finally:
                    del server  # a traceback holding this frame must not keep the server
        except ValueError as exc:  # xllamacpp refuses malformed bodies with ValueError
            raise InvalidRequestError(str(exc), provider="local", status=400) from exc
        return _response(reply, self.model_name, n_ctx=self.n_ctx)

    def _check_prompt(self, body: Mapping[str, Any]) -> None:
        """Refuse a prompt that leaves no room for the answer, before it is sent.

        Raises ``dspy.lm15.ContextLengthError`` (DSPy's ``ContextWindowExceededError``) and
        records the refusal for :func:`~lift_metrics.lm.refused_prompts`.
        """
        access = _access(self.model_path, self.n_ctx, self.n_threads, self.n_parallel)
        if access is None:
            return
        tokens = count_prompt_tokens(*access, body["messages"])
        if tokens is None:  # not counted: llama.cpp refuses a prompt over its context itself
            return
        max_tokens = body.get("max_tokens")
        answer = max_tokens if isinstance(max_tokens, int) else None
        why = prompt_too_long(tokens, answer, self.n_ctx)
        if why is not None:
            from dspy.lm15 import ContextLengthError

            note_refusal(why)
            raise ContextLengthError(why, provider="local", status=400)

    def stream(self, request: Any) -> Iterator[Any]:
        """Stream events for one completion (the whole answer arrives as one chunk)."""
        from dspy.lm15 import response_to_events

        events: Iterator[Any] = response_to_events(self.complete(request))  # dspy is untyped
        return events

    def close(self) -> None:
        """Nothing to release: the server is shared and lives until interpreter exit."""


class AsyncLocalEngine:
    """Async counterpart of :class:`LocalEngine` (runs the sync engine in a worker thread)."""

    supports_response_schema = True
    supports_function_calling = False
    supports_reasoning = False
    supported_params = SUPPORTED_PARAMS

    def __init__(self, sync: LocalEngine) -> None:
        if not isinstance(sync, LocalEngine):
            raise InputTypeError(f"sync must be a LocalEngine, got {type(sync).__name__}")
        self.sync = sync

    def __repr__(self) -> str:
        return f"AsyncLocalEngine({self.sync!r})"

    def __copy__(self) -> AsyncLocalEngine:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> AsyncLocalEngine:
        return self

    def dump_state(self) -> dict[str, Any]:
        """Return the settings that rebuild this engine (see :meth:`LocalEngine.dump_state`)."""
        return self.sync.dump_state()

    @classmethod
    def load_state(cls, state: Mapping[str, Any]) -> AsyncLocalEngine:
        """Rebuild an engine from :meth:`dump_state`'s output."""
        return cls(LocalEngine.load_state(state))

    async def complete(self, request: Any) -> Any:
        """Run :meth:`LocalEngine.complete` off the event loop."""
        import asyncio

        return await asyncio.to_thread(self.sync.complete, request)

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        """Async stream of one completion's events."""
        from dspy.lm15 import response_to_events

        for event in response_to_events(await self.complete(request)):
            yield event

    async def aclose(self) -> None:
        """Nothing to release (see :meth:`LocalEngine.close`)."""
