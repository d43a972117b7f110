"""``@`` in the app's prompt: the picker, the attachment sent and shown, again after a restart.

Issue 27, part 3. The real app under Pilot, on the real SDK against the
fake Gemini (strict), with the workspace in ``tmp_path``.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.events import user
from helpers.ui_kit import build, plain, send, settle, texts, two_windows, wait_until
from textual.pilot import Pilot

from koroku_tui.agent import attachments
from koroku_tui.agent.tools.file_index import FileIndex
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.attachment_row import AttachmentRow
from koroku_tui.ui.main.blocks import ErrorBlock, UserBlock
from koroku_tui.ui.main.file_picker import FilePicker
from koroku_tui.ui.main.prompt import Prompt

NOTES = "# Notes\n\n" + "a line of notes \x1b[31m[bold]red[/]\n" * 62  # 2,117 bytes
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(200))


def sent_parts(fake: FakeGemini) -> list[dict[str, Any]]:
    """The parts of the user message in the last request the fake received."""
    parts: list[dict[str, Any]] = fake.generate_requests[-1].contents[-1]["parts"]
    return parts


@asynccontextmanager
async def sent(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, text: str
) -> AsyncIterator[tuple[Pilot[None], KorokuApp]]:
    """The app after ``text`` was sent and its turn (answered "Ok.") ended."""
    fake.add(text_reply("Ok."))
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, text)
        await settle(pilot, app)
        yield pilot, app


async def picked(pilot: Pilot[None], app: KorokuApp) -> FilePicker:
    picker = app.query_one(FilePicker)
    await wait_until(pilot, lambda: bool(picker.found), "the picker listing a match")
    return picker


@asynccontextmanager
async def picking(
    client: genai.Client, tmp_path: Path, *keys: str
) -> AsyncIterator[tuple[Pilot[None], KorokuApp, Prompt, FilePicker]]:
    """The app with ``keys`` typed into the prompt, the picker listing a match."""
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot, app)
        prompt = app.query_one(Prompt)
        prompt.focus()
        await pilot.press(*keys)
        picker = await picked(pilot, app)
        await settle(pilot, app)
        yield pilot, app, prompt, picker


async def test_at_opens_the_picker_and_choosing_writes_the_path(
    client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text(NOTES)
    (tmp_path / "notebook.txt").write_text("x")
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot, app)
        prompt = app.query_one(Prompt)
        prompt.focus()
        await pilot.press("r", "e", "a", "d", "space", "@")
        picker = await picked(pilot, app)
        assert picker.display and "docs/notes.md" in picker.found
        await pilot.press("n", "o", "t", "e", "s")
        await wait_until(pilot, lambda: picker.found[:1] == ["docs/notes.md"], "narrowing")
        await pilot.press("enter")
        assert prompt.text == "read @docs/notes.md "
        assert not picker.is_open and not picker.display
        # Escape closes the picker without clearing the prompt.
        await pilot.press("@")
        await picked(pilot, app)
        await pilot.press("escape")
        assert not picker.is_open and prompt.text == "read @docs/notes.md @"
        # A click on a file writes it too.
        await pilot.press("b", "o", "o", "k")
        await wait_until(pilot, lambda: picker.found == ["notebook.txt"], "the one match")
        await pilot.click(FilePicker, offset=(3, 1))
        assert prompt.text == "read @docs/notes.md @notebook.txt "
        assert not picker.is_open and app.focused is prompt


async def test_sending_attaches_the_file_shown_as_a_row_and_after_a_restart(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "notes.md").write_text(NOTES)
    async with sent(fake, client, tmp_path, "summarise @notes.md please") as (pilot, app):
        text, attached = sent_parts(fake)
        assert text == {"text": "summarise @notes.md please"}
        assert attached["text"].startswith('<attached-file path="notes.md" size="2117">\n# Notes')
        assert attached["text"].endswith("red[/]\n\n</attached-file>")
        [row] = app.query(AttachmentRow)
        assert plain(row) == "+ @notes.md · 2.1 KB"
        row.focus()
        await pilot.press("enter")
        opened = plain(row)
        assert "a line of notes" in opened and "[bold]red[/]" in opened and "\x1b" not in opened
        live = plain(row)

    again = build(tmp_path, client)
    async with again.run_test(size=(100, 40)) as pilot:
        await settle(pilot, again)
        [row] = again.query(AttachmentRow)
        assert plain(row) == "+ @notes.md · 2.1 KB"
        row.focus()
        await pilot.press("enter")
        assert plain(row) == live


async def test_an_image_goes_as_inline_data(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    async with sent(fake, client, tmp_path, "what is in @shot.png") as (_pilot, app):
        _text, frame, image = sent_parts(fake)
        assert (
            frame["text"] == f'<attached-file path="shot.png" size="{len(PNG)}" type="image/png"/>'
        )
        inline = image.get("inlineData") or image["inline_data"]
        assert inline.get("mimeType", inline.get("mime_type")) == "image/png"
        assert base64.urlsafe_b64decode(inline["data"]) == PNG
        [row] = app.query(AttachmentRow)
        assert plain(row) == "+ @shot.png · 216 B"


async def test_a_binary_file_is_refused_and_the_text_comes_back(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01binary")
    async with sent(fake, client, tmp_path, "look at @blob.bin") as (_pilot, app):
        assert fake.generate_requests == []
        [error] = app.query(ErrorBlock)
        assert "Cannot attach @blob.bin: it looks like a binary file" in plain(error)
        assert app.query_one(Prompt).text == "look at @blob.bin"
        assert not app.query(AttachmentRow)


async def test_a_message_not_stored_takes_its_file_rows_back_with_it(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "notes.md").write_text(NOTES)
    async with two_windows(tmp_path, client) as (pilot, app, other):
        await other.begin_turn(user("a long turn in the other window"))
        await send(pilot, app, "may I see @notes.md?")
        await settle(pilot, app)
        assert app.query_one(Prompt).text == "may I see @notes.md?"
        assert not app.query(AttachmentRow)  # not stored, so not shown as sent
    assert fake.generate_requests == []


async def test_escape_while_the_files_are_read_gives_the_text_back(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slow disk: Escape while ``@notes.md`` was read (on a thread) left the message
    shown as sent, yet in no request, no store and no prompt: the text was lost."""
    (tmp_path / "notes.md").write_text(NOTES)
    reading, read_on = threading.Event(), threading.Event()
    real_attach = attachments.attach

    def slow_disk(text: str, workspace: Path) -> attachments.Mentioned:
        reading.set()
        read_on.wait(30)  # held here until the test lets the read go on
        return real_attach(text, workspace)

    monkeypatch.setattr(attachments, "attach", slow_disk)
    app = build(tmp_path, client)
    try:
        async with app.run_test(size=(100, 40)) as pilot:
            await settle(pilot, app)
            await send(pilot, app, "summarise @notes.md")
            await wait_until(pilot, reading.is_set, "the file being read")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not app.running, "Escape stopping the turn")
            read_on.set()
            await settle(pilot, app)
            assert app.query_one(Prompt).text == "summarise @notes.md"  # back, to send again
            assert texts(app, UserBlock) == []  # not shown as sent
            assert any("Not sent" in error for error in texts(app, ErrorBlock))
    finally:
        read_on.set()  # the thread ends even when an assertion failed
    assert fake.generate_requests == []


async def test_keys_typed_during_a_search_run_only_the_newest_search(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a large tree each search takes a while: one per key, run in turn, lagged behind."""
    (tmp_path / "notes.md").write_text("x")
    searched: list[str] = []
    real_search = FileIndex.search

    def counting(index: FileIndex, query: str, limit: int = 50) -> list[str]:
        searched.append(query)
        return real_search(index, query, limit)

    monkeypatch.setattr(FileIndex, "search", counting)
    async with picking(client, tmp_path, "@") as (pilot, app, _prompt, picker):
        searched.clear()
        with picker._lock:  # a search running on a large tree
            await pilot.press("n", "o", "t", "e")
        await wait_until(pilot, lambda: picker.found == ["notes.md"], "the newest search")
        await settle(pilot, app)
        assert searched == ["note"]


async def test_enter_after_a_path_typed_out_whole_sends(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Enter wrote the same path again (and a space) and sent nothing: a second Enter was needed."""
    (tmp_path / "notes.md").write_text("x")
    fake.add(text_reply("Ok."))
    async with picking(client, tmp_path, "@", *"notes.md") as (pilot, app, prompt, picker):
        await wait_until(pilot, lambda: picker.found[:1] == ["notes.md"], "the typed path")
        await pilot.press("enter")
        await settle(pilot, app)
        assert not picker.is_open and prompt.text == ""
        assert sent_parts(fake)[0] == {"text": "@notes.md"}


async def test_the_file_moved_to_stays_chosen_as_the_walk_lists_more(
    client: genai.Client, tmp_path: Path
) -> None:
    """Each batch of a large tree's walk put the highlight back on the first line."""
    for name in ("ab1.md", "ab2.md", "ab3.md"):
        (tmp_path / name).write_text(name)
    async with picking(client, tmp_path, "@", "a", "b") as (pilot, _app, prompt, picker):
        await pilot.press("down")
        moved_to = picker.chosen()
        assert moved_to is not None and moved_to != picker.found[0]
        assert picker.index is not None
        picker.index.paths.append("ab0.md")  # the walk lists one more, as a batch does
        picker._search("ab")
        await wait_until(pilot, lambda: "ab0.md" in picker.found, "the new batch shown")
        assert picker.chosen() == moved_to
        await pilot.press("enter")
        assert prompt.text == f"@{moved_to} "


async def test_enter_before_the_list_caught_up_takes_the_best_match_of_what_was_typed(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It took the first line of the list an older query had shown."""
    (tmp_path / "aaa.md").write_text("a")
    (tmp_path / "notebook.txt").write_text("b")
    async with picking(client, tmp_path, "@") as (pilot, _app, prompt, picker):
        assert picker.found[0] == "aaa.md"
        monkeypatch.setattr(FilePicker, "_search", lambda self, query: None)  # a slow search
        await pilot.press("b", "o", "o", "k", "enter")
        assert prompt.text == "@notebook.txt "
