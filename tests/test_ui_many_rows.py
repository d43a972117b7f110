"""A thousand calls at once never hold the keys for all of them (issue 22, item 21).

The sidebar puts a big batch's rows in the table a slice a frame, and a step's
list of calls measures its calls' heights a slice a frame (guessing the rest
meanwhile): a key typed while they come is handled before the last slice,
and once all are in, the table and the list show every call as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.big_step import drawn
from helpers.ui_kit import build, settle, wait_until
from textual import events, on
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input

from koroku_tui.agent.tools.denials import denial
from koroku_tui.ui.main import call_list
from koroku_tui.ui.main.call_list import MEASURED_PER_FRAME, CallList
from koroku_tui.ui.main.call_state import CallState
from koroku_tui.ui.main.format import FAILED
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.recall_row import SearchState
from koroku_tui.ui.main.sidebar import ROWS_PER_FRAME, Finished, ToolSidebar

CALLS = 1000


async def test_a_key_typed_while_a_thousand_rows_arrive_is_handled_before_the_last_slice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        sidebar = app.query_one(ToolSidebar)
        table = sidebar.table
        prompt = app.query_one(Prompt)
        prompt.focus()
        slices: list[tuple[int, str]] = []  # rows in the table, and the prompt's text, each slice
        append = table.append_rows

        def recording(rows: dict[str, list[object]], **options: bool) -> None:
            append(rows, **options)  # type: ignore[arg-type]
            slices.append((table.row_count, prompt.text))
            if len(slices) == 1:  # the first slice is in: a key comes from the terminal
                app.post_message(events.Key("q", "q"))

        monkeypatch.setattr(table, "append_rows", recording)
        calls: list[tuple[str, dict[str, Any], str | None]] = [
            ("read_file", {"path": f"f{i}.txt"}, f"c{i}") for i in range(CALLS)
        ]
        sidebar.add_calls(
            calls, [Finished("read_file", f"c{i}", True, False) for i in range(CALLS)]
        )
        await wait_until(pilot, lambda: table.row_count == CALLS, "every row in the table")

        assert slices[-1] == (CALLS, "q")  # the key was handled before the last slice went in
        assert slices[0] == (ROWS_PER_FRAME, "")
        assert len(slices) == -(-CALLS // ROWS_PER_FRAME)
        rows = sidebar.rows()
        assert rows[0] == (FAILED, "read_file", '{"path": "f0.txt"}')
        assert rows[-1] == (FAILED, "read_file", f'{{"path": "f{CALLS - 1}.txt"}}')
        assert len(rows) == CALLS
        assert table.cursor_row == CALLS - 1  # on the newest, as when a row comes alone


async def test_a_row_whose_call_ends_meanwhile_is_drawn_with_its_new_mark(
    tmp_path: Path,
) -> None:
    # The table draws a cell again only when the cell changed: an ended call's
    # row gets a new status cell, drawn at once.
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        sidebar = app.query_one(ToolSidebar)
        sidebar.add_call("read_file", {"path": "a.txt"}, "c1")
        await pilot.pause()
        table = sidebar.table
        before = table.render_line(1).text
        sidebar.finish_call("read_file", "c1", failed=True)
        await pilot.pause()
        after = table.render_line(1).text
        assert before.lstrip()[0] != FAILED and after.lstrip()[0] == FAILED


class ListApp(App[None]):
    """A step's list of calls under a text field, as in the transcript."""

    CSS = "CallList { height: auto; }"

    def __init__(self, calls: list[CallState]) -> None:
        super().__init__()
        self.calls = calls
        self.order: list[str] = []
        """What happened, in order: "measured" (a call's height) and "key" (the field changed)."""

    def compose(self) -> ComposeResult:
        yield Input()
        with VerticalScroll():
            yield CallList(self.calls)

    @on(Input.Changed)
    def _typed(self) -> None:
        self.order.append("key")


def varied_calls() -> list[CallState]:
    """Calls whose lines wrap into 1 to 4 lines at 80 columns."""
    calls = [CallState("read_file", {"path": "d/" * (i % 60) + f"f{i}.txt"}) for i in range(CALLS)]
    for i, call in enumerate(calls):
        call.finish(True, "Not run: " + "the reason is long " * (i % 7))
    return calls


async def test_a_key_typed_while_a_thousand_calls_are_measured_is_handled_before_the_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = ListApp(varied_calls())
    measure = call_list.wrapped_height

    def measuring(plain: str, width: int) -> int:
        if not app.order:  # the first call measured: a key comes from the terminal
            app.post_message(events.Key("q", "q"))
        app.order.append("measured")
        return measure(plain, width)

    monkeypatch.setattr(call_list, "wrapped_height", measuring)
    async with app.run_test(size=(80, 24)) as pilot:
        calls = app.query_one(CallList)
        width = calls.size.width
        expected = [
            line.plain.rstrip()
            for call in app.calls
            for line in call.row_text().wrap(app.console, width)
        ]
        await wait_until(pilot, lambda: drawn(calls) == expected, "every call drawn as it wraps")

    measured = [i for i, what in enumerate(app.order) if what == "measured"]
    assert app.order.index("key") < measured[-1]  # handled between two slices
    assert app.order[: MEASURED_PER_FRAME + 1].count("key") == 0  # not inside the first slice
    assert len(set(expected)) > 1 and max(map(len, expected)) > 0


def states() -> list[CallState]:
    """Calls in every state a row shows, with text that needs escaping."""
    pending = CallState("read_file", {"path": "a\x1b[2Jb.txt"}, label="srv › to\u202eol")
    done, failed, denied, interrupted, opened = (CallState("grep", {"q": "x"}) for _ in range(5))
    done.finish(False, "found it")
    failed.finish(True, "Error: \x1b[31mno\x1b[0m such \u202efile\nsecond line")
    denied.finish(True, denial("grep"))
    interrupted.interrupt()
    opened.finish(False, "line one\nline two")
    opened.open_or_more()
    search = SearchState("search_history", {"query": "backup"})
    search.finish(False, "3 matches\n«backup» script")
    return [pending, done, failed, denied, interrupted, opened, search]


@pytest.mark.parametrize("call", states(), ids=lambda call: call.tool_name)
def test_a_call_s_line_is_the_first_line_its_row_draws(call: CallState) -> None:
    # A list of many calls measures each call by its line, made apart from the row.
    assert call.line() == call.row_text().plain.split("\n")[0]
