"""The approval dialog shows exactly what will run: the real app, SDK and fake model.

A C1 control such as U+009D once made the rest of a command vanish from the
dialog (``echo hello\\u009d; touch PWNED`` showed as ``echo hello``). Now
every hidden character shows as a highlighted escape, the dialog says so in
words, Deny has the focus, and nothing is cut without saying how much.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import asking_to_run, build, send, settle, steady, texts, wait_for_approval
from hostile.hidden_text import HIDDEN_COMMANDS, HIDDEN_RANGES, MULTILINE_COMMANDS
from textual.pilot import Pilot
from textual.widgets import Button, Static, TextArea

from koroku_tui.fake_gemini import FakeGemini, Usage, call_reply, text_reply
from koroku_tui.ui.history import HistoryScreen
from koroku_tui.ui.main.approval import SHOWN_AT_FIRST, ApprovalScreen
from koroku_tui.ui.main.blocks import ToolRow
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.tool_row import DENIED

WARNING = "this command contains hidden control characters"
# Characters the approval path can carry end to end (JSON, SDK, SQLite):
# every hidden one except lone surrogates, which UTF-8 cannot store.
CARRIED = [
    chr(code)
    for first, last in HIDDEN_RANGES
    for code in range(first, last + 1)
    if not 0xD800 <= code <= 0xDFFF
]


def escape_of(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def shown(screen: ApprovalScreen, widget_id: str) -> str:
    return str(screen.query_one(f"#{widget_id}", Static).render())


@pytest.mark.parametrize(("command", "expected"), HIDDEN_COMMANDS)
async def test_hidden_characters_are_shown_named_and_enter_denies(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, command: str, expected: str
) -> None:
    async with asking_to_run(fake, client, tmp_path, command) as (pilot, app, dialog):
        # The whole command, escapes and all; nothing of it hidden or dropped.
        assert f'"command": "{expected}"' in shown(dialog, "approval-args-text")
        assert WARNING in shown(dialog, "approval-warning").lower()
        assert app.focused is dialog.query_one("#deny", Button)
        await pilot.press("enter")
        await settle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        assert not (tmp_path / "PWNED").exists()
        # The transcript row and the sidebar show the escapes too.
        [row] = texts(app, ToolRow)
        assert row.startswith(f"{DENIED} run_command {{") and expected[:20] in row
        [(mark, tool, args)] = app.query_one(ToolSidebar).rows()
        assert (mark, tool) == (DENIED, "run_command") and expected[:20] in args
        sidebar_args = str(app.query_one("#tool-args", Static).render())
        assert f'"command": "{expected}"' in sidebar_args


async def test_every_hidden_character_is_escaped_in_the_dialog_and_the_history(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    command = "echo " + "".join(CARRIED) + "; touch PWNED"
    async with asking_to_run(fake, client, tmp_path, command) as (pilot, app, dialog):
        expected = "echo " + "".join(map(escape_of, CARRIED)) + "; touch PWNED"
        assert f'"command": "{expected}"' in shown(dialog, "approval-args-text")
        warning = shown(dialog, "approval-warning")
        assert warning.lower().startswith(f"⚠ {WARNING} (u+0000, u+0001, ")
        assert f" and {len(CARRIED) - 6} more)" in warning
        await pilot.press("n")
        await settle(pilot, app)
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert isinstance(app.screen, HistoryScreen)
        history = "\n".join(
            str(getattr(option.prompt, "plain", option.prompt))
            for option in app.screen.detail.history.options
        )
        # The raw history clips long arguments; what it shows is escaped in full.
        assert f'run_command {{"command": "{expected[:250]}' in history
        assert not any(char in history for char in CARRIED)


async def test_a_plain_command_has_no_warning_and_y_runs_it(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    async with asking_to_run(fake, client, tmp_path, "echo hi > out.txt", then="Done.") as (
        pilot,
        app,
        dialog,
    ):
        assert not dialog.query("#approval-warning")
        assert app.focused is not dialog.query_one("#deny", Button)
        assert '"command": "echo hi > out.txt"' in shown(dialog, "approval-args-text")
        await pilot.press("y")
        await settle(pilot, app)
        assert (tmp_path / "out.txt").read_text() == "hi\n"


async def test_a_long_command_wraps_and_what_is_cut_is_counted_and_shown_on_m(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    # One word far wider than the dialog, then a tail beyond the first screenful.
    command = "echo " + "x" * 300 + " " + "y" * (SHOWN_AT_FIRST + 1_000) + "; touch PWNED"
    async with asking_to_run(fake, client, tmp_path, command) as (pilot, app, dialog):
        text = dialog.query_one("#approval-args-text", Static)
        assert text.size.height > 5  # wrapped, not cut at the dialog's edge
        assert "x" * 300 in shown(dialog, "approval-args-text")
        assert "touch PWNED" not in shown(dialog, "approval-args-text")
        missing = len('{\n  "command": "' + command + '"\n}') - SHOWN_AT_FIRST
        assert shown(dialog, "approval-more") == (
            f"… {missing:,} more characters: press m to show them all"
        )
        await pilot.press("m")
        await pilot.pause()
        assert f'"command": "{command}"' in shown(dialog, "approval-args-text")
        assert not dialog.query("#approval-more")
        await pilot.press("n")
        await settle(pilot, app)
        assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize(("command", "lines", "count"), MULTILINE_COMMANDS)
async def test_a_multi_line_command_shows_one_line_per_shell_line_and_counts_them(
    fake: FakeGemini,
    client: genai.Client,
    tmp_path: Path,
    command: str,
    lines: list[str],
    count: int,
) -> None:
    """A newline once showed as a plain ``\\n`` inside one line, so line 2 looked commented out."""
    async with asking_to_run(fake, client, tmp_path, command) as (pilot, app, dialog):
        text = dialog.query_one("#approval-args-text", Static).render()
        assert str(text).split("\n")[1 : 1 + len(lines)] == ["  " + lines[0], *lines[1:]]
        # Each newline is a highlighted mark, unlike a backslash and an n the model wrote.
        marks = [str(text)[span.start : span.end] for span in getattr(text, "spans", [])]
        assert marks.count("\\n") == command.count("\n") and set(marks) <= {"\\n", "\\t"}
        assert shown(dialog, "approval-lines") == f"This command has {count} lines; each one runs."
        await pilot.press("n")
        await settle(pilot, app)
        # The sidebar lays the arguments out the same way.
        sidebar = str(app.query_one("#tool-args", Static).render()).split("\n")
        assert sidebar[1 : 1 + len(lines)] == ["  " + lines[0], *lines[1:]]


async def test_a_one_line_command_has_no_line_count(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    async with asking_to_run(fake, client, tmp_path, "echo hi\n") as (pilot, app, dialog):
        assert not dialog.query("#approval-lines")  # a final newline ends a line, starts none
        await pilot.press("n")
        await settle(pilot, app)


async def test_huge_hidden_arguments_are_cut_everywhere_they_are_drawn(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """300,000 zero-width spaces once drew 1.8M characters in the sidebar, on every start."""
    content = "\u200b" * 50_000  # 300,000 characters once escaped
    fake.add(call_reply(("write_file", {"path": "big.txt", "content": content})), text_reply("Ok."))
    total = len('{\n  "path": "big.txt",\n  "content": ""\n}') + 6 * len(content)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "write it")
        dialog = await wait_for_approval(pilot, app)
        drawn = shown(dialog, "approval-args-text")
        assert len(drawn) <= SHOWN_AT_FIRST and dialog.more_characters == total - len(drawn)
        await pilot.press("n")
        await settle(pilot, app)
        sidebar = str(app.query_one("#tool-args", Static).render())
        args, more = sidebar.rsplit("\n", 1)
        assert len(args) <= SHOWN_AT_FIRST and args.startswith('{\n  "path": "big.txt"')
        assert more == f"… {total - len(args):,} more characters"
        [row] = texts(app, ToolRow)
        assert len(row) < 100 and row.endswith("… — denied by you")

        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert isinstance(app.screen, HistoryScreen)
        view = app.screen.detail.history
        view.focus()
        view.highlighted = 1  # the model's call
        await pilot.press("space")
        await settle(pilot, app)
        body = app.screen.query_one("#reader-body", TextArea).text
        assert body.startswith("#2 model") and len(body) < SHOWN_AT_FIRST + 300
        assert body.endswith(" more characters (export the session to read them all)")


def test_snapshot_approval_hidden_characters(
    fake: FakeGemini,
    snapshot_home: Path,
    snap_compare: Any,
    fake_in_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The dialog with its warning, highlighted escapes and Deny focused."""
    monkeypatch.setenv("HOME", str(Path.cwd()))  # the working directory reads "~"
    fake.add(
        call_reply(
            ("run_command", {"command": "echo hello\u009d; touch PWNED \u202e[bold]x[/]"}),
            usage=Usage(prompt_tokens=1200, candidates_tokens=20),
        ),
        text_reply("Ok."),
    )
    app = build(snapshot_home, None)

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot, app)
        app.query_one(Prompt).cursor_blink = False
        await send(pilot, app, "run it")
        await wait_for_approval(pilot, app)
        await steady(pilot)

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_approval_multi_line_command_asking_for_the_session(
    fake: FakeGemini,
    snapshot_home: Path,
    snap_compare: Any,
    fake_in_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Line breaks with their highlighted \\n, the line count, and the second step of "a"."""
    monkeypatch.setenv("HOME", str(Path.cwd()))  # the working directory reads "~"
    command, _, _ = MULTILINE_COMMANDS[0]
    fake.add(
        call_reply(
            ("run_command", {"command": command}),
            usage=Usage(prompt_tokens=1200, candidates_tokens=20),
        ),
        text_reply("Ok."),
    )
    app = build(snapshot_home, None)

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot, app)
        app.query_one(Prompt).cursor_blink = False
        await send(pilot, app, "run it")
        await wait_for_approval(pilot, app)
        await pilot.press("a")
        await steady(pilot)

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
