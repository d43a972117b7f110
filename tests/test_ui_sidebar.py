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
        # One Tab, past the three tool rows and the transcript (it took six).
        await pilot.press("tab")
        # mypy keeps app.focused narrowed to the Prompt across the Tab press.
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


def focus_of(app: Any) -> Any:
    """The focused widget, unnarrowed (the presses between two looks move it)."""
    return app.focused


def title_background(app: Any) -> Any:
    return app.query_one(ToolSidebar).query_one(".section-title", Static).styles.background


async def test_tab_goes_to_the_list_and_back_and_the_focus_shows(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    await three_calls(fake, tmp_path)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "read them")
        await settle(pilot, app)
        sidebar, prompt = app.query_one(ToolSidebar), app.query_one(Prompt)
        unfocused = title_background(app)
        await pilot.press("tab")
        await pilot.pause()
        assert focus_of(app) is sidebar.table
        assert title_background(app) != unfocused  # the title says where the focus is
        await pilot.press("tab")
        await pilot.pause()
        assert focus_of(app) is prompt
        assert title_background(app) == unfocused
        await pilot.press("shift+tab", "shift+tab")  # the folds are still on the way back
        assert focus_of(app).parent is app.query_one(Transcript)


async def test_at_80_columns_tab_shows_the_hidden_sidebar_while_its_list_has_focus(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    await three_calls(fake, tmp_path)
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "read them")
        await settle(pilot, app)
        sidebar, prompt = app.query_one(ToolSidebar), app.query_one(Prompt)
        assert not sidebar.display
        await pilot.press("tab")
        await pilot.pause()
        assert sidebar.display and focus_of(app) is sidebar.table
        await pilot.press("up")
        await pilot.pause()
        assert "second.txt" in detail(sidebar)
        await pilot.press("tab")  # back to the prompt: the sidebar goes again
        await pilot.pause()
        assert focus_of(app) is prompt and not sidebar.display
        await pilot.press("tab", "ctrl+t")  # ctrl+t while it peeks: hidden, by choice
        await pilot.pause()
        assert focus_of(app) is prompt and not sidebar.display
        await pilot.press("ctrl+t", "tab", "tab")  # shown by choice: it stays
        await pilot.pause()
        assert focus_of(app) is prompt and sidebar.display
