"""The main screen's layout at the sizes users have: 80x24 and 120x40, and resizes between."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import build, key_bar_line, send, settle, steady, wait_until
from textual.pilot import Pilot
from textual.widgets import Markdown

from koroku_tui.fake_gemini import FakeGemini, Hang, Usage, call_reply, text_reply
from koroku_tui.ui.main import turn_status
from koroku_tui.ui.main.answer import AnswerPiece
from koroku_tui.ui.main.blocks import AnswerBlock, ToolRow, UserBlock
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.transcript import Transcript


async def test_at_80_columns_the_sidebar_starts_hidden_and_lies_over_the_transcript(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        sidebar, transcript = app.query_one(ToolSidebar), app.query_one(Transcript)
        assert not sidebar.display
        assert transcript.region.width >= 60
        assert "esc Cancel" in key_bar_line(app), key_bar_line(app)
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert sidebar.display and sidebar.region.width > 0
        assert transcript.region.width >= 60  # the sidebar is over it, not beside it
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not sidebar.display


async def test_at_120_columns_the_sidebar_shows_beside_the_transcript(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        sidebar, transcript = app.query_one(ToolSidebar), app.query_one(Transcript)
        assert sidebar.display
        assert transcript.region.right <= sidebar.region.x  # beside, not under
        assert "esc Cancel" in key_bar_line(app)


async def test_resizing_across_100_columns_hides_and_shows_the_sidebar(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        sidebar, transcript = app.query_one(ToolSidebar), app.query_one(Transcript)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not sidebar.display
        assert transcript.region.width >= 60
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert sidebar.display
        assert transcript.region.right <= sidebar.region.x


async def test_consecutive_tool_rows_take_one_line_each(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("buy milk")
    calls = 5
    fake.add(call_reply(*[("read_file", {"path": "notes.txt"})] * calls), text_reply("Done."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "read it five times")
        await settle(pilot, app)
        rows = list(app.query(ToolRow))
        assert len(rows) == calls
        first, last = rows[0].region, rows[-1].region
        assert last.bottom - first.y == calls  # one line per call, no blank lines between
        # The group stands apart: one blank line above it and one below.
        assert first.y - app.query_one(UserBlock).region.bottom == 1
        assert app.query_one(AnswerBlock).region.y - last.bottom == 1


async def test_streamed_text_keeps_its_column_when_it_freezes(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        await transcript.add_text("Streaming words arrive here.")
        await settle(pilot, app)
        streamed_at = app.query_one(AnswerPiece).content_region.x
        streamed_height = app.query_one(AnswerBlock).region.height
        await transcript.end_step()  # the step ends: the live text becomes a piece
        await settle(pilot, app)
        assert not app.query(Markdown)  # Textual's widget-per-block Markdown is never used
        assert len(app.query(AnswerPiece)) == 1
        assert app.query_one(AnswerPiece).content_region.x == streamed_at
        assert app.query_one(AnswerBlock).region.height == streamed_height  # no line lost


def test_snapshot_mid_turn_at_80x24(
    fake: FakeGemini,
    snapshot_home: Path,
    snap_compare: Any,
    fake_in_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At 80x24 mid-turn: the transcript has the width, no sidebar, esc Cancel in the footer,
    the status line (its clock pinned, so the seconds never tick in the picture)."""
    monkeypatch.setattr(turn_status, "clock", lambda: 1000.0)
    (snapshot_home / "notes.txt").write_text("buy milk")
    fake.add(
        call_reply(("read_file", {"path": "notes.txt"}), usage=Usage(prompt_tokens=1200)),
        Hang(),
    )
    app = build(snapshot_home, None)  # snap_compare runs the app on a loop of its own

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot, app)
        app.query_one(Prompt).cursor_blink = False
        await send(pilot, app, "What is in notes.txt? Say it in one line, then say why it matters.")

        def second_request_hanging() -> bool:
            rows = app.query_one(ToolSidebar).rows()
            return bool(rows) and rows[0][0] == "✓" and len(fake.generate_requests) == 2

        await wait_until(pilot, second_request_hanging, "the second request", within=30)
        await steady(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
