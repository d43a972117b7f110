"""A step of many calls is one list that behaves as its rows would (issue 22, item 21).

Tab and shift+tab go from call to call, Enter and a click open the call on
its answer, Escape closes it and gives the prompt its focus back, the text
can be selected, and a restart shows the same lines.
"""

from __future__ import annotations

from pathlib import Path

from google import genai
from helpers.big_step import drawn, one_big_step
from helpers.ui_kit import build, settle

from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.ui.main.call_list import ROWS_AS_WIDGETS, CallList
from koroku_tui.ui.main.prompt import Prompt
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
