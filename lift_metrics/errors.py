"""The errors and warnings lift-metrics raises on purpose: every class is defined here.

One rule: bad input (an argument, a file, a config value, a missing optional piece the
message tells how to add) is raised as a :class:`LiftMetricsError`; any other exception is a
bug and keeps its traceback. ``lift-metrics`` prints a ``LiftMetricsError`` as one line with
exit code 2 and lets everything else through (see docs/errors.md).

The two input errors also subclass the builtins, so ``except ValueError`` and
``except TypeError`` in existing code keep working; the other errors subclass the builtin
their callers catch (``RuntimeError``, ``ImportError``) as well. The hierarchy::

    Exception
    ├── LiftMetricsError
    │   ├── CommandError
    │   ├── InputTypeError (TypeError)
    │   ├── InputValueError (ValueError)
    │   │   ├── IRParseError
    │   │   ├── JSONTextError
    │   │   ├── PromptTooLongError
    │   │   ├── RecordError (alias LabelFileError, SampleError)
    │   │   ├── TOMLTextError
    │   │   └── TooFewScoresError
    │   ├── RayUnavailableError (ImportError)
    │   ├── SandboxUnavailableError (RuntimeError)
    │   └── TrackingError (RuntimeError)
    └── GenerationCancelledError (RuntimeError): a cancelled LM call, not bad input
    BudgetExceeded (BaseException): a run's budget stop, not an error of DSPy's to catch
    RuntimeWarning
    ├── ConstantInputWarning
    └── SandboxIsolationWarning

Each class is also importable from the package that raises it (``lift_metrics.stats.RecordError``,
``lift_metrics.sandbox.SandboxUnavailableError``, ...); this module imports nothing else of
lift-metrics, so any module may import it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "BudgetExceeded",
    "CommandError",
    "ConstantInputWarning",
    "GenerationCancelledError",
    "IRParseError",
    "InputTypeError",
    "InputValueError",
    "JSONTextError",
    "LabelFileError",
    "LiftMetricsError",
    "PromptTooLongError",
    "RayUnavailableError",
    "RecordError",
    "SampleError",
    "SandboxIsolationWarning",
    "SandboxUnavailableError",
    "TOMLTextError",
    "TooFewScoresError",
    "TrackingError",
]

#: The fewest items with a score that a metric's validation needs (see TooFewScoresError).
MIN_SCORED_ITEMS = 3


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


class CommandError(LiftMetricsError):
    """A problem with the command's input; printed as one line, exit code 2.

    Any :class:`LiftMetricsError` is printed the same way; this one is for problems only the
    command line has (an option that conflicts with another).
    """


class JSONTextError(InputValueError):
    """Text that is not JSON as lift-metrics reads it; the message is the reason alone.

    The reader that catches it adds the file and line.
    """


class TOMLTextError(InputValueError):
    """Text that is not TOML as lift-metrics reads it; the message is the reason alone."""


class RecordError(InputValueError):
    """A record of an input file (or list) is malformed: a field missing, mistyped or wrong.

    One class for every record lift-metrics reads: run records and eval reports
    (:mod:`lift_metrics.stats`), tasks, labelled data (``LabelFileError``,
    :mod:`lift_metrics.validation`) and generation samples (``SampleError``,
    :mod:`lift_metrics.scoring`). The message names the file (or the record) and the line.
    """


#: The name :mod:`lift_metrics.validation` raises :class:`RecordError` under.
LabelFileError = RecordError
#: The name :mod:`lift_metrics.scoring` raises :class:`RecordError` under.
SampleError = RecordError


class IRParseError(InputValueError):
    """Raised by :func:`lift_metrics.ir.parse_ir` when text or data cannot be turned into an IR.

    The message says what was wrong (no JSON found, or which fields failed validation) and
    shows the start of the offending input.
    """


class PromptTooLongError(InputValueError):
    """A program's prompt does not fit the local model's context with room for its answer.

    Raised by an evaluation (:func:`lift_metrics.optimizers.evaluate_program`, ``lift-metrics
    evaluate``) at the first refused call, instead of scoring every such example 0. The
    message names the prompt's length and the limit, in tokens.
    """


class TooFewScoresError(InputValueError):
    """Fewer than 3 items could be scored, so the agreement cannot be computed.

    Attributes
    ----------
    metric : str
        Name of the metric.
    scored : int
        Number of items that have a score.
    missing : tuple of (str, str)
        ``(id, reason)`` for every item whose score is missing.
    """

    def __init__(self, metric: str, scored: int, missing: Sequence[tuple[str, str]]) -> None:
        self.metric = metric
        self.scored = scored
        self.missing = tuple((str(i), str(r)) for i, r in missing)
        if missing:
            first_id, first_reason = self.missing[0]
            why = f"; first missing item {first_id!r}: {first_reason}"
        else:
            why = ""
        if scored == 0 and missing:
            message = (
                f"{metric}: nothing could be scored: all {len(missing)} items are missing{why}"
            )
        else:
            message = (
                f"{metric}: need at least {MIN_SCORED_ITEMS} scored items to validate a metric, "
                f"got {scored}" + (f" ({len(missing)} missing{why})" if missing else "")
            )
        super().__init__(message)

    def __reduce__(self) -> tuple[type[TooFewScoresError], tuple[str, int, tuple[Any, ...]]]:
        """Pickle by the constructor's arguments (a process pool sends errors back)."""
        return (type(self), (self.metric, self.scored, self.missing))


class RayUnavailableError(LiftMetricsError, ImportError):
    """Ray is not installed; the message says which extra to install."""


class SandboxUnavailableError(LiftMetricsError, RuntimeError):
    """The requested isolation cannot be provided on this machine."""


class TrackingError(LiftMetricsError, RuntimeError):
    """Logging a finished run to MLflow failed; the run's own files are complete on disk."""


class GenerationCancelledError(RuntimeError):
    """An LM call stopped before its answer was complete.

    Its example timed out, or the process is shutting down (Ctrl-C, interpreter exit).
    """


class BudgetExceeded(BaseException):
    """Raised before an LM call that would go past a run's budget.

    A ``BaseException`` (like ``KeyboardInterrupt``) so that DSPy's ``except Exception``
    handlers let it through to the runner. ``partial`` may carry what the interrupted step had
    finished (an evaluation, for instance).
    """

    def __init__(self, message: str, *, partial: Any = None) -> None:
        super().__init__(message)
        self.partial = partial


class ConstantInputWarning(RuntimeWarning):
    """All scores (or all labels) are equal, so a correlation is undefined and reported as nan.

    The counterpart of :class:`scipy.stats.ConstantInputWarning`, raised by this package
    before scipy is called.
    """


class SandboxIsolationWarning(RuntimeWarning):
    """bwrap could not start, so the sandbox fell back to the weaker process isolation."""
