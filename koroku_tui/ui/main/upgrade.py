"""``UpgradeScreen``: what the first start after an upgrade shows while the database migrates.

A migration that rebuilds the search index can take a while on a long
history. The App opens the store after this screen's first frame, in a
worker (``KorokuApp``); the migration thread reports ``(done, total)``
through ``progress``, which only posts a message (it runs on another
thread). Nothing shows for the first second: a quick migration should look
like any other start, not flash a progress line.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

__all__ = ["UpgradeScreen", "progress_line"]

UPDATING = "Updating the search index…"


def progress_line(done: int, total: int) -> str:
    """``Updating the search index… 45%`` (no figure before the first report)."""
    if total <= 0:
        return UPDATING
    percent = min(100, max(0, done * 100 // total))
    return f"{UPDATING} {percent}%"


class UpgradeScreen(Screen[None]):
    """A single line, centred, that follows the migration; blank for its first second."""

    REVEAL_AFTER: ClassVar[float] = 1.0
    """Seconds of migration before the line shows."""

    @dataclass
    class Progress(Message):
        """The migration thread's latest ``(done, total)``."""

        done: int
        total: int

    @dataclass
    class Drawn(Message):
        """The first frame is on screen: the App may start migrating (it bubbles up to it)."""

        screen: UpgradeScreen

    def __init__(self) -> None:
        super().__init__()
        self.revealed = asyncio.Event()
        """Set when the line shows (the migration outlasted ``REVEAL_AFTER``); tests wait on it."""
        self._last: tuple[int, int] = (0, 0)
        self._sent_percent = -1
        self._reveal_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Middle(), Center():
            yield Static(UPDATING, id="upgrade-progress")

    def on_mount(self) -> None:
        self._reveal_timer = self.set_timer(self.REVEAL_AFTER, self._reveal)
        self.call_after_refresh(lambda: self.post_message(self.Drawn(self)))

    def finish(self) -> None:
        """The migration ended: the line must not show later (this screen stays under the main)."""
        if self._reveal_timer is not None:
            self._reveal_timer.stop()

    def _reveal(self) -> None:
        self.query_one("#upgrade-progress", Static).add_class("-shown")
        self.revealed.set()

    def progress(self, done: int, total: int) -> None:
        """Called from the migration thread: posts a message when the percentage moves."""
        percent = done * 100 // total if total > 0 else -1
        if percent != self._sent_percent:
            self._sent_percent = percent
            self.post_message(self.Progress(done, total))

    def on_upgrade_screen_progress(self, message: Progress) -> None:
        self._last = (message.done, message.total)
        self.query_one("#upgrade-progress", Static).update(progress_line(*self._last))

    @property
    def line(self) -> str:
        """What the screen says (or would say, before it shows)."""
        return progress_line(*self._last)
