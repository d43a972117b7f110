"""Typed text is never lost: keys typed away from the prompt land in it, and focus comes back.

After a click on a fold, on the transcript or in the sidebar, printable keys
go to the prompt (as in Claude Code and Gemini CLI), while the keys the
focused widget binds (Enter/space on a fold, arrows in the sidebar) keep
working. ctrl+l and closing any dialog put the cursor back in the prompt.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import build, send, settle, wait_for_approval, wait_until
from textual import events
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.history import HistoryScreen
from koroku_tui.ui.main.blocks import ThoughtBlock
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.rewind import RewindScreen
from koroku_tui.ui.main.sidebar import ToolSidebar


async def with_a_fold(pilot: Pilot[None], app: KorokuApp, fake: FakeGemini) -> ThoughtBlock:
    """One turn whose answer came after a thought: its "Thoughts" fold is in the transcript."""
    fake.add(text_reply("Forty-two.", thought="Let me count."))
    await settle(pilot, app)
    await send(pilot, app, "the answer?")
    await settle(pilot, app)
    return app.query_one(ThoughtBlock)


async def test_typing_after_clicking_a_fold_goes_to_the_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        fold = await with_a_fold(pilot, app, fake)
        await pilot.click(ThoughtBlock)
        assert fold.opened and app.focused is fold
        await pilot.press(*"hello")
        prompt = app.query_one(Prompt)
        assert prompt.text == "hello"
        # mypy keeps app.focused narrowed to the fold across the presses that move the focus.
        assert app.focused is prompt  # type: ignore[comparison-overlap]
        await pilot.press("space", "w")  # a space typed in the prompt is text, not a fold key
        assert prompt.text == "hello w"
        assert fold.opened


async def test_keys_typed_fast_after_a_click_reach_the_prompt_in_order(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Keys read one by one (the browser's, each in its own message): none overtakes another."""
    typed = "fox jumps over the lazy dog"
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        fold = await with_a_fold(pilot, app, fake)
        prompt = app.query_one(Prompt)
        for turns_apart in (1, 2, 3, 5, 8, 13):  # how far the event loop gets between two keys
            await pilot.click(ThoughtBlock)
            assert app.focused is fold
            for character in typed:
                app.post_message(events.Key("space" if character == " " else character, character))
                for _ in range(turns_apart):
                    await asyncio.sleep(0)
            await wait_until(pilot, lambda: len(prompt.text) == len(typed), "every key typed")
            assert prompt.text == typed, turns_apart
            prompt.clear()


async def test_a_paste_after_clicking_a_fold_goes_to_the_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await with_a_fold(pilot, app, fake)
        await pilot.click(ThoughtBlock)
        app.post_message(events.Paste("pasted\ntwo lines"))  # as a terminal's bracketed paste
        await pilot.pause()
        prompt = app.query_one(Prompt)
        assert prompt.text == "pasted\ntwo lines" and app.focused is prompt
        app.post_message(events.Paste(" and more"))  # in the prompt: pasted once, not twice
        await pilot.pause()
        assert prompt.text == "pasted\ntwo lines and more"


async def test_the_fold_keeps_its_own_keys(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        fold = await with_a_fold(pilot, app, fake)
        fold.focus()
        await pilot.pause()
        await pilot.press("space")
        assert fold.opened and app.focused is fold  # space opened it, typed nothing
        await pilot.press("enter")
        assert not fold.opened
        assert app.query_one(Prompt).text == ""


async def test_the_sidebar_keeps_its_arrows_and_letters_go_to_the_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(
        call_reply(("list_directory", {"path": "."}), ("list_directory", {"path": "."})),
        text_reply("Two looks."),
    )
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "look twice")
        await settle(pilot, app)
        table = app.query_one(ToolSidebar).query_one(DataTable)
        table.focus()
        await pilot.pause()
        before = table.cursor_row  # on the newest call: the sidebar follows it
        await pilot.press("up")
        assert table.cursor_row == before - 1 and app.focused is table
        await pilot.press("o", "k")
        assert app.query_one(Prompt).text == "ok"
        # mypy keeps app.focused narrowed to the table across the presses that move the focus.
        assert app.focused is app.main.query_one(Prompt)  # type: ignore[comparison-overlap]


async def test_ctrl_l_puts_the_cursor_back_in_the_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await with_a_fold(pilot, app, fake)
        await pilot.click(ThoughtBlock)
        await pilot.press("ctrl+l")
        await settle(pilot, app)
        assert app.focused is app.main.query_one(Prompt)
        await pilot.press("ctrl+j")  # a key the prompt alone takes: it has the focus
        await pilot.press(*"hi")
        assert app.query_one(Prompt).text == "\nhi"


async def test_closing_the_history_screen_focuses_the_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await with_a_fold(pilot, app, fake)
        app.query_one(ThoughtBlock).focus()
        await pilot.pause()
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen), "history opening")
        await pilot.pause()
        app.screen.dismiss(None)  # however it closes (Escape, or its own keys)
        await settle(pilot, app)
        assert app.focused is app.main.query_one(Prompt)


@pytest.mark.parametrize(
    ("key", "dialog"),
    [("ctrl+g", RewindScreen), ("ctrl+p", CommandPalette)],
    ids=["rewind", "palette"],
)
async def test_closing_the_rewind_list_or_the_palette_focuses_the_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, key: str, dialog: type[Screen[Any]]
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await with_a_fold(pilot, app, fake)
        app.query_one(ThoughtBlock).focus()
        await pilot.pause()
        await pilot.press(key)
        await wait_until(pilot, lambda: isinstance(app.screen, dialog), f"{key} opening")
        await pilot.pause()
        await pilot.press("escape")
        await settle(pilot, app)
        assert app.focused is app.main.query_one(Prompt)


async def test_answering_the_approval_dialog_focuses_the_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await with_a_fold(pilot, app, fake)
        fake.add(call_reply(("run_command", {"command": "echo hi"})), text_reply("Done."))
        await send(pilot, app, "run it")
        app.main.query_one(ThoughtBlock).focus()  # where the cursor was as the dialog opened
        await wait_for_approval(pilot, app)
        await pilot.press("n")
        await settle(pilot, app)
        assert app.focused is app.main.query_one(Prompt)
