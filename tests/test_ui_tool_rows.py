"""A tool row opens on what the tool answered, and says why a call did not run (issue 12, item 6).

Live and after a restart (replayed from the store): the same rows, the same answers.
"""

from __future__ import annotations

from pathlib import Path

from google import genai
from helpers.ui_kit import asking, build, plain, send, settle, texts

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.tool_row import DENIED, SHOWN_LINES, ToolRow

LINES = 100
HOSTILE = "[bold red]x[/] \x1b]0;title\x07 \x1b[2J end"


def rows(app: KorokuApp) -> list[ToolRow]:
    return list(app.query(ToolRow))


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

    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        [row] = rows(again)
        assert plain(row) == line and row.has_class("-denied")
        [(mark, _name, _args)] = again.query_one(ToolSidebar).rows()
        assert mark == DENIED
