"""The errors lift-metrics raises on purpose.

One rule: bad input (an argument, a file, a config value, a missing optional piece the
message tells how to add) is raised as a :class:`LiftMetricsError`; any other exception is a
bug and keeps its traceback. ``lift-metrics`` prints a ``LiftMetricsError`` as one line with
exit code 2 and lets everything else through (see docs/errors.md).

The two input errors also subclass the builtins, so ``except ValueError`` and
``except TypeError`` in existing code keep working.
"""

from __future__ import annotations

__all__ = ["InputTypeError", "InputValueError", "LiftMetricsError"]


class LiftMetricsError(Exception):
    """Base of every error lift-metrics raises on purpose; its message is one line for the user.

    Catch it to handle every problem with the input at once; anything else that escapes
    lift-metrics is a bug.
    """


class InputValueError(LiftMetricsError, ValueError):
    """An argument, a file's content or a config value has the right type but a wrong value.

    The message names the parameter (or file, or config key), what is allowed and what arrived.
    """


class InputTypeError(LiftMetricsError, TypeError):
    """An argument (or a value read from a file) has the wrong type.

    The message names the parameter, the type it needs and the type that arrived.
    """
