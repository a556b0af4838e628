"""A prompt must fit the local model's context: counted before it is sent, refused when too long.

The local engine counts a request's prompt with the model's own chat template and tokenizer
(llama.cpp's ``/apply-template`` and ``/tokenize``, on the loopback port its server already
listens on) before the request is sent. A prompt that leaves no room for the answer
(``prompt tokens + max_tokens > n_ctx``, as OpenAI's API requires too) is refused at once with
a line naming the limit and the length, instead of being read for seconds and cut short.
The refusal reaches DSPy as a context-length error (DSPy's ``ContextWindowExceededError``,
which programs such as ``dspy.ReAct`` handle); an evaluation, which would otherwise score the
call's example 0 and go on, collects refusals with :func:`refused_prompts` and stops with
:class:`PromptTooLongError`.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import Iterator, Sequence
from typing import Any

from lift_metrics.errors import PromptTooLongError as PromptTooLongError

__all__ = ["PromptTooLongError", "prompt_too_long", "refused_prompts"]

# llama.cpp tokenizes a few megabytes a second; an unanswered count skips the check (llama.cpp
# itself still refuses a prompt longer than its context, at once).
_COUNT_TIMEOUT_S = 60.0

_REFUSALS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "lift_metrics_refused_prompts", default=None
)


def prompt_too_long(prompt_tokens: int, max_tokens: int | None, n_ctx: int) -> str | None:
    """Return why a prompt does not fit the context, or ``None`` when it fits.

    Parameters
    ----------
    prompt_tokens : int
        Tokens of the prompt, chat template included.
    max_tokens : int or None
        Most tokens of the answer; ``None`` counts one token (an answer needs at least one).
    n_ctx : int
        The context window of one request, in tokens.

    Examples
    --------
    >>> prompt_too_long(3000, 512, 4096) is None
    True
    >>> print(prompt_too_long(3800, 512, 4096))
    the prompt is 3800 tokens and max_tokens 512, 4312 in all, over the local model's context ...
    """
    answer = 1 if max_tokens is None else max_tokens
    if prompt_tokens + answer <= n_ctx:
        return None
    return (
        f"the prompt is {prompt_tokens} tokens and max_tokens {answer}, "
        f"{prompt_tokens + answer} in all, over the local model's context of {n_ctx} tokens "
        "(n_ctx): shorten the prompt (instructions, demonstrations, inputs), lower max_tokens "
        "or raise n_ctx"
    )


@contextlib.contextmanager
def refused_prompts() -> Iterator[list[str]]:
    """Collect the messages of local-LM calls in the body refused for a too-long prompt.

    A refused call raises inside DSPy, where a program may catch it and go on (the reference
    pipeline scores such an answer 0); the list lets the caller see the refusal anyway.

    Examples
    --------
    >>> with refused_prompts() as refusals:
    ...     note_refusal("the prompt is too long")
    >>> refusals
    ['the prompt is too long']
    """
    refusals: list[str] = []
    token = _REFUSALS.set(refusals)
    try:
        yield refusals
    finally:
        _REFUSALS.reset(token)


def note_refusal(message: str) -> None:
    """Record a refused call in the :func:`refused_prompts` scope around it, if any."""
    refusals = _REFUSALS.get()
    if refusals is not None:
        refusals.append(message)


def count_prompt_tokens(
    address: str, api_key: str, messages: Sequence[dict[str, Any]]
) -> int | None:
    """Tokens of ``messages`` under the model's chat template, or ``None`` when not counted.

    Asks the llama.cpp server on ``address`` (the loopback port of the in-process server,
    never through a proxy) to apply its chat template and tokenize the result.
    """
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def post(path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            address + path,
            data=json.dumps(body).encode("utf-8"),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {api_key}"},
        )
        with opener.open(request, timeout=_COUNT_TIMEOUT_S) as reply:
            return json.loads(reply.read())

    try:
        prompt = post("/apply-template", {"messages": list(messages)})["prompt"]
        tokens = post("/tokenize", {"content": prompt, "add_special": True})["tokens"]
    except (OSError, urllib.error.URLError, ValueError, KeyError, TypeError):
        return None
    return len(tokens) if isinstance(tokens, list) else None
