"""Stopping LM work that runs on another thread: a per-task cancel flag and a process-wide one.

Python cannot kill a thread, so work that must stop early has to be asked to. The evaluation
loop gives each example a :class:`threading.Event` and runs the example inside
:func:`cancel_scope`; an LM engine that can stop mid-generation (the local llama.cpp engine)
polls :func:`cancel_requested` between tokens and raises :class:`GenerationCancelledError`. The
process-wide flag (:func:`request_shutdown`) stops every generation at once, for Ctrl-C and
interpreter exit.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator

from lift_metrics.errors import GenerationCancelledError, InputTypeError

__all__ = [
    "GenerationCancelledError",
    "cancel_checker",
    "cancel_requested",
    "cancel_scope",
    "request_shutdown",
    "shutdown_requested",
]

_SCOPE: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "lift_metrics_cancel_scope", default=None
)
_SHUTDOWN = threading.Event()


@contextlib.contextmanager
def cancel_scope(event: threading.Event) -> Iterator[threading.Event]:
    """Run the body so that setting ``event`` stops its LM generations.

    Parameters
    ----------
    event : threading.Event
        The flag to watch; the evaluation loop sets it when the example times out.

    Examples
    --------
    >>> flag = threading.Event()
    >>> with cancel_scope(flag):
    ...     before = cancel_requested()
    ...     flag.set()
    ...     after = cancel_requested()
    >>> before, after, cancel_requested()
    (False, True, False)
    """
    if not isinstance(event, threading.Event):
        raise InputTypeError(f"event must be a threading.Event, got {type(event).__name__}")
    token = _SCOPE.set(event)
    try:
        yield event
    finally:
        _SCOPE.reset(token)


def cancel_requested() -> bool:
    """Whether the current task's cancel flag or the process-wide shutdown flag is set."""
    event = _SCOPE.get()
    return _SHUTDOWN.is_set() or (event is not None and event.is_set())


def cancel_checker() -> Callable[[], bool]:
    """:func:`cancel_requested` bound to the current task, callable from any thread.

    Native code may run a callback on a thread of its own, where the caller's context
    variables are not set; the returned function checks the flag captured here.
    """
    event = _SCOPE.get()
    if event is None:
        return _SHUTDOWN.is_set
    return lambda: _SHUTDOWN.is_set() or event.is_set()


def request_shutdown() -> None:
    """Stop every LM generation in this process and refuse new ones (cannot be undone)."""
    _SHUTDOWN.set()


def shutdown_requested() -> bool:
    """Whether :func:`request_shutdown` was called."""
    return _SHUTDOWN.is_set()
