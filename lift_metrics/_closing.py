"""A base for objects that hold resources until ``close()``: ``with obj:`` closes them."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class ClosesOnExit:
    """``with obj: ...`` returns ``obj`` and calls ``obj.close()`` when the block ends.

    Subclasses define :meth:`close` (idempotent: it may also be called directly).
    """

    def close(self) -> None:
        """Release what the object holds."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
