"""A focused widget whose key handler hangs, for tests of keys held behind a slow key."""

from __future__ import annotations

import asyncio
from typing import Any

from helpers.ui_kit import settle
from textual import events
from textual.pilot import Pilot
from textual.widgets import Static

from koroku_tui.ui.app import KorokuApp


class Hangs(Static, can_focus=True):
    """A widget whose key handler returns only once released: the key it gets never settles."""

    def __init__(self) -> None:
        super().__init__("hangs")
        self.reached = asyncio.Event()
        self.release = asyncio.Event()

    async def on_key(self, event: events.Key) -> None:
        self.reached.set()
        await self.release.wait()


async def focus_a_slow_key(pilot: Pilot[Any], app: KorokuApp) -> Hangs:
    """Mount a ``Hangs`` on the main screen, focus it and settle: the next key it gets hangs."""
    hangs = Hangs()
    await app.main.mount(hangs)
    hangs.focus()
    await settle(pilot, app)
    return hangs
