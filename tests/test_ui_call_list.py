"""A step of many calls is one list that behaves as its rows would (issue 22, item 21).

Tab and shift+tab go from call to call, Enter and a click open the call on
its answer, Escape closes it and gives the prompt its focus back, the text
can be selected, and a restart shows the same lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.big_step import drawn, one_big_step
from helpers.ui_kit import build, settle
from rich.console import Console
from rich.text import Text

from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.ui.main.call_list import ROWS_AS_WIDGETS, CallList, wrapped_height
from koroku_tui.ui.main.format import args_short, status_mark
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.tool_row import ToolRow

CALLS = ROWS_AS_WIDGETS + 20
NOT_RUN = "Not run"


def opened_lines(calls: CallList) -> list[str]:
    """The lines drawn below the calls' own lines (an opened call's answer)."""
    return [line for line in drawn(calls) if not line.startswith(("✓ ", "✗ ", "  "))]


async def test_tab_walks_the_calls_and_enter_opens_the_one_under_the_cursor(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    async with one_big_step(fake, client, tmp_path, CALLS) as (app, pilot):
        calls = app.query_one(CallList)
        screen = app.screen
        after = screen.focus_chain[screen.focus_chain.index(calls) + 1]
        before = screen.focus_chain[screen.focus_chain.index(calls) - 1]
        before.focus()
        await pilot.press("tab")
        assert app.focused is calls and calls.cursor == 0  # on the first call, as on its row
        await pilot.press("tab", "tab")
        assert app.focused is calls and calls.cursor == 2
        await pilot.press("enter")
        assert calls.calls[2].opened and not calls.calls[1].opened
        answer = calls.calls[2].answer
        assert answer and answer.split("\n")[0] in "\n".join(drawn(calls))
        await pilot.press("escape")
        assert not calls.calls[2].opened
        assert isinstance(app.focused, Prompt)  # Escape gave the prompt its focus back
        after.focus()
        await pilot.press("shift+tab")
        assert app.focused is calls and calls.cursor == CALLS - 1  # on the last, as on its row
        await pilot.press("tab")
        assert app.focused is after  # past the last call: on to what follows


async def test_a_click_opens_the_call_clicked_and_the_lines_can_be_selected(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    async with one_big_step(fake, client, tmp_path, CALLS) as (app, pilot):
        calls = app.query_one(CallList)
        [y] = [y for y, line in enumerate(drawn(calls)) if '"date": "70-01-2026"' in line]
        calls.move_to(70)  # scrolled into view (the cursor alone opens nothing)
        await pilot.pause()
        await pilot.click(CallList, offset=(2, y))
        opened = [call for call in calls.calls if call.opened]
        assert [call.args for call in opened] == [{"date": "70-01-2026"}]
        assert NOT_RUN in (opened[0].answer or "")
        calls.text_select_all()
        selected = app.screen.get_selected_text() or ""
        assert '"date": "00-01-2026"' in selected and '"date": "79-01-2026"' in selected


async def test_a_restart_shows_the_same_lines(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    async with one_big_step(fake, client, tmp_path, CALLS) as (app, _):
        live = drawn(app.query_one(CallList))
    assert any(NOT_RUN in line for line in live)  # the guardrail's rows, among the others
    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert len(again.query(ToolRow)) == 0
        assert drawn(again.query_one(CallList)) == live


async def test_the_sidebar_shows_each_of_a_thousand_calls_as_it_ended(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """A thousand calls and their results in one batch: a row each, in order, each marked
    as its call in the transcript ended (run, failed, or not run), and a restart agrees."""
    async with one_big_step(fake, client, tmp_path, 1_000) as (app, _):
        calls = app.query_one(CallList).calls
        live = app.query_one(ToolSidebar).rows()
    assert all(call.done for call in calls) and len(calls) == 1_000
    expected = [
        (status_mark(c.done, c.failed, c.denied), "read_memory", args_short(c.args, 500))
        for c in calls
    ]
    assert live == expected
    assert sum(NOT_RUN in (c.answer or "") for c in calls) > 900  # the guardrail's, marked ✗
    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert again.query_one(ToolSidebar).rows() == live


@pytest.mark.parametrize("width", [1, 7, 20, 33, 80])
@pytest.mark.parametrize(
    "plain",
    [
        '✗ read_file {"path": "notes.txt"} — Not run: the step made too many calls.',
        "✓ run_command " + "x" * 150,
        "✓ 検索 " + "広い文字 " * 20,
        "  spaces   between    words  and at the end   ",
    ],
)
def test_a_call_s_height_is_the_lines_rich_wraps_it_into(plain: str, width: int) -> None:
    """The list counts a closed call's lines without making them (``wrapped_height``,
    Rich's private ``divide_line``): if Rich ever cut differently, this fails."""
    assert wrapped_height(plain, width) == len(Text(plain).wrap(Console(), width))
