"""A tool row opens on what the tool answered, and says why a call did not run (issue 12, item 6).

Live and after a restart (replayed from the store): the same rows, the same answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import asking, build, plain, send, settle, texts
from hostile.nesting import nested_args
from textual.pilot import Pilot

from koroku_tui.agent import instructions
from koroku_tui.agent.loop.guardrail import (
    CANCELLED_BY_USER,
    INTERRUPTED_BY_STOP,
    TOOL_BUDGET_EXHAUSTED,
)
from koroku_tui.agent.tools.answer_words import for_user
from koroku_tui.agent.tools.denials import denial
from koroku_tui.agent.wire.call_depth import too_deep_refusal
from koroku_tui.fake_gemini import FakeGemini, RecordedRequest, call_reply, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.tool_row import DENIED, SHOWN_LINES, ToolRow

LINES = 100
HOSTILE = "[bold red]x[/] \x1b]0;title\x07 \x1b[2J end"


def rows(app: KorokuApp) -> list[ToolRow]:
    return list(app.query(ToolRow))


async def opened_text(pilot: Pilot[None], row: ToolRow) -> str:
    """What ``row`` shows opened (it is closed again after)."""
    row.focus()
    await pilot.press("enter")
    shown = plain(row)
    await pilot.press("escape")
    return shown


def last_answers(fake: FakeGemini) -> list[Any]:
    """The function responses of the last request Koroku sent."""
    return [
        part["functionResponse"]["response"]
        for part in fake.generate_requests[-1].contents[-1]["parts"]
    ]


MODEL_ONLY = ("ask the user", "Do not", "Stop calling tools", "Change approach", "Note: this")
"""Words Koroku's own answers say to the model, never shown in a row."""


async def test_a_row_opens_on_the_answer_shortened_then_whole(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, LINES + 1)))
    (tmp_path / "hostile.txt").write_text(HOSTILE)
    fake.add(
        call_reply(
            ("read_file", {"path": "long.txt"}),
            ("read_file", {"path": "missing.txt"}),
            ("read_file", {"path": "hostile.txt"}),
        ),
        text_reply("Read them."),
    )
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "read them")
        await settle(pilot, app)
        long, missing, hostile = rows(app)
        assert "line 1" not in plain(long)  # closed: one line
        long.focus()
        await pilot.press("enter")
        shown = plain(long)
        assert f"line {SHOWN_LINES}\n" in shown and f"line {SHOWN_LINES + 1}\n" not in shown
        assert f"… {LINES - SHOWN_LINES} more lines: Enter shows all" in shown
        await pilot.press("enter")
        assert f"line {LINES}" in plain(long) and "Enter shows all" not in plain(long)
        await pilot.press("enter")
        assert "line 1" not in plain(long)  # closed again

        # A failure says why on its line, without opening.
        [failed] = plain(missing).splitlines()
        assert failed.startswith("✗ read_file") and "missing.txt" in failed.split("—", 1)[1]

        # The answer is the tool's: markup and escapes are shown literally or dropped.
        await pilot.click(hostile)
        opened = plain(hostile)
        assert "[bold red]x[/]" in opened and "\x1b" not in opened and "\x07" not in opened
        hostile.focus()
        await pilot.press("escape")  # closes it and gives the prompt back
        assert "[bold red]" not in plain(hostile)
        assert isinstance(app.focused, Prompt)
        live = texts(app, ToolRow)

    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert texts(again, ToolRow) == live
        long = rows(again)[0]
        long.focus()
        await pilot.press("enter", "enter")
        assert f"line {LINES}" in plain(long)


async def test_a_denied_call_reads_denied_by_you_live_and_replayed(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    async with asking(
        fake,
        client,
        tmp_path,
        ("write_file", {"path": "notes.txt", "content": "hi"}),
        request="write it",
        then="Ok.",
    ) as (pilot, app, _dialog):
        await pilot.press("n")
        await settle(pilot, app)
        [row] = rows(app)
        line = plain(row)
        assert line.startswith(f"{DENIED} write_file") and line.endswith("— denied by you")
        assert row.has_class("-denied") and not row.has_class("-failed")
        assert not (tmp_path / "notes.txt").exists()
        [(mark, name, _args)] = app.query_one(ToolSidebar).rows()
        assert (mark, name) == (DENIED, "write_file")  # the sidebar agrees with the row
        opened = await opened_text(pilot, row)
        assert opened.endswith("\nYou denied write_file; nothing was done.")
        # The model is told what to do next, in words the row leaves out.
        assert last_answers(fake) == [{"error": denial("write_file")}]
        assert "ask the user" in denial("write_file")

    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        [row] = rows(again)
        assert plain(row) == line and row.has_class("-denied")
        assert await opened_text(pilot, row) == opened
        [(mark, _name, _args)] = again.query_one(ToolSidebar).rows()
        assert mark == DENIED


async def test_rows_leave_out_what_only_the_model_is_told(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    same = ("read_file", {"path": "a.txt"})
    fake.add(
        call_reply(same),
        call_reply(same),
        call_reply(same),  # the third in a row gets the nudge
        call_reply(*(("list_directory", {"path": "."}),) * 13),  # 16 calls: one not run
        text_reply("Done."),
    )
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "read it")
        await settle(pilot, app)
        shown = rows(app)
        assert len(shown) == 16
        nudged, over = shown[2], shown[-1]
        assert plain(over).endswith("— Not run: the tool budget for this turn is used up.")
        assert await opened_text(pilot, nudged) == plain(nudged).split("\n")[0] + "\nalpha"
        for row in shown:
            seen = await opened_text(pilot, row)
            assert not [words for words in MODEL_ONLY if words in seen], seen
        live = [await opened_text(pilot, row) for row in shown]
    told = [str(answer) for answer in all_answers(fake.generate_requests[-1])]
    assert any(TOOL_BUDGET_EXHAUSTED in answer for answer in told)
    assert any("Note: this is the 3th identical call" in answer for answer in told)

    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert [await opened_text(pilot, row) for row in rows(again)] == live


def all_answers(request: RecordedRequest) -> list[Any]:
    """Every function response in ``request``'s contents."""
    return [
        part["functionResponse"]["response"]
        for content in request.contents
        for part in content["parts"]
        if "functionResponse" in part
    ]


@pytest.mark.parametrize(
    "answer",
    [
        denial("run_command"),
        TOOL_BUDGET_EXHAUSTED,
        CANCELLED_BY_USER,
        INTERRUPTED_BY_STOP,
        too_deep_refusal(nested_args("array", 70)) or "",
        "out\n\n" + instructions.repeated_call_nudge("ls", 4),
    ],
)
def test_each_answer_koroku_writes_has_words_for_the_user(answer: str) -> None:
    shown = for_user(answer)
    assert shown and not [words for words in MODEL_ONLY if words in shown]
    assert "the user" not in shown
