"""The tool sidebar (issue 12, item 14): args fill the width, the detail follows the
newest call, the keyboard reaches and moves the rows, and ctrl+t with the sidebar
focused leaves the transcript where it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import build, seed_session, send, settle
from textual.widgets import DataTable, Static

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.sidebar import NARROW, ToolSidebar
from koroku_tui.ui.main.transcript import Transcript

LONG = "echo " + " ".join(f"word{n}" for n in range(40))


def detail(sidebar: ToolSidebar) -> str:
    return str(sidebar.query_one("#tool-args", Static).render())


def drawn_rows(table: DataTable[Any]) -> list[str]:
    """The table's rows as drawn (below the header line)."""
    return [table.render_line(y).text for y in range(1, 1 + table.row_count)]


async def three_calls(fake: FakeGemini, tmp_path: Path) -> None:
    for name in ("first.txt", "second.txt", "third.txt"):
        (tmp_path / name).write_text(name)
    fake.add(
        call_reply(("read_file", {"path": "first.txt"})),
        call_reply(("read_file", {"path": "second.txt"})),
        call_reply(("read_file", {"path": "third.txt"})),
        text_reply("Read them."),
    )


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["beside", "over, narrow"])
async def test_long_args_fill_the_column_and_end_in_an_ellipsis(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, size: tuple[int, int]
) -> None:
    fake.add(call_reply(("search_history", {"query": LONG})), text_reply("Nothing found."))
    app = build(tmp_path, client)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "search")
        await settle(pilot, app)
        if size[0] < NARROW:  # hidden at first; ctrl+t lays it over the transcript
            await pilot.press("ctrl+t")
            await settle(pilot, app)
        table = app.query_one(ToolSidebar).table
        (row,) = drawn_rows(table)
        # The args run to the table's right edge (its padding), cut with "…",
        # and nothing lies beyond it to scroll sideways to.
        width = table.scrollable_content_region.width
        assert row.rstrip().endswith("…") and len(row.rstrip()) == width - 1
        assert '{"query": "echo word0' in row
        assert table.max_scroll_x == 0


async def test_the_detail_follows_the_newest_call_until_the_user_picks_another(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    await three_calls(fake, tmp_path)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "read them")
        await settle(pilot, app)
        sidebar = app.query_one(ToolSidebar)
        assert sidebar.row_count == 3
        assert "third.txt" in detail(sidebar)

        sidebar.table.focus()
        await pilot.press("up")
        await pilot.pause()
        assert "second.txt" in detail(sidebar)

        # A newer call does not take the row the user chose.
        (tmp_path / "fourth.txt").write_text("4")
        fake.add(call_reply(("read_file", {"path": "fourth.txt"})), text_reply("Done."))
        await send(pilot, app, "one more")
        await settle(pilot, app)
        assert sidebar.row_count == 4
        assert "second.txt" in detail(sidebar)
        # Back on the newest row, it follows again.
        sidebar.table.focus()
        await pilot.press("down", "down")
        await pilot.pause()
        assert "fourth.txt" in detail(sidebar)


async def test_the_keyboard_reaches_the_rows_and_moves_between_them(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    await three_calls(fake, tmp_path)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "read them")
        await settle(pilot, app)
        sidebar = app.query_one(ToolSidebar)
        assert isinstance(app.focused, Prompt)
        for _ in range(6):  # Tab goes round the screen's widgets and reaches the table
            await pilot.press("tab")
            # mypy keeps app.focused narrowed to the Prompt across the Tab presses.
            if app.focused is sidebar.table:  # type: ignore[comparison-overlap]
                break
        assert app.focused is sidebar.table  # type: ignore[comparison-overlap]
        await pilot.press("up")  # from the newest call
        await pilot.pause()
        assert "second.txt" in detail(sidebar)
        await pilot.press("up")
        await pilot.pause()
        assert "first.txt" in detail(sidebar)
        await pilot.press("down")
        await pilot.pause()
        assert "second.txt" in detail(sidebar)


async def test_hiding_the_focused_sidebar_keeps_the_transcript_where_it_was(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    await seed_session(tmp_path, 30)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        assert transcript.max_scroll_y > 0
        at = transcript.scroll_y
        assert at == transcript.max_scroll_y  # the newest messages are in view
        app.query_one(ToolSidebar).table.focus()
        await pilot.pause()
        await pilot.press("ctrl+t")
        await settle(pilot, app)
        assert not app.query_one(ToolSidebar).display
        assert isinstance(app.focused, Prompt)
        assert transcript.scroll_y == at
