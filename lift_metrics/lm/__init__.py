"""Language models for DSPy: a GGUF model run in-process, and LM selection.

The local LM runs a GGUF model with llama.cpp (through xllamacpp) inside this process; the
bundled SmolLM2-135M-Instruct is the default. Importing this package stays light: ``dspy`` and
``xllamacpp`` load when an LM or an engine is created.

Functions
---------
local_lm
    A ``dspy.LM`` backed by a GGUF model running in-process.
resolve_lm
    "local" / a ``.gguf`` path / a DSPy model string / a config mapping -> a ``dspy.LM``.
default_model_path
    The bundled SmolLM2-135M-Instruct GGUF file.
default_n_threads
    The llama.cpp thread count used when none is given.
check_max_tokens
    Check a ``max_tokens`` for the local LM (at most its context size).
check_gguf
    Check that a path is a readable GGUF model file and resolve it.
stop_local_servers
    Stop every local generation and free this process's llama.cpp servers.
cancel_scope
    Run a block so that setting an event stops its LM generations.
cancel_requested
    Whether the current call's cancel flag or the process-wide shutdown flag is set.
refused_prompts
    Collect the local-LM calls refused in a block because their prompt is too long.
prompt_too_long
    Why a prompt of N tokens does not fit a context (with room for the answer), or None.

Classes
-------
LocalEngine
    The DSPy engine behind :func:`local_lm`, for ``dspy.LM(model, engine=...)``.
AsyncLocalEngine
    Its async counterpart.
GenerationCancelledError
    An LM call stopped before its answer was complete.
PromptTooLongError
    A program's prompt does not fit the local model's context (raised by evaluations).

Constants
---------
DEFAULT_N_CTX
    Default context window of the local LM, in tokens.
LOCAL_OPTIONS, REMOTE_OPTIONS
    The options an ``[lm]`` table may set for the local model and for a remote one.

Examples
--------
>>> from lift_metrics.lm import resolve_lm
>>> resolve_lm("openai/gpt-4o-mini").model
'openai/gpt-4o-mini'
"""

from __future__ import annotations

from lift_metrics.errors import GenerationCancelledError, PromptTooLongError
from lift_metrics.lm._cancel import cancel_requested, cancel_scope
from lift_metrics.lm._engine import DEFAULT_N_CTX, AsyncLocalEngine, LocalEngine
from lift_metrics.lm._factory import (
    LOCAL_OPTIONS,
    REMOTE_OPTIONS,
    check_max_tokens,
    local_lm,
    resolve_lm,
)
from lift_metrics.lm._model import check_gguf, default_model_path
from lift_metrics.lm._prompt import prompt_too_long, refused_prompts
from lift_metrics.lm._server import default_n_threads, stop_local_servers

__all__ = [  # plain sorted() order (tests/test_package.py checks names == sorted(names))
    "AsyncLocalEngine",
    "DEFAULT_N_CTX",
    "GenerationCancelledError",
    "LOCAL_OPTIONS",
    "LocalEngine",
    "PromptTooLongError",
    "REMOTE_OPTIONS",
    "cancel_requested",
    "cancel_scope",
    "check_gguf",
    "check_max_tokens",
    "default_model_path",
    "default_n_threads",
    "local_lm",
    "prompt_too_long",
    "refused_prompts",
    "resolve_lm",
    "stop_local_servers",
]
