"""Scrolling from the prompt: PageUp/PageDown move the transcript, ctrl+end goes to the newest.

The prompt keeps the focus (and what is typed in it) throughout. Paging
works as the wheel does: PageUp at the top loads the page above, PageDown
at the bottom the page below; ctrl+end (End in an empty prompt) from far
back mounts the newest page again, as sending a message does: ctrl+b's
way back down.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.paging_kit import mounted, turn, use_small_pages
from helpers.ui_kit import build, settle
from textual.pilot import Pilot

from koroku_tui.config.settings import Settings
from koroku_tui.store import SessionManager
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.transcript import Transcript


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    use_small_pages(monkeypatch)


async def seed(tmp_path: Path, turns: int) -> None:
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        await store.add_messages([event for n in range(turns) for event in turn(n)])


async def press(pilot: Pilot[None], app: KorokuApp, key: str) -> None:
    await pilot.press(key)
    await pilot.wait_for_scheduled_animations()
    await settle(pilot, app)


def at_bottom(transcript: Transcript) -> bool:
    return transcript.scroll_y >= transcript.max_scroll_y


async def test_pageup_and_pagedown_in_the_prompt_scroll_the_transcript(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed(tmp_path, 12)  # one page: nothing loads above
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 20)) as pilot:
        await settle(pilot, app)
        prompt, transcript = app.query_one(Prompt), app.query_one(Transcript)
        prompt.text = "a draft\nof two lines"
        prompt.move_cursor((1, 3))
        await settle(pilot, app)  # the prompt grew a line
        assert at_bottom(transcript) and transcript.max_scroll_y > 0
        bottom = transcript.scroll_y
        await press(pilot, app, "pageup")
        page = transcript.scrollable_content_region.height
        assert transcript.scroll_y == bottom - page
        await press(pilot, app, "pageup")
        assert transcript.scroll_y == bottom - 2 * page
        await press(pilot, app, "pagedown")
        assert transcript.scroll_y == bottom - page
        assert app.focused is prompt and prompt.cursor_location == (1, 3)
        assert prompt.text == "a draft\nof two lines"
        await press(pilot, app, "pagedown")
        assert at_bottom(transcript) and transcript.is_anchored  # following new output again


async def test_pageup_pages_through_the_whole_session_and_pagedown_back(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed(tmp_path, 60)  # 120 messages: five pages of 25
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        for _ in range(200):
            if mounted(app)[0] == "question 0" and app.query_one(Transcript).scroll_y == 0:
                break
            await press(pilot, app, "pageup")
        else:
            raise AssertionError("PageUp never reached the first message")
        assert "answer 59" not in mounted(app)  # the newest pages were put away
        transcript = app.query_one(Transcript)
        for _ in range(200):
            if not transcript.edges.away and at_bottom(transcript):
                break
            await press(pilot, app, "pagedown")
        else:
            raise AssertionError("PageDown never came back to the newest message")
        assert mounted(app)[-1] == "answer 59"


@pytest.mark.parametrize("key", ["ctrl+end", "end"])
async def test_a_key_in_the_prompt_goes_to_the_newest_message_from_far_back(
    client: genai.Client, tmp_path: Path, key: str
) -> None:
    await seed(tmp_path, 60)
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        for _ in range(6):  # far back: the newest pages are unmounted
            transcript.scroll_home(animate=False, immediate=True)
            await settle(pilot, app)
        assert transcript.edges.away and "answer 59" not in mounted(app)
        await press(pilot, app, key)
        assert not transcript.edges.away
        assert mounted(app)[-1] == "answer 59"
        assert at_bottom(transcript) and transcript.is_anchored
        assert app.focused is app.query_one(Prompt)


async def test_end_in_a_prompt_with_text_stays_in_the_prompt(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed(tmp_path, 20)
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        transcript, prompt = app.query_one(Transcript), app.query_one(Prompt)
        transcript.scroll_home(animate=False, immediate=True)
        await settle(pilot, app)
        prompt.text = "draft"
        prompt.move_cursor((0, 1))
        where = transcript.scroll_y
        await press(pilot, app, "end")
        assert prompt.cursor_location == (0, 5)  # the end of its line, as in any text field
        assert transcript.scroll_y == where < transcript.max_scroll_y  # the view stayed
