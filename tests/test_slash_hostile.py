"""Slash commands attacked: what a refused command leaves, text given back with a leading
slash, command folders linked out of the project, arguments that multiply, floods of
unusable files, descriptions longer than a line.

The real app under Pilot against the strict fake Gemini (the helpers are
``test_slash_commands``'s); the loader on real files in ``tmp_path``.
"""

from __future__ import annotations

from pathlib import Path

from google import genai
from helpers.ui_kit import build, settle
from test_slash_commands import notices, typed, user_command

from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.ui.main.prompt import Prompt


async def test_a_command_that_sends_nothing_keeps_what_was_typed(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    user_command("empty", "description: says nothing\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await typed(pilot, "/empty my long, careful paragraph")
        await pilot.press("enter")
        await settle(pilot, app)
        assert any("/empty sends nothing" in n for n in notices(app))
        assert app.query_one(Prompt).text == "/empty my long, careful paragraph"
        assert fake.generate_requests == []
