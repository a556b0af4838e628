"""Subcommands of ``lift-metrics`` whose text is their handler's docstring.

Each ``*_cli.py`` module beside the library code adds its commands with :func:`add_command`.
This module sits below them and below :mod:`lift_metrics.cli` (which loads them), so a command
module never imports the entry point to describe itself.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable

Handler = Callable[[argparse.Namespace], int]


def add_command(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], name: str, handler: Handler
) -> argparse.ArgumentParser:
    """Add the command ``name``, run by ``handler`` and described by its docstring.

    As with click, the handler's docstring is the command's text. Its first paragraph is the
    one line listed by ``lift-metrics --help``, written as argparse lists a help text (first
    letter in lower case, no final period); the paragraphs after it are the description that
    ``lift-metrics NAME --help`` prints.

    Parameters
    ----------
    subparsers
        The subparsers of the ``lift-metrics`` parser.
    name
        The command's name on the command line.
    handler
        Called with the parsed arguments; returns the exit code.

    Returns
    -------
    argparse.ArgumentParser
        The command's parser, to add its arguments to.

    Examples
    --------
    >>> def hello(args):
    ...     '''Say hello.
    ...
    ...     Print a greeting
    ...     and exit with code 0.
    ...     '''
    ...     return 0
    >>> parser = argparse.ArgumentParser(prog="demo")
    >>> commands = parser.add_subparsers()
    >>> command = add_command(commands, "hello", hello)
    >>> commands._choices_actions[0].help
    'say hello'
    >>> command.description
    'Print a greeting and exit with code 0.'
    >>> parser.parse_args(["hello"]).handler is hello
    True
    """
    summary, _, details = (inspect.getdoc(handler) or "").partition("\n\n")
    summary = " ".join(summary.split()).removesuffix(".")
    parser = subparsers.add_parser(
        name,
        help=summary[:1].lower() + summary[1:],
        description=" ".join(details.split()) or None,
    )
    parser.set_defaults(handler=handler)
    return parser
