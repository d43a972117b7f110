"""Keys before the answer: while a key typed is on its way to the screen, the stream waits.

A fast stream shares the event loop with the keys (it lets others run every
``agent.wire.request.LOOP_SHARE``), but a key goes through several turns of
the loop before it is drawn: read, handed to the App, to the prompt, the
prompt's change, the screen's next frame. Each turn waited for a share of
the stream: keys typed during a reply of 20,000 one-character chunks showed
after ~100 ms, and more on a busy machine (issue 22, item 21).

So the App tells :class:`InputFirst` of each key it reads, and of the frame
drawn once it handled it; the hooks' feed (``ui.main.bridge``) hands the
stream ``wait()`` at each piece of text, and the stream reads on once the
keys typed are drawn, or after :data:`KEY_FIRST_WAIT` at most (a key held
behind a long job must not stop the answer).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from contextlib import suppress

__all__ = ["KEY_FIRST_WAIT", "InputFirst"]

KEY_FIRST_WAIT = 0.1
"""Seconds at most a key typed holds the stream back (drawn sooner, it goes on sooner)."""


class InputFirst:
    """The keys typed and not drawn yet; what the stream waits on while there are some."""

    def __init__(self) -> None:
        self._keys: set[object] = set()
        self._drawn = asyncio.Event()
        self._drawn.set()

    def typed(self, key: object) -> None:
        """``key`` was read from the terminal: the stream waits until it is drawn."""
        self._keys.add(key)
        self._drawn.clear()

    def drawn(self, key: object) -> None:
        """A frame was drawn after ``key`` was handled (safe to call twice)."""
        self._keys.discard(key)
        if not self._keys:
            self._drawn.set()

    def wait(self) -> Awaitable[None] | None:
        """What the stream awaits before it reads on (``None``: no key is on its way)."""
        return None if self._drawn.is_set() else self._until_drawn()

    async def _until_drawn(self) -> None:
        with suppress(TimeoutError):
            await asyncio.wait_for(self._drawn.wait(), KEY_FIRST_WAIT)
        if not self._drawn.is_set():  # a key held up (behind a job): the stream goes on
            self._keys.clear()
            self._drawn.set()
