"""How a queue ends when things go wrong: a cancel before it is stored, a failed
compaction, two windows closing with a queue, a queue restored in another session.

Races are held at the exact point (the agent's lock, a ``Hang``), never timed.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from google import genai
from helpers.ui_kit import build, send, settle, texts, wait_until
from test_ui_compaction_notices import LONG, turns
from test_ui_queue import mid_turn, notices, queued

from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, Hang, error_reply, text_reply
from koroku_tui.ui.main.blocks import ErrorBlock, NoticeBlock, UserBlock
from koroku_tui.ui.main.prompt import Prompt


def stored_with(tmp_path: Path, text: str) -> int:
    """How many stored messages hold ``text``."""
    db = sqlite3.connect(Settings(home=tmp_path).database_path)
    try:
        return sum(text in j for (j,) in db.execute("select event_json from messages"))
    finally:
        db.close()


async def test_escape_after_the_queue_went_out_but_before_it_was_stored_gives_it_back(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Escape lands while the queued turn waits for the agent: its text is back in the prompt."""
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await mid_turn(pilot, app, fake)
        await send(pilot, app, "QUEUED-X")
        agent = app.agent
        assert agent is not None
        # The lock is FIFO: the test takes it right after the first turn, so
        # the queued turn starts (its message shown) but waits before storing.
        held = asyncio.ensure_future(agent._lock.acquire())
        fake.release()
        await wait_until(
            pilot,
            # Shown first, then its turn starts: both are waited for.
            lambda: (
                held.done()
                and queued(app) == ""
                and "QUEUED-X" in texts(app, UserBlock)
                and app.running
            ),
            "the queue sent as the next turn, held before the store",
        )
        await pilot.press("escape")
        # The lock goes back once Escape has stopped the waiting turn (under
        # load the key could still be on its way, and the turn then stored).
        await wait_until(pilot, lambda: not app.running, "Escape stopped the queued turn")
        agent._lock.release()
        await settle(pilot, app)
        assert app.query_one(Prompt).text == "QUEUED-X"  # back, to send again
        assert texts(app, UserBlock) == ["first"]  # not shown as sent
        assert any("Not sent" in e for e in texts(app, ErrorBlock))
        assert stored_with(tmp_path, "QUEUED-X") == 0
        assert len(fake.generate_requests) == 1
        assert not any("what arrived so far" in n for n in texts(app, NoticeBlock))


async def test_two_windows_closing_with_a_queue_both_keep_it(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Windows A and B (another session) both close with a queue: both come back; and
    again, each with its session, after a start that closed without touching them."""
    a, b = build(tmp_path, client), build(tmp_path, client, new_session=True)
    async with a.run_test(size=(120, 40)) as pilot_a:
        await mid_turn(pilot_a, a, fake)
        await send(pilot_a, a, "QUEUED-IN-WINDOW-A")
        async with b.run_test(size=(120, 40)) as pilot_b:
            await mid_turn(pilot_b, b, fake)
            await send(pilot_b, b, "QUEUED-IN-WINDOW-B")
        # B closed (its queue kept); A closes now, while B's is in the file.
    fake.release()

    again = build(tmp_path, client)  # opens window B's session, the newest (2)
    async with again.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, again)
        assert again.query_one(Prompt).text == "QUEUED-IN-WINDOW-B\n\nQUEUED-IN-WINDOW-A"
        said = notices(again)
        assert any('1 queued message from session 1 "first" (not this one)' in n for n in said)
        assert any("1 queued message from this session" in n for n in said)
        assert not (Settings(home=tmp_path).home / "unsent.txt").exists()  # taken at start

    third = build(tmp_path, client)  # the start above closed, its prompt untouched
    async with third.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, third)
        assert third.query_one(Prompt).text == "QUEUED-IN-WINDOW-B\n\nQUEUED-IN-WINDOW-A"
        assert notices(third) == said  # not "what you were typing from this session"


def test_an_older_korokus_unsent_text_and_a_new_block_both_come_back(tmp_path: Path) -> None:
    """The file an older Koroku wrote (the bare text, no newline) is added to, not lost."""
    from koroku_tui.ui.main import unsent  # here: the UI tests above run without it

    (tmp_path / unsent.UNSENT_FILENAME).write_text('line one\n{"not": "ours"}', encoding="utf-8")
    unsent.keep(tmp_path, unsent.Unsent(["new \x1b one", "two"], 3, "a title"))
    taken = unsent.take(tmp_path)
    assert (taken.blocks, taken.problem) == (
        [
            unsent.Unsent(['line one\n{"not": "ours"}'], None, ""),
            unsent.Unsent(["new \x1b one", "two"], 3, "a title"),
        ],
        None,
    )
    assert unsent.take(tmp_path) == unsent.Taken([])  # taken once (held by a live window)
    unsent.release(tmp_path, taken.held)  # its text safe again
    assert list(tmp_path.iterdir()) == []


async def test_a_queue_restored_in_another_session_says_which_it_was_queued_for(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Queued in session 1, restored in a new session: in the prompt, the notice names 1."""
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await mid_turn(pilot, app, fake)
        await send(pilot, app, "yes, delete the ALPHA branch")
    fake.release()

    again = build(tmp_path, client, new_session=True)
    async with again.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, again)
        assert again.query_one(Prompt).text == "yes, delete the ALPHA branch"  # not sent
        assert any(
            'Restored 1 queued message from session 1 "first" (not this one)' in n
            for n in notices(again)
        )
    assert len(fake.generate_requests) == 1


async def test_a_failed_compaction_gives_the_queue_back_instead_of_sending_it(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """ctrl+o, a message queued while it runs, the summariser answers 400: nothing is sent."""
    fake.add(text_reply(LONG * 10), text_reply("Hi again."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await turns(pilot, app, "hello", "hello again")
        fake.add(Hang(then=error_reply(400, "bad request")))
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: fake.pending == 0, "the summary request")
        await send(pilot, app, "QUEUED during compaction")
        # Keys typed just after ctrl+o wait (at most ``KeyOrder.WORKER_WAIT``) for its job.
        await wait_until(
            pilot, lambda: "Queued: QUEUED during compaction" in queued(app), "the message queued"
        )
        fake.release()
        await settle(pilot, app)
        assert not app.running
        assert len(fake.generate_requests) == 3  # two turns and the summary: the queue not sent
        assert app.query_one(Prompt).text == "QUEUED during compaction"
        assert any("The compaction failed: your queued message is back" in n for n in notices(app))
        assert stored_with(tmp_path, "QUEUED during compaction") == 0


async def test_nothing_to_summarise_still_sends_the_queue(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Not a failure: the compaction had nothing to do, the queued message goes out."""
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        fake.add(text_reply("Hi."))
        await turns(pilot, app, "hello")
        fake.add(text_reply("Sent after it."))
        app.main.queue.hold("QUEUED after nothing to do")  # as Enter does while it runs
        await pilot.press("ctrl+o")
        await settle(pilot, app)
        assert stored_with(tmp_path, "QUEUED after nothing to do") == 1
        assert app.query_one(Prompt).text == ""


async def test_escape_before_the_turn_has_begun_gives_the_text_back(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Escape in the same step as the send (the queue going out, a fast typist)."""
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)

        async def send_then_escape() -> None:
            await app.main.send("CANCELLED-AT-ONCE")  # its worker created, not yet run
            app.main.action_cancel_turn()

        app.main.call_later(send_then_escape)  # on the screen, as the queue sends
        await settle(pilot, app)
        assert not app.running
        assert app.query_one(Prompt).text == "CANCELLED-AT-ONCE"
        assert texts(app, UserBlock) == []
        assert stored_with(tmp_path, "CANCELLED-AT-ONCE") == 0
    assert fake.generate_requests == []


def test_a_taken_file_named_with_any_number_is_taken_over_or_left_never_a_crash(
    tmp_path: Path,
) -> None:
    """A dead window's taken file comes back; a name whose pid no process can have too."""
    from koroku_tui.ui.main import unsent

    for pid in ("99999999999999999999999", "4194305"):  # past any C long; past pid_max
        unsent.keep(tmp_path, unsent.Unsent([f"from {pid[:3]}"], None, ""))
        (tmp_path / unsent.UNSENT_FILENAME).rename(tmp_path / f"unsent.txt.{pid}.7.taking")
    taken = unsent.take(tmp_path)
    assert sorted(t for b in taken.blocks for t in b.texts) == ["from 419", "from 999"]
    unsent.release(tmp_path, taken.held)
    assert list(tmp_path.iterdir()) == []
