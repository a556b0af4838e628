"""The one progress display of the command line: a rich progress bar.

The evaluation of a program (one step per example and run) and ``lift-metrics score`` (the
count of scored samples, reported by the scoring loop) both show it; rich loads when a bar
starts. On a terminal the bar redraws in place; elsewhere (a log file, a pipe) rich prints it
once, when it stops.
"""

from __future__ import annotations

import threading
from typing import Any


class ProgressBar:
    """A progress bar: description, bar, done/total, elapsed and remaining time.

    Use it as a context manager. :meth:`update` sets the count and the total (a loop that
    knows its count), :meth:`advance` adds one (threads may call it at once). The bar shows
    from the start when ``total`` is known (> 0), else from the first count; a disabled bar
    only counts.

    Parameters
    ----------
    description : str
        The text before the bar.
    total : int
        Steps to do; :meth:`update` may change it.
    enabled : bool, default True
        False: nothing is shown.
    stderr : bool, default True
        Show the bar on stderr (a command whose stdout is its result), else on stdout (a
        command that reports on the terminal).

    Examples
    --------
    >>> with ProgressBar("scored", 3, enabled=False) as bar:
    ...     bar.advance()
    ...     bar.update(2, 3)
    >>> bar.done, bar.total
    (2, 3)
    """

    def __init__(
        self, description: str, total: int, *, enabled: bool = True, stderr: bool = True
    ) -> None:
        self.description = description
        self.stderr = stderr
        self.total = total
        self.enabled = enabled
        self.done = 0
        self._lock = threading.Lock()
        self._bar: Any = None
        self._task: Any = None
        self._started = False

    def __enter__(self) -> ProgressBar:
        if self.total > 0:
            self._show()
        return self

    def _show(self) -> None:
        """Start the bar once, when enabled.

        At the start when the total is known, else at the first count, so that a run refused
        before it starts shows none.
        """
        if not self.enabled or self._started:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=self.stderr),
            transient=False,
        )
        self._bar.start()
        self._task = self._bar.add_task(self.description, total=self.total)
        self._started = True

    def update(self, done: int, total: int) -> None:
        """Set the count to ``done`` of ``total``."""
        with self._lock:
            self.done, self.total = done, total
            self._show()
            if self._bar is not None:
                self._bar.update(self._task, completed=done, total=total)

    def advance(self) -> None:
        """Add one step."""
        with self._lock:
            self.done += 1
            self._show()
            if self._bar is not None:
                self._bar.update(self._task, completed=self.done)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
