"""Two Escapes typed apart are not a double Escape because they were handled together.

Keys read behind a key still on its way wait their turn (``ui.key_order``)
and are then handled back to back. Escape twice (no turn running) opens the
rewind list when the second comes within ``DOUBLE_ESCAPE`` of the first: that
was judged by when they were handled, so two Escapes typed a second apart
behind a slow key opened the list, and the message typed next went to it
(its Enter rewinds). They are judged by when they were typed.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from google import genai
from helpers.slow_key import focus_a_slow_key
from helpers.ui_kit import build, seed_session, settle
from textual import events

from koroku_tui.ui.key_order import KeyOrder
from koroku_tui.ui.main.rewind import RewindScreen
from koroku_tui.ui.main.screen import DOUBLE_ESCAPE


async def after_escapes_behind_a_slow_key(
    client: genai.Client, tmp_path: Path, apart: float
) -> object:
    """The screen on top once two Escapes typed ``apart`` seconds apart, held behind a key
    that takes its time, have acted."""
    await seed_session(tmp_path, 2)
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        hangs = await focus_a_slow_key(pilot, app)
        typed = time.monotonic()
        keys = [events.Key("down", None), events.Key("escape", None), events.Key("escape", None)]
        keys[1].time, keys[2].time = typed, typed + apart
        for key in keys:
            key.set_sender(app)
            app.post_message(key)
        await asyncio.wait_for(hangs.reached.wait(), 10)  # the Escapes wait behind it
        hangs.release.set()
        await settle(pilot, app)
        return type(app.screen)


async def test_escapes_typed_apart_behind_a_slow_key_open_nothing(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(KeyOrder, "STUCK", 60.0)  # the slow key is waited for
    assert await after_escapes_behind_a_slow_key(client, tmp_path, DOUBLE_ESCAPE + 0.2) is not (
        RewindScreen
    )


async def test_a_double_escape_behind_a_slow_key_still_opens_the_rewind_list(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(KeyOrder, "STUCK", 60.0)
    assert await after_escapes_behind_a_slow_key(client, tmp_path, 0.1) is RewindScreen
