"""The memory pane in the running app: what the user does there is what Gemini is told next.

The real app on a home in tmp_path, the strict fake Gemini recording each
request's system instruction, and Pilot pressing the keys.
"""

from __future__ import annotations

from pathlib import Path

from google import genai
from helpers.agent_kit import sent_instructions
from helpers.history_kit import move_to
from helpers.ui_kit import build, send, settle
from test_ui_compaction_notices import LONG, recorded, turns
from textual.pilot import Pilot

from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.history import ConfirmDialog, HistoryScreen

VEGETARIAN = "The user is vegetarian."
FACTS = "Summary of the weather talk.\n\nLasting facts:\n- The user lives in Lyon.\n- Has a cat."


async def memory_pane(pilot: Pilot[None], app: KorokuApp) -> HistoryScreen:
    """ctrl+r, then ctrl+y: the history screen on the memories."""
    await pilot.press("ctrl+r")
    await settle(pilot, app)
    await pilot.press("ctrl+y")
    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, HistoryScreen) and screen.showing_memories
    return screen


async def back_to_main(pilot: Pilot[None], app: KorokuApp) -> None:
    await pilot.press("escape", "escape")  # out of the memories, out of the history
    await settle(pilot, app)
    assert not isinstance(app.screen, HistoryScreen)


async def test_a_memory_deleted_in_the_pane_leaves_every_later_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(
        call_reply(("remember", {"text": VEGETARIAN})),
        text_reply("Noted."),
        text_reply("Lentils?"),
        text_reply("Anything."),
    )
    # No quiet time for the confirmation (its own tests have one).
    app = build(tmp_path, client, settings=Settings(home=tmp_path, approval_grace=0))
    async with app.run_test(size=(120, 40)) as pilot:
        await turns(pilot, app, "Remember that I'm vegetarian.", "What should I cook?")
        assert f"[1] {VEGETARIAN}" in sent_instructions(fake)[2]
        screen = await memory_pane(pilot, app)
        await move_to(pilot, screen.memory_list, 0)
        await pilot.press("d")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await settle(pilot, app)
        assert screen.memory_list.memories == []
        await back_to_main(pilot, app)
        await send(pilot, app, "And tomorrow?")
        await settle(pilot, app)
    assert VEGETARIAN not in sent_instructions(fake)[3]


async def test_suggestions_from_a_compaction_wait_in_the_pane_until_accepted(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(
        text_reply(LONG * 10),
        text_reply("Hi again."),
        text_reply(FACTS),  # the summary, with its lasting facts
        text_reply("Sunny."),
        text_reply("Still sunny."),
    )
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await turns(pilot, app, "hello", "hello again")
        notices = recorded(app)
        await pilot.press("ctrl+o")
        await settle(pilot, app)
        assert notices[0].endswith(
            ". 2 suggested facts wait in the history's memory pane, to accept or delete."
        )
        await send(pilot, app, "Weather?")
        await settle(pilot, app)
        assert "Lyon" not in sent_instructions(fake)[3]  # a suggestion is never sent

        screen = await memory_pane(pilot, app)
        listed = screen.memory_list.memories
        assert [(m.text, m.state) for m in listed] == [
            ("Has a cat.", "suggestion"),
            ("The user lives in Lyon.", "suggestion"),
        ]
        await move_to(pilot, screen.memory_list, 1)
        await pilot.press("a")
        await settle(pilot, app)
        await back_to_main(pilot, app)
        await send(pilot, app, "And tomorrow?")
        await settle(pilot, app)
    said = sent_instructions(fake)[4]
    assert f"[{listed[1].id}] The user lives in Lyon." in said
    assert "Has a cat." not in said
