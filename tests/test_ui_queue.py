"""Messages typed while a turn runs are queued above the prompt and sent when it ends.

The turn is held by a ``Hang`` the test releases (``fake.release()``), so the
typing happens mid-turn for sure; what the fake receives next is checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.events import user
from helpers.ui_kit import build, plain, send, settle, steady, texts, two_windows, wait_until
from textual import events
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot

from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, Hang, text_reply
from koroku_tui.fake_gemini.recording import RecordedRequest
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main import turn_status
from koroku_tui.ui.main.blocks import NoticeBlock, UserBlock
from koroku_tui.ui.main.prompt import Prompt

UNSENT = "unsent.txt"
"""Where the queue goes when the app closes (``ui.main.queue.UNSENT``)."""


def user_texts(request: RecordedRequest) -> list[str]:
    """The text of every user content of a request, in order."""
    return [
        "".join(str(p.get("text", "")) for p in c.get("parts", []))
        for c in request.contents
        if c.get("role") == "user"
    ]


def queued(app: KorokuApp) -> str:
    """The queue's rows as shown, or "" when hidden."""
    rows = app.main.query("#queued")  # looked up by id: the test must fail, not crash, without it
    return plain(rows.first()) if rows and rows.first().display else ""


def notices(app: KorokuApp) -> list[str]:
    return [n.message for n in app._notifications]


async def mid_turn(pilot: Pilot[None], app: KorokuApp, fake: FakeGemini) -> None:
    """A first turn whose request hangs until ``fake.release()``."""
    fake.add(Hang(then=text_reply("First answer.")))
    await settle(pilot, app)
    await send(pilot, app, "first")
    await wait_until(pilot, lambda: fake.pending == 0, "the request reaching the model")
    assert app.running


async def test_typed_during_a_turn_is_queued_then_sent_as_the_next_turn(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await mid_turn(pilot, app, fake)
        fake.add(text_reply("Second answer."))
        await send(pilot, app, "second\nwith a detail")
        await send(pilot, app, "third \x1b[31m\u202eevil")
        prompt = app.query_one(Prompt)
        assert prompt.text == ""  # free to type the next one
        rows = queued(app)
        assert "Queued: second (+1 lines)" in rows
        assert "Queued: third \\u001b[31m\\u202eevil" in rows  # hidden characters shown
        assert "↑ edit · ^n remove · sent when the turn ends" in rows
        assert app.main.active_bindings["ctrl+n"].binding.description == "Unqueue"  # footer
        assert texts(app, UserBlock) == ["first"]  # not in the transcript until sent
        assert len(fake.generate_requests) == 1
        fake.release()
        await wait_until(pilot, lambda: len(fake.generate_requests) == 2, "the queue sent")
        await settle(pilot, app)
        joined = "second\nwith a detail\n\nthird \x1b[31m\u202eevil"
        assert user_texts(fake.generate_requests[1])[-1] == joined  # one turn, both messages
        assert user_texts(fake.generate_requests[1])[0] == "first"
        assert queued(app) == ""
        assert "ctrl+n" not in app.main.active_bindings  # the footer drops it with the queue
        assert len(texts(app, UserBlock)) == 2


async def test_a_removed_message_is_never_sent(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await mid_turn(pilot, app, fake)
        fake.add(text_reply("Second answer."))
        await send(pilot, app, "keep me")
        await send(pilot, app, "drop me")
        await pilot.press("ctrl+n")
        assert "drop me" not in queued(app) and "Queued: keep me" in queued(app)
        assert any("Removed from the queue, not sent: drop me" in n for n in notices(app))
        fake.release()
        await wait_until(pilot, lambda: len(fake.generate_requests) == 2, "the queue sent")
        await settle(pilot, app)
        assert user_texts(fake.generate_requests[1])[-1] == "keep me"
        assert len(fake.generate_requests) == 2


async def test_removing_the_only_queued_message_sends_nothing(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await mid_turn(pilot, app, fake)
        await send(pilot, app, "never mind")
        await pilot.press("ctrl+p")  # from the palette this time
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"remove queued")
        results = app.screen.query_one(CommandList)

        def offered() -> str:
            at = results.highlighted
            return "" if at is None else str(results.get_option_at_index(at).prompt)

        await wait_until(pilot, lambda: "Remove queued message" in offered(), "the command found")
        await pilot.press("enter")
        await wait_until(pilot, lambda: queued(app) == "", "the message removed")
        fake.release()
        await settle(pilot, app)
        assert len(fake.generate_requests) == 1
        assert texts(app, UserBlock) == ["first"]
        assert app.query_one(Prompt).text == ""


async def test_up_on_an_empty_prompt_takes_the_last_queued_back_to_edit(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await mid_turn(pilot, app, fake)
        fake.add(text_reply("Second answer."))
        await send(pilot, app, "one")
        await send(pilot, app, "tow")
        await pilot.press("up")
        prompt = app.query_one(Prompt)
        assert prompt.text == "tow" and "tow" not in queued(app)
        await pilot.press("backspace", "backspace", *"wo", "enter")  # fixed, queued again
        assert "Queued: two" in queued(app)
        fake.release()
        await wait_until(pilot, lambda: len(fake.generate_requests) == 2, "the queue sent")
        await settle(pilot, app)
        assert user_texts(fake.generate_requests[1])[-1] == "one\n\ntwo"


async def test_escape_cancels_the_turn_and_the_queue_comes_back_to_the_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await mid_turn(pilot, app, fake)
        await send(pilot, app, "queued one")
        app.query_one(Prompt).text = "a draft"  # typed after it, not sent
        await pilot.press("escape")
        await settle(pilot, app)
        assert not app.running
        assert len(fake.generate_requests) == 1  # nothing sent after a cancel
        assert app.query_one(Prompt).text == "queued one\n\na draft"
        assert queued(app) == ""
        assert any("back in the prompt, not sent" in n for n in notices(app))


async def test_a_queue_left_when_the_app_closes_is_in_the_next_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await mid_turn(pilot, app, fake)
        await send(pilot, app, "do not lose me")
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert (Settings(home=tmp_path).home / UNSENT).exists()

    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, again)
        assert again.query_one(Prompt).text == "do not lose me"
        assert any("back in the prompt" in n for n in notices(again))
        assert not (Settings(home=tmp_path).home / UNSENT).exists()  # taken; kept again at quit


@pytest.mark.parametrize("queue", [[], ["queued first"]], ids=["draft alone", "queue and draft"])
async def test_a_draft_in_the_prompt_when_the_app_closes_is_in_the_next_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, queue: list[str]
) -> None:
    """ctrl+q with half a message typed (never sent, never queued) keeps it, after the queue."""
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        if queue:
            await mid_turn(pilot, app, fake)
            await send(pilot, app, *queue)
        else:
            await settle(pilot, app)
        app.query_one(Prompt).text = "half a thought"  # typed, no Enter
        await pilot.press("ctrl+q")
        await pilot.pause()

    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, again)
        assert again.query_one(Prompt).text == "\n\n".join([*queue, "half a thought"])
        some = "1 queued message and what you were typing" if queue else "what you were typing"
        said = f"Restored {some} from this session, back in the prompt"
        assert any(n.startswith(said) for n in notices(again)), notices(again)
        assert not (Settings(home=tmp_path).home / UNSENT).exists()  # taken; kept again at quit


def test_snapshot_queued_mid_turn_at_80x24(
    fake: FakeGemini,
    snapshot_home: Path,
    snap_compare: Any,
    fake_in_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two messages queued under the status line, above the prompt; the footer's ^n Unqueue."""
    monkeypatch.setattr(turn_status, "clock", lambda: 1000.0)
    fake.add(Hang())
    app = build(snapshot_home, None)  # snap_compare runs the app on a loop of its own

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot, app)
        app.query_one(Prompt).cursor_blink = False
        await send(pilot, app, "first")
        await wait_until(pilot, lambda: fake.pending == 0, "the request reaching the model")
        await send(pilot, app, "and check the **tests** too")
        await send(pilot, app, "then run ruff\nand mypy")
        await steady(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_a_message_the_store_refuses_comes_back_first_then_the_queue(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """The session is busy in another window: nothing is sent, nothing lost, in typed order."""
    async with two_windows(tmp_path, client) as (pilot, app, other):
        await other.begin_turn(user("a long turn in the other window"))
        await send(pilot, app, "may I?")  # waits a few seconds for the other window
        assert app.running
        await send(pilot, app, "and this")
        assert "Queued: and this" in queued(app)
        await settle(pilot, app)
        assert any("busy in another window" in n for n in texts(app, NoticeBlock))
        assert app.query_one(Prompt).text == "may I?\n\nand this"
        assert queued(app) == ""
        await other.end_turn()
    assert fake.generate_requests == []


async def test_a_key_read_with_the_enter_stays_in_the_prompt(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    # A busy app reads "Enter" and the next key from the terminal together:
    # both reach the prompt before the screen handles the send.
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        fake.add(text_reply("An answer."))
        await settle(pilot, app)
        prompt = app.query_one(Prompt)
        prompt.insert("ab")  # as typed: the cursor after it
        for key, character in (("enter", "\r"), ("q", "q")):
            prompt.post_message(events.Key(key, character))
        await wait_until(pilot, lambda: not app.running and bool(texts(app, UserBlock)), "the send")
        assert texts(app, UserBlock) == ["ab"]
        assert prompt.text == "q"
        assert prompt.cursor_location == (0, 1)  # typing goes on after it
