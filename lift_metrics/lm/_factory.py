"""Building LMs: :func:`local_lm` for the local model, :func:`resolve_lm` for a user's choice.

:func:`resolve_lm` turns a user's choice ("local", a ``.gguf`` path, a DSPy model string such as
``"openai/gpt-4o-mini"``, a TOML ``[lm]`` table) into a ``dspy.LM``. Nothing heavy is imported
at module import: ``dspy`` and ``xllamacpp`` load on first use.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lift_metrics._checks import check_int, check_non_negative
from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.lm._engine import DEFAULT_N_CTX, AsyncLocalEngine, LocalEngine

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from dspy.clients.base_lm import BaseLM
    from dspy.clients.lm import LM

__all__ = ["DEFAULT_MAX_TOKENS", "LOCAL_OPTIONS", "REMOTE_OPTIONS", "local_lm", "resolve_lm"]

DEFAULT_MAX_TOKENS = 512


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
    """Return a ``dspy.LM`` backed by a GGUF model running in-process (llama.cpp via xllamacpp).

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
        raise InputValueError(f"temperature must be in [0, 2], got {temperature}")
    max_tokens = check_max_tokens(max_tokens, engine.n_ctx)
    seed = check_int("seed", seed, minimum=0)
    if not isinstance(cache, bool):
        raise InputTypeError(f"cache must be True or False, got {type(cache).__name__} {cache!r}")
    from lift_metrics.lm._dspy_lm import LocalLM

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


def check_max_tokens(max_tokens: Any, n_ctx: int) -> int:
    """Return ``max_tokens`` checked for the local LM: an int from 1 to ``n_ctx``.

    Raises
    ------
    InputTypeError, InputValueError
        For a non-integer, ``max_tokens < 1`` or ``max_tokens > n_ctx`` (the message names
        ``max_tokens`` and the context size).

    Examples
    --------
    >>> check_max_tokens(5000, 4096)
    Traceback (most recent call last):
    ...
    lift_metrics.errors.InputValueError: max_tokens must be <= n_ctx (4096), got 5000
    """
    tokens = check_int("max_tokens", max_tokens, minimum=1)
    if tokens > n_ctx:
        raise InputValueError(f"max_tokens must be <= n_ctx ({n_ctx}), got {tokens}")
    return tokens


_MODEL_STRING = re.compile(r"^(?P<provider>[A-Za-z0-9][A-Za-z0-9_.\-]*)/(?P<model>\S+)$")
# The options an [lm] table may set for the local model and for a remote model string.
LOCAL_OPTIONS = ("cache", "max_tokens", "n_ctx", "n_parallel", "n_threads", "seed", "temperature")
REMOTE_OPTIONS = (
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


def _remote_lm(
    text: str, options: dict[str, Any], api_base: Any, api_key: Any, cache: Any
) -> BaseLM:
    """Return a ``dspy.LM`` for the model string ``text``, its provider and options checked."""
    match = _MODEL_STRING.match(text)
    if match is None:
        raise InputValueError(
            "spec must be 'local', a path to a .gguf file or a DSPy model string "
            f"'provider/model' (e.g. 'openai/gpt-4o-mini'), got {text!r}"
        )
    provider = match["provider"]
    if not _known_provider(provider):
        raise InputValueError(
            f"unknown LM provider {provider!r} in {text!r}; use a DSPy/LiteLLM provider such as "
            "'openai', 'anthropic', 'ollama_chat' (for any OpenAI-compatible server: "
            "'openai/NAME' with api_base)"
        )
    if not isinstance(cache, bool):
        raise InputTypeError(f"cache must be True or False, got {type(cache).__name__} {cache!r}")
    for name in ("api_base", "api_key"):
        value = api_base if name == "api_base" else api_key
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InputValueError(f"{name} must be a non-empty string, got {value!r}")
    from dspy.clients.lm import LM

    extra: dict[str, Any] = {}
    if api_base is not None:
        extra["api_base"] = api_base
    if api_key is not None:
        extra["api_key"] = api_key
    try:
        return LM(text, cache=cache, **options, **extra)
    except (TypeError, ValueError) as exc:  # DSPy refuses an option's value: the message as is
        raise InputValueError(str(exc)) from exc


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
    lift_metrics.errors.InputValueError: spec must be 'local', a path to a .gguf file ... 'gpt4'
    """
    options: dict[str, Any] = {}
    if isinstance(spec, Mapping):
        options = dict(spec)
        spec = options.pop("model", None)
    if spec is not None and not isinstance(spec, str | os.PathLike):
        from dspy.clients.base_lm import BaseLM

        if isinstance(spec, BaseLM):
            if options or api_base is not None or api_key is not None:
                raise InputValueError("api_base/api_key/options cannot be applied to an LM object")
            return spec
        raise InputTypeError(
            f"spec must be None, 'local', a .gguf path, a model string, a mapping or a "
            f"dspy.LM, got {type(spec).__name__}"
        )
    text = None if spec is None else os.fspath(spec)
    is_local = text is None or text == "local" or text.lower().endswith(".gguf")
    if not is_local and isinstance(spec, os.PathLike):
        raise InputValueError(f"a model path must end in .gguf, got {text!r}")
    api_base = options.pop("api_base", api_base)
    api_key = options.pop("api_key", api_key)
    cache = options.pop("cache", cache)
    allowed = LOCAL_OPTIONS if is_local else REMOTE_OPTIONS
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        kind = "the local LM" if is_local else f"{text!r}"
        raise InputValueError(
            f"unknown LM option(s) {unknown} for {kind}; allowed: {sorted(allowed)}"
        )
    if is_local or text is None:
        if api_base is not None or api_key is not None:
            raise InputValueError(
                "api_base/api_key apply to a remote model string, not to the local LM "
                f"({text or 'local'!r})"
            )
        path = None if text in (None, "local") else text
        return local_lm(path, cache=cache, **options)
    return _remote_lm(text, options, api_base, api_key, cache)
