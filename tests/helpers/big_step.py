"""A turn whose one step makes many parallel calls, and what its call list draws."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from google import genai
from helpers.ui_kit import build, send, settle
from textual.pilot import Pilot

from koroku_tui.fake_gemini import Call, FakeGemini, call_reply, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.call_list import CallList


@asynccontextmanager
async def one_big_step(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, calls: int
) -> AsyncIterator[tuple[KorokuApp, Pilot[None]]]:
    """The app once a step of ``calls`` calls (ids ``call-N``, then "Done.") ran."""
    step = [Call("read_memory", {"date": f"{i:02d}-01-2026"}, f"call-{i}") for i in range(calls)]
    fake.add(call_reply(*step), text_reply("Done."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "go")
        await settle(pilot, app)
        yield app, pilot


def drawn(calls: CallList) -> list[str]:
    """Every line the list draws (those out of view too), as plain text."""
    return [calls.render_line(y).text.rstrip() for y in range(calls.size.height)]
