"""``async with``: initialize on the way in, close on the way out.

The ``Agent`` and the ``SessionManager`` are both used as the seed design
uses them (``await x.initialize()`` ... ``await x.close()``) and as async
context managers; this base class is the one place the two forms meet.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["OpenedWithAsync"]


class OpenedWithAsync:
    """Makes ``async with thing:`` call ``initialize()`` and, whatever happens, ``close()``."""

    async def initialize(self) -> None:
        """Open what the object needs; subclasses implement it."""
        raise NotImplementedError

    async def close(self) -> None:
        """Give back what ``initialize`` opened; subclasses implement it."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.initialize()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
