"""The tool sidebar (issue 12, item 14): args fill the width, the detail follows the
newest call, the keyboard reaches and moves the rows, and ctrl+t with the sidebar
focused leaves the transcript where it was. Its table comes after the first frame
(issue 23): calls added before it keep their order and marks, and nothing moves."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import build, seed_session, send, settle, wait_until
from rich.console import RenderableType
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.screen import Screen
from textual.widgets import DataTable, Static

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.ui.main.format import DENIED, DONE, FAILED, PENDING
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.sidebar import NARROW, Finished, FinishedCall, ToolSidebar
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
        assert '{"query": "echo word' in row
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


# -- the table after the first frame -------------------------------------------


class SidebarAlone(App[None]):
    """A sidebar alone; ``early`` runs on it when mounted, before the first frame."""

    def __init__(self, early: Callable[[ToolSidebar], None]) -> None:
        super().__init__()
        self.early = early
        self.before_table: tuple[bool, list[tuple[str, str, str]], int] | None = None
        """Whether a table was there, the rows and their count, when ``early`` had run."""

    def compose(self) -> ComposeResult:
        yield ToolSidebar()

    def on_mount(self) -> None:
        sidebar = self.query_one(ToolSidebar)
        self.early(sidebar)
        self.before_table = (bool(self.query("#tool-table")), sidebar.rows(), sidebar.row_count)


def finish_and_prepend(sidebar: ToolSidebar) -> None:
    sidebar.add_call("read_file", {"path": "a.txt"}, "c1")
    sidebar.add_call("run_command", {"command": "ls"}, "c2")
    sidebar.finish_call("read_file", "c1", failed=True)
    sidebar.prepend_calls([FinishedCall("list_directory", {"path": "."}, False, False)])
    sidebar.finish_call("run_command", "c2", failed=False, denied=True)  # renamed by the prepend


def clear_between(sidebar: ToolSidebar) -> None:
    sidebar.add_call("read_file", {"path": "old.txt"}, "c1")
    sidebar.clear()  # another session
    sidebar.add_call("read_file", {"path": "new.txt"}, "c1", done=True)


@pytest.mark.parametrize(
    ("early", "expected"),
    [
        (
            finish_and_prepend,
            [
                (DONE, "list_directory", '{"path": "."}'),
                (FAILED, "read_file", '{"path": "a.txt"}'),
                (DENIED, "run_command", '{"command": "ls"}'),
            ],
        ),
        (clear_between, [(DONE, "read_file", '{"path": "new.txt"}')]),
    ],
    ids=["finish and prepend", "clear"],
)
async def test_calls_added_before_the_table_is_mounted_become_its_rows_in_order(
    early: Callable[[ToolSidebar], None], expected: list[tuple[str, str, str]]
) -> None:
    app = SidebarAlone(early)
    async with app.run_test(size=(60, 20)) as pilot:
        assert app.before_table == (False, expected, len(expected))
        await wait_until(pilot, lambda: bool(app.query("#tool-table")), "the table mounting")
        await pilot.pause()
        sidebar = app.query_one(ToolSidebar)
        assert sidebar.rows() == expected and sidebar.row_count == len(expected)
        assert sidebar.table.cursor_row == len(expected) - 1  # on the newest call
        (newest,) = json.loads(expected[-1][2]).values()
        assert f'"{newest}"' in detail(sidebar)  # the detail follows the cursor
        # The table goes on as if it had been there: a new call, then its end.
        sidebar.add_call("write_file", {"path": "b.txt"}, "c3")
        sidebar.finish_call("write_file", "c3", failed=False)
        assert sidebar.rows()[-1] == (DONE, "write_file", '{"path": "b.txt"}')
        assert sidebar.table.cursor_row == len(expected)


async def test_the_table_arrives_after_the_first_frame_and_moves_nothing(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed_session(tmp_path, 30)
    app = build(tmp_path, client)
    first: list[tuple[bool, Region]] = []  # in the first frame: a table?, the transcript's region
    display = app._display

    def watch(screen: Screen[Any], renderable: RenderableType | None) -> None:
        display(screen, renderable)
        if renderable is not None and not first and app.query(ToolSidebar):
            first.append((bool(app.query("#tool-table")), app.query_one("#transcript").region))

    app._display = watch  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        table_there, transcript = first[0]
        assert not table_there
        assert app.query_one("#transcript").region == transcript
        sidebar = app.query_one(ToolSidebar)
        assert sidebar.table.region.y == sidebar.content_region.y + 1  # under the title
        # The detail lies under the table, as before.
        assert app.query_one("#tool-args").region.y >= sidebar.table.region.bottom


async def test_quitting_in_the_first_frame_leaves_no_table_to_mount(
    client: genai.Client, tmp_path: Path
) -> None:
    """ctrl+q as the first frame shows: the table, due after it, must not be mounted into a
    sidebar already taken down (it raised MountError, a traceback on the way out)."""
    await seed_session(tmp_path, 3)
    app = build(tmp_path, client)
    display = app._display

    def quit_at_first_frame(screen: Screen[Any], renderable: RenderableType | None) -> None:
        display(screen, renderable)
        if renderable is not None and app.query(ToolSidebar):
            app.exit()

    app._display = quit_at_first_frame  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)):
        await app.ready.wait()
    assert app._exception is None, app._exception
    assert app.return_code == 0


async def test_results_that_come_with_their_calls_mark_the_rows_they_answer() -> None:
    """Rows and results of one batch (issue 22, item 21): each result marks the row of the
    oldest pending call it answers (by id, else by name), new rows or older ones alike,
    and a wider tool name widens its column."""
    app = SidebarAlone(lambda sidebar: None)
    async with app.run_test(size=(80, 20)) as pilot:
        await wait_until(pilot, lambda: bool(app.query("#tool-table")), "the table mounting")
        sidebar = app.query_one(ToolSidebar)
        sidebar.add_call("read_file", {"path": "old.txt"}, "c1")
        sidebar.add_call("list_directory", {"path": "."})
        wide = "a_tool_with_a_much_longer_name"
        sidebar.add_calls(
            [("list_directory", {"path": "new"}, None), (wide, {}, "c2"), ("read_file", {}, "c3")],
            [
                Finished("read_file", "c3", failed=True, denied=False),
                Finished("list_directory", None, failed=False, denied=False),  # the older one
                Finished(wide, "c2", failed=False, denied=True),
                Finished("read_file", "c9", failed=False, denied=False),  # no such call
            ],
        )
        sidebar.finish_call("read_file", "c1", failed=False)
        assert sidebar.rows() == [
            (DONE, "read_file", '{"path": "old.txt"}'),
            (DONE, "list_directory", '{"path": "."}'),
            (PENDING, "list_directory", '{"path": "new"}'),
            (DENIED, wide, ""),
            (FAILED, "read_file", ""),
        ]
        await pilot.pause()
        assert wide in drawn_rows(sidebar.table)[3]  # drawn whole, not cut


@pytest.mark.parametrize(
    "pages",
    [[600], [600, 5]],
    ids=["a long older page", "a second page while the first's slices go in"],
)
async def test_the_row_the_user_chose_stays_chosen_when_older_pages_come_above(
    tmp_path: Path, pages: list[int]
) -> None:
    """Older calls put above (``prepend_calls``) go in a slice a frame past ``ROWS_PER_FRAME``.
    The cursor moved at once landed on a table holding only the first slice; a second page
    put above meanwhile read that emptied table's cursor, not the user's row."""
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        sidebar = app.query_one(ToolSidebar)
        for name in ("first.txt", "chosen.txt", "last.txt"):
            sidebar.add_call("read_file", {"path": name}, done=True)
        table = sidebar.table
        await wait_until(pilot, lambda: table.row_count == 3, "the rows")
        table.focus()
        table.move_cursor(row=1, animate=False)
        await settle(pilot, app)
        assert "chosen.txt" in detail(sidebar)
        for page in pages:  # one after another, with no frame between
            sidebar.prepend_calls(
                [
                    FinishedCall("read_file", {"path": f"old{i}.txt"}, False, False)
                    for i in range(page)
                ]
            )
        await wait_until(pilot, lambda: table.row_count == 3 + sum(pages), "the older rows")
        await settle(pilot, app)
        assert table.cursor_row == 1 + sum(pages)
        assert "chosen.txt" in detail(sidebar)
