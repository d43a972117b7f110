"""The session store: lifecycle, the in-memory context, sessions, history, search.

Real SQLite files under ``tmp_path``; the only fakes are spies on the
connection (SQLite's own trace callback) to prove what is NOT read.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import stat
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from helpers.events import model, user

from koroku_tui.events import (
    CompactionEvent,
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    TextPart,
    encode_signature,
)
from koroku_tui.store import (
    MATCH_END,
    MATCH_START,
    SCHEMA_VERSION,
    SessionManager,
    SessionNotFoundError,
    StoreError,
    StoreNotInitializedError,
)
from koroku_tui.store.context import load_context

Event = SessionEvent | CompactionEvent


def tool_response(name: str, output: str) -> SessionEvent:
    return SessionEvent(
        role="user",
        parts=[
            FunctionResponsePart(
                function_response=FunctionResponseData(name=name, response={"output": output}),
                fc_metadata=FCMetadata(name=name, args={}),
            )
        ],
    )


def summary(text: str, kept_from_id: int | None = None) -> CompactionEvent:
    return CompactionEvent.from_summary(text, kept_from_id=kept_from_id)


def texts(events: list[Event]) -> list[str]:
    return [e.summary if isinstance(e, CompactionEvent) else e.text for e in events]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "koroku.db"


async def reopened(path: Path, session_id: int | None = None) -> SessionManager:
    manager = SessionManager(path, session_id)
    await manager.initialize()
    return manager


def file_modes(folder: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}


#: Explicit timestamps in tests lie after every session's creation time.
LATER = time.time() + 10_000


class SqlTrace:
    """Every statement SQLite runs on the manager's connection (its trace callback)."""

    def __init__(self) -> None:
        self.statements: list[str] = []

    async def attach(self, conn: aiosqlite.Connection) -> None:
        await conn.set_trace_callback(self.statements.append)

    async def detach(self, conn: aiosqlite.Connection) -> None:
        await conn.set_trace_callback(None)  # type: ignore[arg-type]


# -- lifecycle -------------------------------------------------------------


async def test_new_file_is_private_with_parents_schema_and_one_session(db_path: Path) -> None:
    async with SessionManager(db_path) as store:
        await store.add_message(user("hi"))
        modes = file_modes(db_path.parent)
        assert modes.keys() == {"koroku.db", "koroku.db-wal", "koroku.db-shm"}
        assert set(modes.values()) == {0o600}
        sessions = await store.list_sessions()
        assert [s.id for s in sessions] == [store.session_id]
    assert file_modes(db_path.parent) == {"koroku.db": 0o600}  # -wal/-shm are gone
    assert file_modes(db_path.parent.parent) == {"home": 0o700}  # the folder it created
    with closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_pragmas_are_set_on_the_connection(store: SessionManager) -> None:
    conn = await store.db()

    async def pragma(name: str) -> Any:
        rows = list(await conn.execute_fetchall(f"PRAGMA {name}"))
        return rows[0][0]

    assert await pragma("journal_mode") == "wal"
    assert await pragma("synchronous") == 1  # NORMAL
    assert await pragma("foreign_keys") == 1
    assert await pragma("busy_timeout") == 5000


async def test_concurrent_initialize_opens_one_connection(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[aiosqlite.Connection] = []
    real_connect = aiosqlite.connect

    def counting_connect(*args: Any, **kwargs: Any) -> aiosqlite.Connection:
        conn = real_connect(*args, **kwargs)
        opened.append(conn)
        return conn

    monkeypatch.setattr(aiosqlite, "connect", counting_connect)
    store = SessionManager(db_path)
    await asyncio.gather(*(store.initialize() for _ in range(8)))
    try:
        assert len(opened) == 1
        assert await store.db() is opened[0]
        await store.initialize()  # a later call is a no-op too
        assert len(opened) == 1
        assert store.session_id == 1  # one new session (stored with its first message)
    finally:
        await store.close()


async def test_db_before_initialize_and_after_close_raises_a_clear_error(db_path: Path) -> None:
    store = SessionManager(db_path)
    with pytest.raises(StoreNotInitializedError, match="initialize"):
        await store.db()
    with pytest.raises(StoreNotInitializedError):
        await store.add_message(user("x"))
    await store.initialize()
    await store.close()
    await store.close()  # twice is fine
    with pytest.raises(StoreError):
        await store.load_messages()


async def test_reopen_continues_the_session_with_the_latest_activity(db_path: Path) -> None:
    async with SessionManager(db_path) as store:
        first = store.session_id
        await store.add_message(user("first session"), created_at=LATER + 1)
        second = (await store.new_session()).id
        await store.add_message(user("second session"), created_at=LATER + 2)
        await store.switch_session(first)
        await store.add_message(model("back in the first"), created_at=LATER + 3)
    store = await reopened(db_path)
    try:
        assert store.session_id == first
        assert texts(await store.load_messages()) == ["first session", "back in the first"]
    finally:
        await store.close()
    store = await reopened(db_path, second)
    try:
        assert texts(await store.load_messages()) == ["second session"]
    finally:
        await store.close()


async def test_unknown_session_id_fails_clearly_and_leaves_manager_closed(db_path: Path) -> None:
    async with SessionManager(db_path):
        pass
    store = SessionManager(db_path, session_id=4242)
    with pytest.raises(SessionNotFoundError, match="4242") as caught:
        await store.initialize()
    assert "\n" not in str(caught.value)
    with pytest.raises(StoreNotInitializedError):
        await store.db()


async def test_add_message_is_committed_before_it_returns(
    store: SessionManager, db_path: Path
) -> None:
    message_id = await store.add_message(user("durable"), created_at=1234.5)
    # A second connection sees it at once: nothing waits in an open transaction.
    with closing(sqlite3.connect(db_path, isolation_level=None)) as other:
        row = other.execute(
            "SELECT session_id, kind, created_at FROM messages WHERE id = ?", (message_id,)
        ).fetchone()
        counts = other.execute(
            "SELECT message_count, compaction_count, updated_at FROM sessions WHERE id = ?",
            (store.session_id,),
        ).fetchone()
    assert row == (store.session_id, "session", 1234.5)
    assert counts[0:2] == (1, 0)


async def test_signature_bytes_survive_close_and_reopen_byte_for_byte(db_path: Path) -> None:
    rng = random.Random(7)
    text_signature = bytes(rng.randrange(256) for _ in range(300)) + b"\x00\xff\xfe"
    call_signature = bytes(rng.randrange(256) for _ in range(64))
    event = SessionEvent(
        role="model",
        parts=[
            TextPart(
                text="thinking",
                thought=True,
                thought_signature_b64=encode_signature(text_signature),
            ),
            FunctionCallPart(
                function_call=FunctionCallData(name="read_file", args={"path": "a"}, id="c1"),
                thought_signature_b64=encode_signature(call_signature),
            ),
        ],
    )
    async with SessionManager(db_path) as store:
        message_id = await store.add_message(event)
    store = await reopened(db_path)
    try:
        [loaded] = await store.load_messages()
        [stored] = await store.context_messages()
    finally:
        await store.close()
    assert stored.id == message_id
    assert isinstance(loaded, SessionEvent)
    assert loaded.parts[0].thought_signature == text_signature  # type: ignore[union-attr]
    assert loaded.function_calls[0].thought_signature == call_signature
    assert loaded.model_dump_json() == event.model_dump_json()
    content = loaded.to_content()
    assert content.parts is not None
    assert content.parts[1].thought_signature == call_signature


# -- the in-memory context ---------------------------------------------------


async def test_context_without_compaction_is_every_row(store: SessionManager) -> None:
    for text in ["a", "b", "c"]:
        await store.add_message(user(text))
    assert texts(await store.load_messages()) == ["a", "b", "c"]
    ids = [m.id for m in await store.context_messages()]
    assert ids == sorted(ids) and len(ids) == 3


async def test_compaction_without_kept_from_id_starts_the_context_after_it(
    store: SessionManager, db_path: Path
) -> None:
    await store.add_message(user("old 1"))
    await store.add_message(model("old 2"))
    await store.add_message(summary("S1"))
    await store.add_message(user("new 1"))
    expected = ["S1", "new 1"]
    assert texts(await store.load_messages()) == expected
    other = await reopened(db_path)
    try:
        assert texts(await other.load_messages()) == expected
    finally:
        await other.close()


async def test_compaction_with_kept_from_id_keeps_the_rows_from_the_split_point(
    store: SessionManager, db_path: Path
) -> None:
    await store.add_message(user("u1"))
    await store.add_message(model("m1"))
    kept = await store.add_message(user("u2"))
    await store.add_message(model("m2"))
    compaction = await store.add_message(summary("S", kept_from_id=kept))
    await store.add_message(user("u3"))
    expected = ["S", "u2", "m2", "u3"]
    assert texts(await store.load_messages()) == expected
    context = await store.context_messages()
    assert context[0].id == compaction and context[0].kind == "compaction"
    other = await reopened(db_path)
    try:
        assert texts(await other.load_messages()) == expected
    finally:
        await other.close()


async def test_latest_compaction_wins_and_earlier_summaries_are_listed(
    store: SessionManager,
) -> None:
    first = await store.add_message(user("u1"), created_at=10.0)
    s1 = await store.add_message(summary("S1", kept_from_id=first), created_at=11.0)
    u2 = await store.add_message(user("u2"), created_at=12.0)
    s2 = await store.add_message(summary("S2", kept_from_id=u2), created_at=13.0)
    assert texts(await store.load_messages()) == ["S2", "u2"]
    records = await store.compaction_summaries()
    assert [(r.message_id, r.summary, r.kept_from_id, r.created_at) for r in records] == [
        (s1, "S1", first, 11.0),
        (s2, "S2", u2, 13.0),
    ]
    info = await store.get_session(store.session_id)
    assert (info.message_count, info.compaction_count) == (4, 2)


async def test_split_point_before_what_memory_holds_reloads_exactly(
    store: SessionManager, db_path: Path
) -> None:
    u1 = await store.add_message(user("u1"))
    await store.add_message(model("m1"))
    await store.add_message(summary("S1"))  # memory now holds nothing before this
    await store.add_message(user("u2"))
    await store.add_message(summary("S2", kept_from_id=u1))  # reaches back past S1
    expected = ["S2", "u1", "m1", "u2"]
    assert texts(await store.load_messages()) == expected
    other = await reopened(db_path)
    try:
        assert texts(await other.load_messages()) == expected
    finally:
        await other.close()


async def test_in_memory_context_always_equals_a_fresh_load(store: SessionManager) -> None:
    rng = random.Random(1234)
    ids: list[int] = []
    for step in range(120):
        roll = rng.random()
        if roll < 0.12 and ids:
            kept = rng.choice([None, rng.choice(ids), ids[-1] + 1])
            ids.append(await store.add_message(summary(f"S{step}", kept_from_id=kept)))
        else:
            event = user(f"u{step}") if roll < 0.6 else model(f"m{step}")
            ids.append(await store.add_message(event))
        fresh, _ = await load_context(await store.db(), store.session_id)
        assert [m.id for m in await store.context_messages()] == [m.id for m in fresh.messages]
        assert texts(await store.load_messages()) == texts(fresh.events)


async def test_opening_reads_the_context_only_when_first_used(db_path: Path) -> None:
    async with SessionManager(db_path) as store:
        await store.add_message(user("hello"))
    async with SessionManager(db_path) as store:  # reopened: context not read yet
        trace = SqlTrace()
        await trace.attach(await store.db())
        assert texts(await store.load_messages()) == ["hello"]
        read = list(trace.statements)
        assert await store.load_messages() and trace.statements == read
        await trace.detach(await store.db())
    assert any("FROM messages" in statement for statement in read)


async def test_load_messages_serves_from_memory_without_touching_sqlite(
    store: SessionManager, db_path: Path
) -> None:
    await store.add_message(user("hello"))
    await store.add_message(model("hi"))
    await store.load_messages()  # the first use reads the context (opening does not)
    trace = SqlTrace()
    await trace.attach(await store.db())
    for _ in range(20):
        events = await store.load_messages()
        messages = await store.context_messages()
    await trace.detach(await store.db())
    assert trace.statements == []
    assert texts(events) == ["hello", "hi"] and len(messages) == 2

    # A row written behind the manager's back is not seen until a reload,
    # which shows the context really is the in-memory copy.
    with closing(sqlite3.connect(db_path, isolation_level=None)) as other:
        other.execute(
            "INSERT INTO messages(session_id, kind, event_json, created_at) VALUES (?, ?, ?, ?)",
            (store.session_id, "session", user("sneaky").model_dump_json(), 1.0),
        )
    assert texts(await store.load_messages()) == ["hello", "hi"]
    await store.reload()
    assert texts(await store.load_messages()) == ["hello", "hi", "sneaky"]


async def test_load_messages_returns_a_copy(store: SessionManager) -> None:
    await store.add_message(user("one"))
    events = await store.load_messages()
    events.append(user("not stored"))  # the agent may add a transient nudge
    events.clear()
    assert texts(await store.load_messages()) == ["one"]


async def test_add_message_is_one_write_transaction(store: SessionManager) -> None:
    await store.add_message(user("the first one also stores the session"))
    trace = SqlTrace()
    await trace.attach(await store.db())
    await store.add_message(user("traced"))
    await trace.detach(await store.db())
    # FTS5's own nested statements show up too ("-- ..." and 'main'.* ones).
    ours = [s for s in trace.statements if not s.startswith("--") and "'main'." not in s]
    verbs = [s.split()[0].upper() for s in ours]
    # The SELECTs: the session is not in the trash (deleted in another window),
    # and its lease (another process's turn must not interleave).
    assert verbs == ["BEGIN", "SELECT", "SELECT", "INSERT", "INSERT", "UPDATE", "COMMIT"]


async def test_a_cancelled_caller_still_gets_its_message_stored(store: SessionManager) -> None:
    task = asyncio.create_task(store.add_message(user("finish me")))
    await asyncio.sleep(0)  # the write is under way
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await store.add_message(model("next"))  # waits for the shielded write
    rows = await store.load_all()
    assert texts([m.event for m in rows if m.event]) == ["finish me", "next"]
    assert texts(await store.load_messages()) == ["finish me", "next"]


async def test_concurrent_adds_are_serialised(store: SessionManager) -> None:
    ids = await asyncio.gather(*(store.add_message(user(f"n{i}")) for i in range(30)))
    assert len(set(ids)) == 30
    context = await store.context_messages()
    assert [m.id for m in context] == sorted(ids)
    info = await store.get_session(store.session_id)
    assert info.message_count == 30


async def test_add_message_rejects_non_events(store: SessionManager) -> None:
    with pytest.raises(TypeError):
        await store.add_message("hello")  # type: ignore[arg-type]


# -- titles ---------------------------------------------------------------------


async def test_title_comes_from_the_first_user_message(store: SessionManager) -> None:
    info = await store.get_session(store.session_id)
    assert info.title is None and info.display_title == "Untitled session"
    await store.add_message(model("model speaks first"))
    await store.add_message(tool_response("ls", "a b"))
    long_text = "Plan   my\ttrip\n to Kyoto " + "with many details " * 10
    await store.add_message(user(long_text))
    await store.add_message(user("a later message"))
    title = (await store.get_session(store.session_id)).title
    assert title is not None
    assert title.startswith("Plan my trip to Kyoto with many")
    assert title.endswith("…") and len(title) <= 60


async def test_a_rename_is_never_overwritten_and_none_rederives(store: SessionManager) -> None:
    sid = store.session_id
    await store.rename_session(sid, "  My   trip ")
    await store.add_message(user("first words"))
    assert (await store.get_session(sid)).title == "My trip"
    info = await store.rename_session(sid, None)
    assert info.title == "first words"
    await store.rename_session(sid, "Renamed")
    await store.add_message(user("more words"))
    assert (await store.get_session(sid)).title == "Renamed"
    with pytest.raises(SessionNotFoundError):
        await store.rename_session(999, "nope")


# -- sessions --------------------------------------------------------------------


async def test_new_switch_and_delete_sessions(store: SessionManager) -> None:
    first = store.session_id
    await store.add_message(user("in first"))
    second = await store.new_session("Second")
    assert store.session_id == second.id and second.title == "Second"
    assert await store.load_messages() == []
    await store.add_message(user("in second"))
    info = await store.switch_session(first)
    assert info.id == first and texts(await store.load_messages()) == ["in first"]

    await store.delete_session(second.id)  # not the current one: to the trash
    assert store.session_id == first
    assert [s.id for s in await store.list_sessions()] == [first]
    assert await store.search("second") == []
    with pytest.raises(SessionNotFoundError):
        await store.switch_session(second.id)
    assert await store.empty_trash() == 1  # gone for good only now
    with pytest.raises(SessionNotFoundError):
        await store.delete_session(second.id)
    with pytest.raises(SessionNotFoundError):
        await store.get_session(second.id)


async def test_deleting_the_current_session_starts_a_fresh_one(
    store: SessionManager, db_path: Path
) -> None:
    old = store.session_id
    await store.add_message(user("to be cleared"))
    await store.delete()  # the seed's "clear"
    assert store.session_id != old
    assert await store.load_messages() == []
    assert await store.list_sessions() == []  # the fresh one is stored with its first message
    assert await store.search("cleared") == []
    assert [s.id for s in await store.list_trash()] == [old]  # moved there, not removed
    with closing(sqlite3.connect(db_path, isolation_level=None)) as other:
        assert other.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 1
    new_id = await store.add_message(user("after clear"))
    assert texts(await store.load_messages()) == ["after clear"]
    assert new_id > 1  # ids are never reused


async def test_list_sessions_pages_newest_first_without_reading_messages(
    store: SessionManager,
) -> None:
    created = [store.session_id]
    await store.add_message(user("session 0"), created_at=LATER)
    for index in range(1, 7):
        created.append((await store.new_session()).id)
        await store.add_message(user(f"session {index}"), created_at=LATER + index)
        await store.add_message(summary(f"sum {index}"), created_at=LATER + index + 0.5)
    trace = SqlTrace()
    await trace.attach(await store.db())
    page1 = await store.list_sessions(limit=3)
    page2 = await store.list_sessions(limit=3, offset=3)
    page3 = await store.list_sessions(limit=3, offset=6)
    await trace.detach(await store.db())
    assert not any("messages" in statement for statement in trace.statements)
    listed = [s.id for s in page1 + page2 + page3]
    assert listed == list(reversed(created))
    top = page1[0]
    assert (top.title, top.message_count, top.compaction_count) == ("session 6", 2, 1)
    assert top.updated_at == LATER + 6.5
    assert page3[0].title == "session 0" and page3[0].compaction_count == 0
    with pytest.raises(ValueError):
        await store.list_sessions(limit=-1)


# -- history ---------------------------------------------------------------------


async def test_load_all_returns_everything_and_pages_backwards(store: SessionManager) -> None:
    ids = [await store.add_message(user(f"m{i}")) for i in range(10)]
    ids.append(await store.add_message(summary("hides the rest")))
    ids.append(await store.add_message(user("after")))
    everything = await store.load_all()
    assert [m.id for m in everything] == ids  # compaction hid nothing from here
    assert texts(await store.load_messages()) == ["hides the rest", "after"]

    tail = await store.load_all(limit=4)
    assert [m.id for m in tail] == ids[-4:]
    older = await store.load_all(before_id=tail[0].id, limit=4)
    assert [m.id for m in older] == ids[-8:-4]
    oldest = await store.load_all(before_id=older[0].id, limit=4)
    assert [m.id for m in oldest] == ids[:4]
    assert await store.load_all(before_id=oldest[0].id, limit=4) == []
    assert [m.id for m in await store.load_all(before_id=ids[3])] == ids[:3]


async def test_load_after_pages_forwards_back_to_the_newest(store: SessionManager) -> None:
    first = store.session_id
    ids = [await store.add_message(user(f"m{i}")) for i in range(10)]
    await store.new_session()
    await store.add_message(user("another session's"))
    await store.switch_session(first)
    page = await store.load_after(0, limit=4)
    assert [m.id for m in page] == ids[:4]
    page = await store.load_after(page[-1].id, limit=4)
    assert [m.id for m in page] == ids[4:8]
    page = await store.load_after(page[-1].id, limit=4)
    assert [m.id for m in page] == ids[8:]  # the newest, and not the other session's
    assert await store.load_after(ids[-1], limit=4) == []
    with pytest.raises(ValueError):
        await store.load_after(ids[0], limit=-1)


async def test_load_all_of_another_session(store: SessionManager) -> None:
    first = store.session_id
    await store.add_message(user("first's"))
    await store.new_session()
    await store.add_message(user("second's"))
    assert [
        m.event.text for m in await store.load_all(first) if isinstance(m.event, SessionEvent)
    ] == ["first's"]
    with pytest.raises(SessionNotFoundError):
        await store.load_all(12345)


# -- search ----------------------------------------------------------------------


async def test_search_spans_sessions_and_marks_the_match(store: SessionManager) -> None:
    first = store.session_id
    await store.add_message(user("Where is the Kyoto train station?"))
    await store.add_message(model("Near the centre.", thought="secret kyoto musings"))
    await store.add_message(tool_response("read_file", "kyoto in tool output"))
    second = await store.new_session("Travel notes")
    s_id = await store.add_message(summary("The user asked about Kyoto trains."))
    hits = await store.search("kyoto")
    by_message = {(h.session_id, h.kind, h.role) for h in hits}
    # A tool result is the tool's, not the user's, though it travels with role "user".
    assert by_message == {
        (first, "session", "user"),
        (first, "session", "tool"),
        (second.id, "compaction", None),
    }
    summary_hit = next(h for h in hits if h.message_id == s_id)
    assert summary_hit.session_title == "Travel notes"
    assert f"{MATCH_START}Kyoto{MATCH_END}" in summary_hit.snippet
    assert ("Kyoto", True) in summary_hit.snippet_segments()
    # thoughts are not indexed; tool output is
    assert await store.search("musings") == []
    assert [h.message_id for h in await store.search("output")] == [3]
    # prefix on the last term; any term matches, the message with both first
    assert {h.message_id for h in await store.search("kyo")} == {h.message_id for h in hits}
    assert (await store.search("kyoto station"))[0].message_id == 1
    assert await store.search("kyoto station ") != []
    assert await store.search("stat ") == []  # a finished word is not a prefix
    only_second = await store.search("kyoto", session_id=second.id)
    assert [h.message_id for h in only_second] == [s_id]


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        "AND(",
        "*",
        "NEAR",
        "NEAR(a b, 2)",
        "",
        "   ",
        "-",
        "^",
        "a:b",
        "text:foo",
        "(",
        ")",
        "OR",
        "NOT",
        "foo AND",
        'say "hi',
        "{col}",
        "🙂",
        "\x00",
        "c++",
        "'; DROP TABLE messages; --",
    ],
)
async def test_hostile_queries_never_break_search(store: SessionManager, query: str) -> None:
    await store.add_message(user('She said "hi" and NEAR the c++ AND( code: foo'))
    hits = await store.search(query)
    assert isinstance(hits, list)
    # and the table is still there
    assert len(await store.load_all()) == 1


async def test_search_finds_quoted_and_operator_words_literally(store: SessionManager) -> None:
    await store.add_message(user('She said "hi" and NEAR the AND( code'))
    await store.add_message(user("nothing here"))
    for query in ['"hi"', "near", "AND(", 'said "hi', "NEAR the"]:
        assert len(await store.search(query)) == 1, query
    for query in ['"', "*", "", "  ", "()", "-"]:
        assert await store.search(query) == [], query


async def test_search_limit(store: SessionManager) -> None:
    for index in range(10):
        await store.add_message(user(f"repeat {index}"))
    assert len(await store.search("repeat", limit=3)) == 3
    assert await store.search("repeat", limit=0) == []


async def test_tool_results_are_the_rows_with_responses_only(store: SessionManager) -> None:
    first_session = store.session_id
    await store.add_message(user('a message quoting "function_response" in its text'))
    first = await store.add_message(tool_response("read_file", "one"))
    await store.add_message(model("m"))
    second = await store.add_message(tool_response("run_command", "two"))
    await store.new_session()
    await store.add_message(tool_response("read_file", "elsewhere"))
    rows = await store.tool_results(session_id=first_session)
    assert [r.id for r in rows] == [first, second]
    earlier = await store.tool_results(session_id=first_session, before_id=second)
    assert [r.id for r in earlier] == [first]
    assert len(await store.tool_results()) == 1  # the current session by default


@pytest.mark.parametrize(
    "bad", [{"limit": -1}, {"limit": 2.5}, {"before": 10**20}, {"after": True}]
)
async def test_replay_refuses_a_bad_page_argument_in_one_sentence(
    store: SessionManager, bad: dict[str, object]
) -> None:
    with pytest.raises(ValueError, match="must be a whole number"):
        await store.replay(lambda *, event: None, **bad)  # type: ignore[arg-type]


async def test_an_empty_replay_page_says_there_is_nothing_more(store: SessionManager) -> None:
    """``more`` with no row read would send a pager back to the newest page forever."""
    await store.add_message(user("hi"))
    page = await store.replay(lambda *, event: None, limit=0)
    assert not page.more and page.oldest_id is None
