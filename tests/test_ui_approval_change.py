"""The approval dialog says where a tool runs, its keys, and what write_file would change.

Real app, SDK and fake model; the file is read from the workspace (tmp_path).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import asking, asking_to_run, build, send, settle, steady, wait_for_approval
from textual.pilot import Pilot
from textual.widgets import Static

from koroku_tui.agent.tools.change_preview import MAX_DIFF_LINES
from koroku_tui.fake_gemini import FakeGemini, Usage, call_reply, text_reply
from koroku_tui.ui.main.approval import ApprovalScreen
from koroku_tui.ui.main.prompt import Prompt


def shown(screen: ApprovalScreen, widget_id: str) -> str:
    return str(screen.query_one(f"#{widget_id}", Static).render())


async def test_the_dialog_shows_its_keys_and_the_working_directory(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    async with asking_to_run(fake, client, tmp_path, "ls", request="list") as (
        _pilot,
        _app,
        dialog,
    ):
        assert shown(dialog, "approval-workspace") == f"Working directory: {tmp_path}"
        keys = shown(dialog, "approval-keys")
        assert "y allow once" in keys and "a allow for this session (press twice)" in keys
        assert "n or Esc deny" in keys
        assert not dialog.query("#approval-change")  # no file to compare for a command


async def test_replacing_a_file_shows_that_it_exists_and_the_diff(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("keep\nold line\n")
    call = ("write_file", {"path": "notes.txt", "content": "keep\nnew line\n"})
    async with asking(fake, client, tmp_path, call, request="edit", then="Done.") as (
        pilot,
        app,
        dialog,
    ):
        assert (
            shown(dialog, "approval-change") == "notes.txt exists: it will be replaced. The change:"
        )
        diff = shown(dialog, "approval-diff-text").splitlines()
        assert diff[:2] == ["--- a/notes.txt", "+++ b/notes.txt"]
        assert "-old line" in diff and "+new line" in diff and " keep" in diff
        await pilot.press("y")
        await settle(pilot, app)
        assert (tmp_path / "notes.txt").read_text() == "keep\nnew line\n"


async def test_a_new_file_shows_its_first_lines(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    call = ("write_file", {"path": "hello.py", "content": "print('hi')\n"})
    async with asking(fake, client, tmp_path, call, request="make it", then="Done.") as (
        _pilot,
        _app,
        dialog,
    ):
        change = shown(dialog, "approval-change")
        assert change == "hello.py does not exist yet: it will be created. Its first lines:"
        assert shown(dialog, "approval-diff-text").splitlines() == ["+print('hi')", "+"]


async def test_hidden_characters_in_the_diff_are_escaped_and_a_huge_one_is_counted(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    old = [f"echo {n}" for n in range(500)]
    # Every other line gains hidden characters: one long hunk of - and + pairs.
    new = [line if n % 2 else f"{line}\u009d; rm -rf ~\u202e" for n, line in enumerate(old)]
    (tmp_path / "run.sh").write_text("\n".join(old))
    call = ("write_file", {"path": "run.sh", "content": "\n".join(new)})
    async with asking(fake, client, tmp_path, call, request="edit", then="Done.") as (
        _pilot,
        _app,
        dialog,
    ):
        diff = shown(dialog, "approval-diff-text")
        assert "-echo 0\n+echo 0\\u009d; rm -rf ~\\u202e\n echo 1\n" in diff
        assert "\u009d" not in diff and "\u202e" not in diff
        more = 2 + 1 + 250 * 3 - MAX_DIFF_LINES  # headers, hunk, 250 × (-, +, context)
        assert diff.endswith(f"… {more:,} more lines")


@pytest.mark.parametrize("kind", ["link out", "fifo"])
async def test_a_file_that_cannot_be_read_safely_says_so(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, kind: str
) -> None:
    workspace_file = tmp_path / "target"
    if kind == "fifo":
        import os

        os.mkfifo(workspace_file)
        expected = "target exists, but its contents cannot be shown: "
    else:
        secret = tmp_path.parent / f"{tmp_path.name}-secret.txt"
        secret.write_text("SECRET\n")
        workspace_file.symlink_to(secret)
        expected = "Cannot look at target: The path 'target' is outside the workspace"
    call = ("write_file", {"path": "target", "content": "x\n"})
    async with asking(fake, client, tmp_path, call, request="write", then="Ok.") as (
        _pilot,
        _app,
        dialog,
    ):
        assert shown(dialog, "approval-change").startswith(expected)
        assert not dialog.query("#approval-diff")


def test_snapshot_approval_write_file_diff(
    fake: FakeGemini,
    snapshot_home: Path,
    snap_compare: Any,
    fake_in_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """write_file replacing a file: the working directory, the diff, the keys."""
    _snapshot_write_file(fake, snapshot_home, snap_compare, monkeypatch, (120, 40))


def test_snapshot_approval_write_file_diff_80x24(
    fake: FakeGemini,
    snapshot_home: Path,
    snap_compare: Any,
    fake_in_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same dialog in a small terminal: the diff scrolls, keys and buttons stay in view."""
    _snapshot_write_file(fake, snapshot_home, snap_compare, monkeypatch, (80, 24))


def _snapshot_write_file(
    fake: FakeGemini,
    snapshot_home: Path,
    snap_compare: Any,
    monkeypatch: pytest.MonkeyPatch,
    size: tuple[int, int],
) -> None:
    monkeypatch.setenv("HOME", str(Path.cwd()))  # the workspace reads "~" on every machine
    Path("app.py").write_text(
        "import sys\n\n\ndef main():\n    print('hello')\n    return 0\n\n\nsys.exit(main())\n"
    )
    content = (
        "import sys\n\n\ndef main(name: str = 'world') -> int:\n"
        "    print(f'hello, {name}')\n    return 0\n\n\nsys.exit(main())\n"
    )
    fake.add(
        call_reply(
            ("write_file", {"path": "app.py", "content": content}),
            usage=Usage(prompt_tokens=1200, candidates_tokens=20),
        ),
        text_reply("Ok."),
    )
    app = build(snapshot_home, None)

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot, app)
        app.query_one(Prompt).cursor_blink = False
        await send(pilot, app, "greet by name")
        await wait_for_approval(pilot, app)
        await steady(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def test_at_80x24_a_long_diff_scrolls_and_the_buttons_stay_in_view(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text("\n".join(f"line {n}" for n in range(30)))
    content = "\n".join(f"line {n}x" for n in range(30))
    fake.add(call_reply(("write_file", {"path": "app.py", "content": content})), text_reply("Ok."))
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "edit")
        dialog = await wait_for_approval(pilot, app)
        await steady(pilot)
        for button_id in ("approval-keys", "allow_once", "allow_session", "deny"):
            button = dialog.query_one(f"#{button_id}")
            x, y = button.region.center
            widget, _ = dialog.get_widget_at(int(x), int(y))
            assert widget is button, f"{button_id} is hidden behind {widget}"
