"""The ``lift-metrics`` command.

Each subcommand lives next to the library code it drives and registers itself here through a
``register(subparsers)`` function; handlers only parse arguments, call the library and print.
Exit codes: 0 success, 1 a gate failed (a regression, a metric below its target), 2 bad input.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# modules with a ``register(subparsers)`` function, in the order their commands are listed
_COMMAND_MODULES: tuple[str, ...] = (
    "lift_metrics.stats._cli",
    "lift_metrics.code._cli",
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
  lift-metrics validate ir_quality code_quality    metric vs hand labels (exit 1 below 0.8)
  lift-metrics optimize optimizers/quick.toml      optimize the reference pipeline (local LM)

exit codes: 0 success, 1 a gate failed (regression, metric below target), 2 bad input
"""


class CommandError(Exception):
    """A problem with the command's input; printed as one line, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
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
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.handler(args)
    except (CommandError, ValueError, TypeError, FileNotFoundError) as exc:
        print(f"lift-metrics {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"lift-metrics {args.command}: interrupted", file=sys.stderr)
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
