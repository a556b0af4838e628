"""The ``lift-metrics`` command.

Each subcommand lives next to the library code it drives and registers itself here through a
``register(subparsers)`` function; handlers only parse arguments, call the library and print.
A command's help and description are its handler's docstring
(:func:`lift_metrics._commands.add_command`).
Exit codes: 0 success, 1 a gate failed (a regression, a metric below its target), 2 bad input
(a :class:`~lift_metrics.errors.LiftMetricsError`, printed as one line). Any other exception is
a bug and keeps Python's traceback and exit code 1 (docs/errors.md).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

from lift_metrics.errors import CommandError as CommandError, LiftMetricsError

T = TypeVar("T")

# the name a checked option's value has in its check's message, replaced by the option's
_OPTION = "<OPTION>"

# modules with a ``register(subparsers)`` function, in the order their commands are listed
_COMMAND_MODULES: tuple[str, ...] = (
    "lift_metrics.stats._cli",
    "lift_metrics.code._cli",
    "lift_metrics.scoring._cli",
    "lift_metrics.validation._cli",
    "lift_metrics.optimizers._cli",
)


_EXAMPLES = """\
examples (all offline, on the data shipped in datasets/):
  lift-metrics report                              grades and uplift per tier
  lift-metrics ab datasets/examples/ab_runs.jsonl  A/B decision with bootstrap intervals
  lift-metrics compare --baseline datasets/examples/baseline_report.json \\
                       --current datasets/examples/current_report.json --fail-on-regression
  lift-metrics analyze lift_metrics/stats           static code metrics of a folder
  lift-metrics score samples.jsonl --tasks humaneval  pass@k of a generation file
  lift-metrics validate ir_quality code_quality    metric vs hand labels (exit 1 below 0.8)
  lift-metrics optimize optimizers/quick.toml      optimize the reference pipeline (local LM)

exit codes: 0 success, 1 a gate failed (regression, metric below target), 2 bad input
"""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``PROG: error: ...``) and exit code 2.

    argparse prints the usage before the error; the usage is one ``--help`` away, and the
    README promises one line for bad input.
    """

    def error(self, message: str) -> NoReturn:
        # "argument --k: <OPTION> must be >= 1" (a checked option) -> "--k must be >= 1"
        message = re.sub(rf"^argument ([^:]+): {_OPTION} ", r"\1 ", message)
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def checked(
    check: Callable[[str, Any], T], parse: Callable[[str], Any] = float
) -> Callable[[str], T]:
    """Return an argparse ``type`` that parses an option's text and checks it with ``check``.

    ``check(name, value)`` is the library's own check of the parameter (it raises a
    :class:`~lift_metrics.errors.LiftMetricsError`), so the command line allows exactly what
    the library does, and a bad value is refused while the arguments are parsed: before any
    file is read or written, as ``--k must be >= 1, got 0`` with exit code 2.

    Examples
    --------
    >>> from lift_metrics._checks import check_int
    >>> at_least_1 = checked(lambda name, value: check_int(name, value, minimum=1), int)
    >>> parser = _Parser(prog="demo")
    >>> _ = parser.add_argument("--n", type=at_least_1)
    >>> parser.parse_args(["--n", "3"]).n
    3
    """

    def convert(text: str) -> T:
        value = parse(text)  # a ValueError: argparse says "invalid float value: 'x'"
        try:
            return check(_OPTION, value)
        except LiftMetricsError as exc:  # the parser's error() puts the option's name in
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def at_least(minimum: int) -> Callable[[str], int]:
    """Return an argparse ``type`` for a whole number of at least ``minimum``.

    The value is checked as the library checks an integer parameter
    (:func:`~lift_metrics._checks.check_int`), through :func:`checked`.

    Examples
    --------
    >>> parser = _Parser(prog="demo")
    >>> _ = parser.add_argument("--folds", type=at_least(2))
    >>> parser.parse_args(["--folds", "5"]).folds
    5
    """
    from lift_metrics._checks import check_int

    return checked(lambda name, value: check_int(name, value, minimum=minimum), int)


def _os_error_line(exc: OSError) -> str:
    """One line for a file-system error that names the file and what was wrong."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    names = [name for name in (exc.filename, exc.filename2) if name is not None]
    where = " -> ".join(str(name) for name in names)
    return f"{where}: {reason}" if where else reason


def _name_the_option(parser: argparse.ArgumentParser, command: str, message: str) -> str:
    """``"n_resamples must be ..."`` -> ``"--n-resamples must be ..."``.

    A library check names its parameter; on the command line the user knows it by its option.
    """
    head = message.split(" ", 1)[0]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            subparser: argparse.ArgumentParser = action.choices[command]
            for option in subparser._actions:
                longs = [name for name in option.option_strings if name.startswith("--")]
                if option.dest == head and longs:
                    return longs[0] + message[len(head) :]
    return message


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand registered."""
    parser = _Parser(
        prog="lift-metrics",
        description=(
            "Metrics, statistics and validation for optimizing DSPy programs. "
            "Run 'lift-metrics COMMAND --help' for the options of one command."
        ),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=_version())
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in _COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def _version() -> str:
    from lift_metrics import __version__

    return f"lift-metrics {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used by the console script)."""
    code = _main(argv)
    server = sys.modules.get("lift_metrics.lm._server")  # loaded only if a local LM ran
    if server is not None:  # an exit that cannot wait for a local LM request keeps the code
        server.set_exit_code(code)
    return code


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    prefix = f"lift-metrics {args.command}: error:"
    try:
        code = args.handler(args)
    except BrokenPipeError:
        # the reader went away (``lift-metrics ... | head``): stop quietly, as Unix tools do;
        # stdout points at /dev/null so the interpreter's final flush cannot fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 128 + signal.SIGPIPE
    except (LiftMetricsError, FileNotFoundError) as exc:
        # bad input (see docs/errors.md); a plain ValueError or TypeError is a bug and keeps
        # its traceback
        print(f"{prefix} {_name_the_option(parser, args.command, str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # unreadable, too long, not a directory, read-only, disk full
        print(f"{prefix} {_os_error_line(exc)}", file=sys.stderr)
        return 2
    except OverflowError as exc:
        print(f"{prefix} a number is too large: {exc}", file=sys.stderr)
        return 2
    except RecursionError:
        print(f"{prefix} the input is nested too deeply to read", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"lift-metrics {args.command}: interrupted", file=sys.stderr)
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
