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
stop_local_servers
    Stop every local generation and free this process's llama.cpp servers.
cancel_scope
    Run a block so that setting an event stops its LM generations.

Classes
-------
LocalEngine
    The DSPy engine behind :func:`local_lm`, for ``dspy.LM(model, engine=...)``.
AsyncLocalEngine
    Its async counterpart.

Importable from here but outside ``__all__`` (what the optimizers share):
``check_max_tokens`` (a ``max_tokens`` for the local LM, at most its context size),
``check_gguf`` (a readable GGUF model file, resolved), ``cancel_requested`` (whether the
current call's cancel flag or the process-wide shutdown flag is set), ``refused_prompts``
(the local-LM calls refused in a block because their prompt is too long),
``prompt_too_long`` (why a prompt of N tokens does not fit a context, or None),
``DEFAULT_N_CTX`` (the local LM's default context, in tokens), ``LOCAL_OPTIONS`` and
``REMOTE_OPTIONS`` (the options an ``[lm]`` table may set for the local model and for a
remote one); and ``GenerationCancelledError`` and ``PromptTooLongError``, whose home is
:mod:`lift_metrics.errors`.

Examples
--------
>>> from lift_metrics.lm import resolve_lm
>>> resolve_lm("openai/gpt-4o-mini").model
'openai/gpt-4o-mini'
"""

from __future__ import annotations

from lift_metrics.errors import (
    GenerationCancelledError as GenerationCancelledError,
    PromptTooLongError as PromptTooLongError,
)
from lift_metrics.lm._cancel import cancel_requested as cancel_requested, cancel_scope
from lift_metrics.lm._engine import DEFAULT_N_CTX as DEFAULT_N_CTX, AsyncLocalEngine, LocalEngine
from lift_metrics.lm._factory import (
    LOCAL_OPTIONS as LOCAL_OPTIONS,
    REMOTE_OPTIONS as REMOTE_OPTIONS,
    check_max_tokens as check_max_tokens,
    local_lm,
    resolve_lm,
)
from lift_metrics.lm._model import check_gguf as check_gguf, default_model_path
from lift_metrics.lm._prompt import (
    prompt_too_long as prompt_too_long,
    refused_prompts as refused_prompts,
)
from lift_metrics.lm._server import default_n_threads, stop_local_servers

__all__ = [  # plain sorted() order (tests/test_package.py checks names == sorted(names))
    "AsyncLocalEngine",
    "LocalEngine",
    "cancel_scope",
    "default_model_path",
    "default_n_threads",
    "local_lm",
    "resolve_lm",
    "stop_local_servers",
]
