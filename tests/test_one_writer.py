"""One session, one writer: a turn holds the session's lease; other processes wait or are told.

Two windows on one conversation used to interleave their turns, and the next
request paired one window's calls with the other's results ("result was
lost"). These tests use real SQLite files, several SessionManagers (as several
processes would), and real ``koroku-tui --print`` processes in parallel.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from helpers.agent_kit import HookRecorder, open_agent
from helpers.events import model, texts, user
from hostile.leases import STALE_LEASES
from test_headless import COMMAND, run

from koroku_tui.agent import HistorySynced
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.fake_gemini.recording import RecordedRequest
from koroku_tui.fake_gemini.script import ScriptItem
from koroku_tui.store import SessionBusyError, SessionManager, SessionNotFoundError
from koroku_tui.store.lease import process_start_time

BUSY = "busy in another Koroku window"


EARLIER = "an earlier message"


async def _a_conversation(path: Path) -> None:
    """Session 1, stored with one message: windows opened on the file then share it.

    (A new session has no row until its first message: two windows opened on
    an empty file would each start their own.)
    """
    async with SessionManager(path) as store:
        await store.add_message(user(EARLIER))


@pytest.fixture
async def two_windows(tmp_path: Path) -> AsyncIterator[tuple[SessionManager, SessionManager]]:
    """Two managers on one file and one session, as two Koroku windows would have."""
    path = tmp_path / "koroku.db"
    await _a_conversation(path)
    first = SessionManager(path)
    await first.initialize()
    second = SessionManager(path, session_id=first.session_id, lease_wait=0.05)
    await second.initialize()
    try:
        yield first, second
    finally:
        await second.close()
        await first.close()


async def test_a_second_writer_is_refused_and_nothing_of_it_is_written(
    two_windows: tuple[SessionManager, SessionManager],
) -> None:
    first, second = two_windows
    await first.begin_turn(user("first window asks"))
    with pytest.raises(SessionBusyError, match=BUSY):
        await second.begin_turn(user("second window asks"))
    # Not through the side door either (the seed's plain add_message).
    with pytest.raises(SessionBusyError, match=BUSY):
        await second.add_message(user("second window again"))
    await first.add_message(model("first window's answer"))
    stored = await second.load_all()
    assert texts([m.event for m in stored]) == [
        EARLIER,
        "first window asks",
        "first window's answer",
    ]

    await first.end_turn()
    await second.begin_turn(user("second window asks"))
    assert texts(await second.load_messages())[-1] == "second window asks"


async def test_a_writer_waiting_for_the_lease_gets_it_when_the_turn_ends(
    tmp_path: Path,
) -> None:
    path = tmp_path / "koroku.db"
    await _a_conversation(path)
    async with SessionManager(path) as first, SessionManager(path, lease_wait=30) as second:
        await first.begin_turn(user("long turn"))
        waiting = asyncio.create_task(second.begin_turn(user("queued")))
        await first.add_message(model("done"))
        await first.end_turn()
        await asyncio.wait_for(waiting, 30)
        assert texts(await second.load_messages()) == [EARLIER, "long turn", "done", "queued"]


def _lease_row(path: Path, pid: int, started: float | None, host: str | None = None) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            "INSERT OR REPLACE INTO session_leases VALUES (1, 'elsewhere', ?, ?, ?, 0)",
            (pid, host or socket.gethostname(), started),
        )


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.parametrize(
    "holder",
    ["dead process", "pid reused by another process"],
)
async def test_a_lease_whose_holder_died_is_taken_over(tmp_path: Path, holder: str) -> None:
    path = tmp_path / "koroku.db"
    await _a_conversation(path)
    async with SessionManager(path) as store:
        if holder == "dead process":
            _lease_row(path, _dead_pid(), None)
        else:
            # Our parent is alive, but it is not the process that took the lease.
            _lease_row(path, os.getppid(), -1.0)
        await store.begin_turn(user("after the crash"))
        assert store.holds_turn


async def test_a_live_holder_in_another_process_keeps_its_lease(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    await _a_conversation(path)
    async with SessionManager(path, lease_wait=0.05) as store:
        parent = os.getppid()
        _lease_row(path, parent, process_start_time(parent))
        with pytest.raises(SessionBusyError, match=f"process {parent}"):
            await store.begin_turn(user("refused"))
        assert texts([m.event for m in await store.load_all()]) == [EARLIER]


async def test_catch_up_brings_in_what_another_window_wrote(
    two_windows: tuple[SessionManager, SessionManager],
) -> None:
    first, second = two_windows
    assert texts(await second.load_messages()) == [EARLIER]
    await first.begin_turn(user("from the other window"))
    await first.add_message(model("its answer"))
    await first.end_turn()

    found = await second.catch_up()
    assert texts([m.event for m in found]) == ["from the other window", "its answer"]
    assert await second.catch_up() == []  # nothing new: nothing handed out twice
    await second.begin_turn(user("mine"))
    expected = [EARLIER, "from the other window", "its answer", "mine"]
    assert texts(await second.load_messages()) == expected


async def test_a_row_written_without_the_lease_still_lands_in_id_order(
    two_windows: tuple[SessionManager, SessionManager],
) -> None:
    first, second = two_windows
    await second.load_messages()
    await first.add_message(user("older, from the other window"))
    await second.add_message(user("newer, mine"))
    found = await second.catch_up()
    assert texts([m.event for m in found]) == ["older, from the other window"]
    expected = [EARLIER, "older, from the other window", "newer, mine"]
    assert texts(await second.load_messages()) == expected


async def test_closing_gives_the_lease_back(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    await _a_conversation(path)
    async with SessionManager(path, lease_wait=0.05) as other:
        async with SessionManager(path) as store:
            await store.begin_turn(user("then the window closes"))
        await other.begin_turn(user("free again"))


async def test_an_agent_sees_the_turn_another_window_took(fake: FakeGemini, tmp_path: Path) -> None:
    """Before each request the model's context holds the other window's turn, and a hook says so."""
    fake.add(text_reply("Answer to the first window."), text_reply("Answer to the second."))
    await _a_conversation(tmp_path / "koroku.db")
    async with (
        open_agent(fake, tmp_path) as first,
        open_agent(fake, tmp_path) as second,
    ):
        recorder = HookRecorder().attach(second)
        await first.run_turn("asked in the first window")
        await second.run_turn("asked in the second window")
    request = fake.generate_requests[-1].contents
    said = [p.get("text") for c in request for p in c["parts"]]
    assert said == [
        EARLIER,
        "asked in the first window",
        "Answer to the first window.",
        "asked in the second window",
    ]
    synced = recorder.payloads("on_history_synced")
    assert len(synced) == 1 and isinstance(synced[0], HistorySynced)
    assert texts([m.event for m in synced[0].messages]) == [
        "asked in the first window",
        "Answer to the first window.",
    ]


# -- several processes at once ------------------------------------------------------


PROCESSES = 4


def _tool_then_answer(request: RecordedRequest) -> ScriptItem:
    """Every turn: read a file, then answer; slow enough that turns overlap.

    Four processes prove what ten did (any two overlapping turns would
    interleave) at less than half the start-up cost; the longer delay keeps
    their turns overlapping on a busy machine.
    """
    last = request.contents[-1]
    if any("functionResponse" in p for p in last.get("parts", [])):
        return text_reply("Read it.", delay=0.2)
    return call_reply(("read_file", {"path": "notes.txt"}), delay=0.2)


def _session_turns(db: Path) -> dict[int, list[list[str]]]:
    """Each session's rows as turns: a list of row shapes per turn, in id order."""
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT session_id, event_json FROM messages ORDER BY id").fetchall()
    turns: dict[int, list[list[str]]] = {}
    for session_id, raw in rows:
        event = json.loads(raw)
        kinds = [p["kind"] for p in event["parts"]]
        shape = f"{event['role']}:{'+'.join(kinds)}"
        if event["role"] == "user" and kinds == ["text"]:
            turns.setdefault(session_id, []).append([])
            shape = "user:" + event["parts"][0]["text"]
        turns.setdefault(session_id, [[]])[-1].append(shape)
    return turns


@pytest.mark.parametrize("home", ["one shared session", "a fresh home"])
def test_parallel_print_turns_never_interleave(tmp_path: Path, home: str) -> None:
    assert COMMAND is not None
    (tmp_path / "notes.txt").write_text("buy milk")
    with FakeGemini(on_empty=_tool_then_answer) as fake:
        session_args: list[str] = []
        if home == "one shared session":
            first = run(fake, tmp_path, "--print", "turn 0")
            assert first.returncode == 0, first.stderr
            session_args = ["--session", "1"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE", "GEMINI"))}
        env |= {
            "GOOGLE_GEMINI_BASE_URL": fake.base_url,
            "KOROKU_HOME": str(tmp_path),
            "GEMINI_API_KEY": "test-key",
        }
        processes = [
            subprocess.Popen(
                [COMMAND, *session_args, "--print", f"turn {n}"],
                env=env,
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(1, PROCESSES + 1)
        ]
        outcomes = [(p.wait(timeout=120), *p.communicate()) for p in processes]

        answered = [n for n, (code, _, _) in enumerate(outcomes, 1) if code == 0]
        refused = [n for n, (code, _, err) in enumerate(outcomes, 1) if code == 1 and BUSY in err]
        assert sorted(answered + refused) == list(range(1, PROCESSES + 1)), outcomes
        assert answered, outcomes

        turns = _session_turns(tmp_path / "koroku.db")
        whole = ["model:function_call", "user:function_response", "model:text"]
        for session_turns in turns.values():
            for turn in session_turns:
                # Whole and contiguous: no other process's row inside a turn.
                assert turn[1:] == whole, session_turns
        stored = {t[0] for session_turns in turns.values() for t in session_turns}
        assert stored == {f"user:turn {n}" for n in answered} | (
            {"user:turn 0"} if session_args else set()
        )

        # The next request is whole: no result marked lost, accepted by the strict fake.
        after = run(fake, tmp_path, "--print", "and now?")
        assert after.returncode == 0, after.stderr
        sent = json.dumps(fake.generate_requests[-1].contents)
        assert "lost" not in sent
        assert fake.generate_requests[-1].status == 200


def _lease_values(values: tuple[Any, ...]) -> tuple[Any, ...]:
    now = time.time()
    swap = {"HOST": socket.gethostname(), "SELF": os.getpid(), "NOW": now}
    swap |= {"NOW-3600": now - 3600, "NOW+86400": now + 86400}
    return tuple(swap.get(v, v) if isinstance(v, str) else v for v in values)


@pytest.mark.parametrize(("name", "values"), STALE_LEASES, ids=[n for n, _ in STALE_LEASES])
async def test_a_lease_row_no_live_koroku_holds_is_taken_over(
    tmp_path: Path, name: str, values: tuple[Any, ...]
) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path, lease_wait=0.05) as store:
        with closing(sqlite3.connect(path)) as conn, conn:
            conn.execute(
                "INSERT INTO session_leases VALUES (1, ?, ?, ?, ?, ?)", _lease_values(values)
            )
        await store.begin_turn(user("the session is not locked"))
        assert store.holds_turn
        await store.end_turn()
        with closing(sqlite3.connect(path)) as conn:
            assert conn.execute("SELECT count(*) FROM session_leases").fetchone() == (0,)


async def test_a_session_deleted_in_another_window_is_said_so(
    two_windows: tuple[SessionManager, SessionManager],
) -> None:
    first, second = two_windows
    await second.delete_session(first.session_id)  # to the trash
    with pytest.raises(SessionNotFoundError, match="is in the trash: restore it"):
        await first.begin_turn(user("into a deleted session"))
    with pytest.raises(SessionNotFoundError, match="is in the trash: restore it"):
        await first.add_message(user("nor without a turn"))
    await second.restore_session(first.session_id)
    await first.begin_turn(user("restored, it goes on"))
    await first.end_turn()
    await second.delete_session(first.session_id)
    await second.empty_trash()
    with pytest.raises(SessionNotFoundError, match="may have been deleted"):
        await first.begin_turn(user("into a session removed for good"))


async def test_cancelling_while_waiting_for_another_window_takes_nothing(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Escape while the other window's turn runs: nothing stored, no lease left behind."""
    await _a_conversation(tmp_path / "koroku.db")
    async with (
        SessionManager(tmp_path / "koroku.db") as other,
        open_agent(fake, tmp_path) as agent,
    ):
        await other.begin_turn(user("the other window's long turn"))
        store = agent.session_manager
        assert store is not None
        loop = asyncio.get_running_loop()
        retried = asyncio.Event()
        looks = 0

        def on_statement(statement: str) -> None:
            nonlocal looks
            looks += "FROM session_leases" in statement
            if looks >= 2:  # refused once, waiting to look again
                loop.call_soon_threadsafe(retried.set)

        await (await store.db()).set_trace_callback(on_statement)
        turn = asyncio.create_task(agent.run("never mind"))
        await asyncio.wait_for(retried.wait(), 30)
        turn.cancel()
        await other.end_turn()  # the other turn ends while the cancel lands
        with pytest.raises(asyncio.CancelledError):
            await turn
        # aiosqlite annotates the handler as a Callable, though sqlite3 takes None to clear it.
        await (await store.db()).set_trace_callback(None)  # type: ignore[arg-type]
        # Free: nobody holds the session, and the cancelled message was not stored.
        await other.begin_turn(user("next"))
        stored = [m.event.text for m in await other.load_all() if isinstance(m.event, SessionEvent)]
        assert stored == [EARLIER, "the other window's long turn", "next"]
    assert fake.generate_requests == []


async def test_a_rewind_waits_for_another_windows_turn_as_a_turn_does(tmp_path: Path) -> None:
    """`--rewind` on a busy session was refused at once; a turn waits for the other one."""
    path = tmp_path / "koroku.db"
    await _a_conversation(path)
    async with SessionManager(path) as first, SessionManager(path, lease_wait=30) as second:
        [earlier] = await second.user_turns()
        await first.begin_turn(user("long turn"))
        waiting = asyncio.create_task(second.rewind(earlier.id))
        for _ in range(5):  # yields, no time: the rewind's first attempt takes second's lock
            await asyncio.sleep(0)
        await second.list_sessions()  # queued behind that attempt: it met the busy session
        await first.add_message(model("done"))
        await first.end_turn()
        assert (await asyncio.wait_for(waiting, 30)).id == earlier.id
        assert texts(await second.load_messages()) == []  # back to before the first message
    async with SessionManager(path, lease_wait=0.05) as third, SessionManager(path) as fourth:
        asked = await fourth.begin_turn(user("another long turn"))
        assert asked is not None and third.session_id == fourth.session_id
        with pytest.raises(SessionBusyError, match=BUSY):  # past lease_wait: told, as a turn is
            await third.rewind(asked)
