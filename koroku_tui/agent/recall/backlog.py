"""How long ``--print``'s searches wait for the history's vectors: ``PRINT_WAIT`` in all.

``--print`` has one answer to give, so its searches wait for the indexing
to reach every row, but not for ever: MiniLM's meaning pass embeds ~90-140
messages a second, so a first ``--print`` over 100,000 messages would wait
some 17 minutes (both cores) for its first search. Past ``PRINT_WAIT`` the
search goes on with the vectors stored so far (words, WordLlama and
MiniLM's rows so far, fused), the pass keeps going for the rest of the
turn, and what it stored is kept: the next run carries on from there.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

__all__ = ["PRINT_WAIT", "BacklogWait", "Late"]

PRINT_WAIT = 120.0
"""Seconds ``--print``'s searches wait in all for the indexing (every pass, every search of
the turn together, from the first search): 10,000-17,000 messages of MiniLM on two cores,
a year of history or more, and two minutes is about as long as a script's user waits without
giving up on it."""

Late = Callable[[int], None]
"""Told once how many rows still lack a vector when the searches stop waiting for them."""


class BacklogWait:
    """One deadline for every side's wait (``until``), set by the first search.

    ``left`` says how many rows the last pass still lacks (asked once, when the
    deadline passes with a backlog); ``on_late`` is told that number.
    """

    def __init__(
        self,
        left: Callable[[], Awaitable[int]],
        on_late: Late | None = None,
        seconds: float | None = None,
    ) -> None:
        self._left = left
        self._on_late = on_late
        self._seconds = PRINT_WAIT if seconds is None else seconds
        self._deadline: float | None = None
        self.late = False
        """Whether a search went on without every row's vector."""
        self.asked = asyncio.Event()
        """Set by the first search: ``--print``'s meaning pass waits for it (a run that
        never searches never reads MiniLM's model: ~1.5 s of CPU and ~400 MB)."""

    def seconds_left(self) -> float:
        """Seconds until the deadline (set now if no search set it yet), 0 past it."""
        if self._deadline is None:
            self._deadline = time.monotonic() + self._seconds
        return max(0.0, self._deadline - time.monotonic())

    async def until(self, idle: asyncio.Event) -> None:
        """Wait for ``idle`` (a pass has no row left), until the deadline at most."""
        self.asked.set()
        if idle.is_set():
            return
        try:
            await asyncio.wait_for(idle.wait(), self.seconds_left())
        except TimeoutError:
            if self.late:
                return
            self.late = True
            left = await self._left()
            if self._on_late is not None and left > 0:
                self._on_late(left)
