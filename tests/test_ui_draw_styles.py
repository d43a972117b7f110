"""Styles kept for one draw (``draw_styles.StylesOncePerDraw``) draw what Textual's own lookups do.

The sidebar's table and a step's list of calls look their styles up once a
draw, not once a line (issue 22, item 21). A draw with the kept styles must
be the draw without them, cell for cell and style for style: the header,
odd and even rows, the cursor row, a failed call's colour, the focused list.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from helpers.ui_kit import build, settle, wait_until
from rich.style import Style
from textual.app import App
from textual.geometry import Region
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets.data_table import DuplicateKey

from koroku_tui.ui.main.call_list import CallList
from koroku_tui.ui.main.draw_styles import StylesOncePerDraw
from koroku_tui.ui.main.sidebar import Finished, FinishedCall, ToolSidebar
from koroku_tui.ui.main.tool_table import ToolTable
from koroku_tui.ui.main.transcript import Transcript


def both_draws(widget: StylesOncePerDraw, clear: Any) -> tuple[list[Strip], list[Strip]]:
    """The widget's lines drawn with kept styles, then (its caches emptied) without."""
    crop = Region(0, 0, widget.size.width, widget.size.height)
    clear()
    widget.refresh()  # else Textual hands back the lines it drew last
    kept = widget.render_lines(crop)
    assert widget._drawn_styles is None  # nothing kept past the draw
    clear()
    widget.refresh()
    looked_up = super(StylesOncePerDraw, widget).render_lines(crop)
    return kept, looked_up


def segments(strips: list[Strip]) -> list[list[tuple[str, str]]]:
    return [[(segment.text, str(segment.style)) for segment in strip] for strip in strips]


def line_styles(strips: list[Strip]) -> set[str]:
    """The distinct styles lines start with: more than one, or the comparison shows little."""
    return {str(next(iter(strip)).style) for strip in strips if strip.cell_length}


async def table_of(
    pilot: Pilot[None], app: App[None], tools: list[str], finished: range, cursor: int
) -> ToolTable:
    """The sidebar's table with a row per tool of ``tools``, the ``finished`` ones ended
    (every third failed), focused, its cursor on row ``cursor``."""
    sidebar = app.query_one(ToolSidebar)
    calls: list[tuple[str, dict[str, Any], str | None]] = [
        (tool, {"path": f"f{i}.txt"}, f"c{i}") for i, tool in enumerate(tools)
    ]
    sidebar.add_calls(calls, [Finished("read_file", f"c{i}", i % 3 == 0, False) for i in finished])
    table = sidebar.table
    await wait_until(pilot, lambda: table.row_count == len(tools), "the rows")
    table.focus()
    table.move_cursor(row=cursor, animate=False)
    await settle(pilot, app)
    return table


def clear_drawn(table: ToolTable) -> None:
    """Forget every line and cell the table drew (its own caches and DataTable's)."""
    table._clear_caches()
    table._line_cache.clear()


async def test_the_tool_table_draws_the_same_with_its_styles_kept(tmp_path: Path) -> None:
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        table = await table_of(pilot, app, ["read_file"] * 12, range(8), cursor=5)
        kept, looked_up = both_draws(table, partial(clear_drawn, table))
        assert segments(kept) == segments(looked_up)
        # Zebra rows, the header and the cursor row differ: the draw is not one style.
        assert len(line_styles(kept)) >= 3


async def test_a_list_of_calls_draws_the_same_with_its_styles_kept(tmp_path: Path) -> None:
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        transcript.expect_calls(80)
        await transcript.tools_started(
            [("read_file", {"path": f"f{i}.txt"}, f"c{i}") for i in range(80)]
        )
        for i in range(40):
            transcript.tool_finished(
                "read_file", f"c{i}", i % 2 == 0, "no such file" if i % 2 == 0 else "ok"
            )
        await settle(pilot, app)
        calls = app.query_one(CallList)
        calls.focus()
        calls.move_to(3)
        await settle(pilot, app)

        def clear() -> None:
            calls._lines.clear()

        kept, looked_up = both_draws(calls, clear)
        assert segments(kept) == segments(looked_up)
        # The cursor, failed, done and pending calls differ: the draw is not one style.
        assert len({style for line in segments(kept) for _, style in line}) >= 4


def with_meta(strips: list[Strip]) -> list[list[tuple[str, Style | None, dict[str, Any] | None]]]:
    """Each segment's text, style and meta (the row and column a click lands on)."""
    return [
        [(s.text, s.style, s.style.meta if s.style else None) for s in strip] for strip in strips
    ]


async def test_a_cell_drawn_for_another_row_draws_as_drawn_for_its_own(tmp_path: Path) -> None:
    """A status or tool cell is drawn once and moved to other rows: only its meta changes."""
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        tools = ["read_file" if i % 4 else "run_command" for i in range(40)]
        table = await table_of(pilot, app, tools, range(1, 30, 4), cursor=7)
        crop = Region(0, 0, table.size.width, table.size.height)
        clear_drawn(table)
        table.refresh()
        ours = table.render_lines(crop)
        assert len(table._drawn_looks) < len(table._drawn_cells) // 2  # most cells were moved
        clear_drawn(table)
        table.refresh()
        table._render_cell = partial(DataTable._render_cell, table)  # type: ignore[method-assign]
        theirs = table.render_lines(crop)
        assert with_meta(ours) == with_meta(theirs)
        assert len({m["row"] for line in with_meta(ours)[1:] for *_, m in line if m}) >= 25


async def test_rows_appended_at_once_are_the_rows_add_row_makes(tmp_path: Path) -> None:
    """``ToolTable.append_rows`` fills DataTable's stores itself (issue 22, item 21): the rows,
    their order, the cursor, the height and every drawn segment are ``add_row``'s."""
    tools = ["read_file" if i % 3 else "run_command" for i in range(300)]

    async def shown(bulk: bool) -> tuple[object, ...]:
        app = build(tmp_path / str(bulk), None)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            sidebar = app.query_one(ToolSidebar)
            table = sidebar.table
            if not bulk:
                table._appended = lambda rows: False  # type: ignore[method-assign]
            sidebar.add_calls(
                [(tool, {"path": f"f{i}.txt"}, f"c{i}") for i, tool in enumerate(tools)],
                [Finished("read_file", f"c{i}", i % 4 == 0, False) for i in range(1, 200, 2)],
            )
            await wait_until(pilot, lambda: table.row_count == len(tools), "the rows")
            await settle(pilot, app)
            crop = Region(0, 0, table.size.width, table.size.height)
            clear_drawn(table)
            table.refresh()
            drawn = with_meta(table.render_lines(crop))
            rows = [
                (row.key.value, row.height, [str(c) for c in table.get_row(row.key)])
                for row in table.ordered_rows
            ]
            if bulk:
                with pytest.raises(DuplicateKey):
                    table.append_rows({"call-1": table.get_row_at(0)})
            return rows, table.cursor_row, table.virtual_size, drawn, sidebar.rows()[-1]

    bulk, one_by_one = await shown(True), await shown(False)
    assert bulk == one_by_one
    assert bulk[1] == len(tools) - 1  # the cursor followed the newest row


async def test_a_line_kept_from_an_earlier_draw_is_the_line_datatable_draws(tmp_path: Path) -> None:
    """ToolTable keeps each row's line by what it shows (``_render_line``): after each change
    a user makes or a step brings, the lines kept draw as a table drawn from nothing does."""
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        tools = ["read_file" if i % 3 else "run_command" for i in range(60)]
        table = await table_of(pilot, app, tools, range(0, 40, 2), cursor=50)
        sidebar = app.query_one(ToolSidebar)
        crop = Region(0, 0, table.size.width, table.size.height)

        async def same_as_fresh(what: str) -> None:
            await settle(pilot, app)
            table.refresh()
            kept = with_meta(table.render_lines(crop))
            assert table._drawn_lines, what  # the lines come from the rows' keeping
            clear_drawn(table)
            table.refresh()
            assert kept == with_meta(table.render_lines(crop)), what
            # ...and a line drawn afresh is the line DataTable itself draws.
            clear_drawn(table)
            table.refresh()
            table._render_line = partial(DataTable._render_line, table)  # type: ignore[method-assign]
            try:
                assert kept == with_meta(table.render_lines(crop)), what
            finally:
                del table._render_line

        changes: list[tuple[str, Callable[[], object]]] = [
            ("a call ends", lambda: sidebar.finish_call("read_file", "c41", failed=True)),
            ("the cursor moves", lambda: table.move_cursor(row=45, animate=False)),
            ("more calls come", lambda: sidebar.add_calls([("read_file", {"p": 1}, "n1")])),
            ("the focus leaves", lambda: app.query_one(Transcript).focus()),
            ("the table scrolls", lambda: table.scroll_to(y=3, animate=False)),
            (
                "older calls come above",
                lambda: sidebar.prepend_calls([FinishedCall("read_file", {}, True, False)]),
            ),
        ]
        await same_as_fresh("the first draw")
        for what, change in changes:
            change()
            await same_as_fresh(what)
        await pilot.hover(table, offset=(5, 4))
        assert table._show_hover_cursor
        await same_as_fresh("the mouse is on a row")
        await pilot.hover(table, offset=(5, 6))
        await same_as_fresh("the mouse moved to another row")
        await pilot.resize_terminal(150, 40)
        crop = Region(0, 0, table.size.width, table.size.height)
        await same_as_fresh("a wider terminal")
