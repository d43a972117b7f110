"""Quitting while an answer streams or finishes is quiet (issue: quit race).

The agent stores an answer before it shows it, so once the app is on its way
out the transcript just stops mounting: no ``MountError`` traceback. The race
(ctrl+q a few milliseconds after a hanging turn is released) is run here
deterministically: the app is told to exit, then the stream's next events
reach the transcript, as they do when they were already on their way.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from google import genai
from helpers.ui_kit import build, cut_mid_answer, read, send, settle, texts, wait_until

from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import Call, FakeGemini, Reply, Text, text_reply
from koroku_tui.ui.main.answer import PIECE_CHARS
from koroku_tui.ui.main.blocks import AnswerBlock
from koroku_tui.ui.main.transcript import Transcript
from koroku_tui.ui.main.unsent import UNSENT_FILENAME


async def test_answer_events_after_quit_mount_nothing_and_raise_nothing(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        await transcript.add_text("The first paragraph.\n\n")  # a live answer, streaming
        app.exit()  # ctrl+q: the app is being torn down from here on
        # A cut into a finished piece, the step's end, then a new step's answer.
        more = "More words. " * (PIECE_CHARS // 10) + "\n\nThe end."
        answer = app.query_one(AnswerBlock)
        await transcript.add_text(more)
        await transcript.end_step()
        assert answer.text == "The first paragraph.\n\n" + more
        await transcript.add_text("A second step.")
        await transcript.end_step()


async def test_quitting_while_an_answer_streams_keeps_what_arrived(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """ctrl+q mid-answer stores the part already shown, as Escape does: nothing seen is lost."""
    answer = "The first half of the answer. " + "And the rest. " * 5
    fake.add(text_reply(answer, pieces=6, chunk_delay=5.0))  # the second piece comes after quit
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "tell me")
        await wait_until(
            pilot, lambda: any("first half" in t for t in texts(app, AnswerBlock)), "a first piece"
        )
        await pilot.press("ctrl+q")
    with closing(sqlite3.connect(Settings(home=tmp_path).database_path)) as db:
        stored = [row[0] for row in db.execute("SELECT event_json FROM messages")]
    assert any('"The first half of' in event for event in stored), stored
    assert not (tmp_path / UNSENT_FILENAME).exists()  # "tell me" is stored: not kept twice


def _without_run_keys(value: object) -> object:
    """``value`` without the ids, signatures and timings a run makes up."""
    if isinstance(value, dict):
        return {
            k: _without_run_keys(v)
            for k, v in value.items()
            if k not in ("id", "thought_signature_b64", "usage", "wait_seconds")
        }
    if isinstance(value, list):
        return [_without_run_keys(v) for v in value]
    return value


def stored_form(home: Path) -> list[object]:
    """Each stored row's kind and event, as a restart reads them."""
    with closing(sqlite3.connect(Settings(home=home).database_path)) as db:
        rows = db.execute("SELECT kind, event_json FROM messages ORDER BY id").fetchall()
    return [(kind, _without_run_keys(json.loads(event))) for kind, event in rows]


async def cut_by(key: str, home: Path, fake: FakeGemini, client: genai.Client) -> list[object]:
    """What is stored once ``key`` cut an answer whose call arrived: ``stored_form``."""
    first = (Text("The first half of it."), Call("read_file", {"path": "a.txt"}))
    fake.add(Reply((first, (Text(" The rest."),)), chunk_delay=5.0))
    app = build(home, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await cut_mid_answer(pilot, app, key)
    return stored_form(home)


async def test_quitting_mid_answer_stores_it_as_escape_does(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """The cut reply, and the answer to its call, are the same after ctrl+q as after Escape."""
    escaped = await cut_by("escape", tmp_path / "escape", fake, client)
    quit_ = await cut_by("ctrl+q", tmp_path / "quit", fake, client)
    assert quit_ == escaped
    assert len(quit_) == 3 and "Cancelled by the user" in json.dumps(quit_[2])


async def test_a_message_sent_with_ctrl_q_in_the_same_read_is_kept(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """A message, Enter and ctrl+q in one read: the app closed before the turn stored the message,
    and with the prompt already cleared it was nowhere. It is stored, or it is back in the
    prompt at the next start."""
    fake.add(text_reply("one two three", pieces=3, chunk_delay=0.5))
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        for token in read("hello\r\x11"):  # Enter, ctrl+q
            token.set_sender(app)
            app.post_message(token)
        await wait_until(pilot, lambda: app._exit, "the app quitting")
    with closing(sqlite3.connect(Settings(home=tmp_path).database_path)) as db:
        stored = [row[0] for row in db.execute("SELECT event_json FROM messages")]
    again = build(tmp_path, client)
    async with again.run_test(size=(100, 30)) as pilot:
        await settle(pilot, again)
        kept = (any('"hello"' in event for event in stored), again.main.prompt.text)
    assert kept in ((True, ""), (False, "hello")), kept
