"""The transcript row of a ``search_history`` call: query, hit count, and the hits on Enter."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from google import genai
from helpers.ui_kit import build, plain, seed_session, send, settle, steady, texts
from rich.text import Text
from textual.pilot import Pilot

from koroku_tui.config.settings import Settings
from koroku_tui.events import (
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    TextPart,
)
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.store import SessionManager
from koroku_tui.text.recall import headline
from koroku_tui.ui.main.blocks import ToolRow
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.recall_row import MATCH_STYLE, SearchRow

ANSWER = "\n".join(
    [
        headline("backup script", 12, 2),
        "- session 3 · message 41 · 2026-11-02 10:14 · you: the «backup script» runs at 2 am",
        "- session 5 · message 77 · 2026-11-20 18:03 · model: we moved the «backup» to rsync",
    ]
)


async def seed_search_turn(home: Path, answer: str = ANSWER, *, failed: bool = False) -> None:
    """One stored turn: a question, a search_history call and its answer, the model's reply."""
    args = {"query": "backup script"}
    result = {"error": answer} if failed else {"output": answer}
    async with SessionManager(Settings(home=home).database_path) as store:
        for event in (
            SessionEvent(role="user", parts=[TextPart(text="what did we decide?")]),
            SessionEvent(
                role="model",
                parts=[
                    FunctionCallPart(
                        function_call=FunctionCallData(name="search_history", args=args, id="s1")
                    )
                ],
            ),
            SessionEvent(
                role="user",
                parts=[
                    FunctionResponsePart(
                        function_response=FunctionResponseData(
                            name="search_history", response=result, id="s1"
                        ),
                        fc_metadata=FCMetadata(name="search_history", args=args),
                    )
                ],
            ),
            SessionEvent(role="model", parts=[TextPart(text="rsync at 2 am (session 3).")]),
        ):
            await store.add_message(event)


async def test_a_replayed_search_row_shows_the_query_and_the_count(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed_search_turn(tmp_path)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert texts(app, ToolRow) == ['✓ search_history "backup script" · 12 matches']


async def test_a_live_search_row_matches_its_replay_after_a_restart(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    await seed_session(tmp_path, 2)  # "question 0", "answer 0"... in session 1
    fake.add(
        call_reply(("search_history", {"query": "answer"})),
        text_reply("Found them (session 1)."),
    )
    app = build(tmp_path, client, new_session=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "what did you say before?")
        await settle(pilot, app)
        live = texts(app, ToolRow)
        # 2 by their words, and the questions by meaning once MiniLM has them (its pass
        # runs in the background): the count depends on when the search came.
        [row_text] = live
        assert row_text in {f'✓ search_history "answer" · {n} matches' for n in (2, 3, 4)}
        row = app.query_one(SearchRow)
        row.focus()
        await pilot.press("enter")
        await pilot.pause()
        opened_live = plain(row)
        assert "session 1" in opened_live
    again = build(tmp_path, client)  # the most recent session: the one just used
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert texts(again, ToolRow) == live
        row = again.query_one(SearchRow)
        row.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert plain(row) == opened_live


async def test_enter_opens_the_hits_with_matches_highlighted_and_escape_closes(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed_search_turn(tmp_path)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        row = app.query_one(SearchRow)
        row.focus()
        await pilot.press("enter")
        await pilot.pause()
        shown = row.content
        assert isinstance(shown, Text)
        assert plain(row).splitlines()[1:] == [
            headline("backup script", 12, 2),
            "- session 3 · message 41 · 2026-11-02 10:14 · you: the backup script runs at 2 am",
            "- session 5 · message 77 · 2026-11-20 18:03 · model: we moved the backup to rsync",
        ]
        highlighted = [
            shown.plain[span.start : span.end] for span in shown.spans if span.style == MATCH_STYLE
        ]
        assert highlighted == ["backup script", "backup"]
        await pilot.press("escape")
        await pilot.pause()
        assert plain(row) == '✓ search_history "backup script" · 12 matches'
        assert app.focused is app.query_one(Prompt)


async def test_a_click_opens_and_closes_the_hits(client: genai.Client, tmp_path: Path) -> None:
    await seed_search_turn(tmp_path)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.click(SearchRow)
        await pilot.pause()
        assert "we moved the backup to rsync" in plain(app.query_one(SearchRow))
        await pilot.click(SearchRow)
        await pilot.pause()
        assert "rsync" not in plain(app.query_one(SearchRow))


async def test_a_failed_search_shows_no_count_and_opens_on_the_error(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed_search_turn(
        tmp_path, "The history could not be searched: disk I/O error.", failed=True
    )
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        row = app.query_one(SearchRow)
        assert plain(row) == (
            '✗ search_history "backup script" — The history could not be searched: disk I/O error.'
        )
        row.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert plain(row).endswith("The history could not be searched: disk I/O error.")


def snapshot_of_search_row(home: Path, snap_compare: Any, *, opened: bool) -> bool:
    """The replayed search row (opened on its hits and focused, if asked)."""
    asyncio.run(seed_search_turn(home))
    app = build(home, None)

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot, app)
        app.query_one(Prompt).cursor_blink = False
        if opened:
            app.query_one(SearchRow).focus()
            await pilot.press("enter")
        await steady(pilot)

    return bool(snap_compare(app, terminal_size=(110, 20), run_before=run_before))


def test_snapshot_search_row_closed(
    fake: FakeGemini, snapshot_home: Path, snap_compare: Any, fake_in_env: None
) -> None:
    assert snapshot_of_search_row(snapshot_home, snap_compare, opened=False)


def test_snapshot_search_row_opened(
    fake: FakeGemini, snapshot_home: Path, snap_compare: Any, fake_in_env: None
) -> None:
    assert snapshot_of_search_row(snapshot_home, snap_compare, opened=True)
