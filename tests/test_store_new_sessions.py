"""A session is stored with its first message (issue 12, item 9).

Every launch and every ctrl+l used to insert a session row, and the history
filled with "Untitled session · 0 messages". A new session's id is reserved
at once (no other process can get it) and its row is written in the
transaction of its first message. Real SQLite files, several managers on one
file as several windows would have.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from helpers.events import model, texts, user

from koroku_tui.store import SessionManager, StoreError, queries


def session_rows(path: Path) -> list[tuple[int, int]]:
    """``(id, message_count)`` of every stored session."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        return conn.execute("SELECT id, message_count FROM sessions ORDER BY id").fetchall()


async def test_launching_twice_without_sending_leaves_no_session(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    for _ in range(2):
        async with SessionManager(path) as store:
            assert not store.session_saved
            assert await store.list_sessions() == []
            assert await store.load_all() == []
    assert session_rows(path) == []
    async with SessionManager(path) as store:  # the ids left unused were given back
        await store.add_message(user("at last"))
        assert store.session_id == 1


async def test_new_sessions_without_a_message_are_never_listed(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        await store.add_message(user("plan the trip"))
        kept = store.session_id
        for _ in range(3):
            info = await store.new_session()
            assert info.message_count == 0 and info.id == store.session_id
        assert [s.id for s in await store.list_sessions()] == [kept]
        await store.add_message(user("a new topic"))
        listed = await store.list_sessions()
    assert [(s.id, s.title) for s in listed] == [
        (store_id := listed[0].id, "a new topic"),
        (kept, "plan the trip"),
    ]
    assert store_id == kept + 1  # the three left unused were given back
    assert session_rows(path) == [(kept, 1), (store_id, 1)]


async def test_two_windows_starting_new_sessions_at_once_never_share_one(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    first, second = SessionManager(path), SessionManager(path)
    await first.initialize()
    await second.initialize()
    try:
        await first.new_session()
        await second.new_session()
        assert first.session_id != second.session_id
        await second.add_message(user("from the second window"))
        await first.add_message(user("from the first window"))
        assert texts([m.event for m in await first.load_all()]) == ["from the first window"]
        assert texts([m.event for m in await second.load_all()]) == ["from the second window"]
    finally:
        await second.close()
        await first.close()


async def test_a_turn_begun_before_the_first_message_holds_the_lease_once_stored(
    tmp_path: Path,
) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        await store.begin_turn()
        await store.add_message(user("hello"))
        with closing(sqlite3.connect(path)) as conn:
            leases = conn.execute("SELECT session_id FROM session_leases").fetchall()
        assert leases == [(store.session_id,)]
        await store.end_turn()


async def test_the_title_of_a_new_session_waits_for_its_first_message(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        await store.new_session("Earlier work")
        assert (await store.current_session()).title == "Earlier work"
        assert session_rows(path) == []
        await store.add_message(user("first words"))
        assert (await store.get_session(store.session_id)).title == "Earlier work"


async def test_clearing_or_forking_a_new_session_says_there_is_nothing(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        before = store.session_id
        await store.delete()  # the seed's clear: already fresh
        assert store.session_id == before and not store.session_saved
        try:
            await store.fork(store.session_id)
        except ValueError as exc:
            assert "nothing to fork" in str(exc)
        else:
            raise AssertionError("a fork of nothing was made")
    assert session_rows(path) == []


async def test_a_fork_before_the_first_message_is_stored_with_its_first_message(
    tmp_path: Path,
) -> None:
    """f on a session's first message copies nothing: the fork waits like a new session."""
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        first = await store.add_message(user("plan the trip"))
        await store.add_message(model("Where to?"))
        source = store.session_id
        fork = await store.fork(source, first)
        await store.switch_session(fork.id)
        assert (await store.current_session()).title == "plan the trip (fork)"
        assert await store.load_messages() == []
        assert [s.id for s in await store.list_sessions()] == [source]
    assert session_rows(path) == [(source, 2)]  # left without a message: no empty row
    async with SessionManager(path) as store:
        fork = await store.fork(source, first)
        assert fork.id == source + 1  # the id left unused was given back
        await store.switch_session(fork.id)
        await store.add_message(user("plan it differently"))
        stored = await store.get_session(fork.id)
        assert [s.id for s in await store.list_sessions()] == [fork.id, source]
    assert (stored.title, stored.forked_from_session, stored.forked_from_message) == (
        "plan the trip (fork)",
        source,
        first,
    )
    assert session_rows(path) == [(source, 2), (fork.id, 1)]


async def test_a_failed_new_session_keeps_its_id_out_of_another_windows_hands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ctrl+l fails half way (the file busy): the id this window holds is never handed out."""
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as mine:
        await mine.add_message(user("an old talk"))
        await mine.new_session()
        held = mine.session_id
        reserve = queries.reserve_session_id

        async def busy(*args: object, **kwargs: object) -> int:
            raise sqlite3.OperationalError("database is locked")

        monkeypatch.setattr(queries, "reserve_session_id", busy)
        with pytest.raises(StoreError):
            await mine.new_session()
        monkeypatch.setattr(queries, "reserve_session_id", reserve)
        async with SessionManager(path) as other:  # a window opened since
            await other.new_session()
            assert other.session_id != held
            await other.add_message(user("the other window's secret"))
            assert await mine.catch_up() == []
            await mine.add_message(user("mine"))
            assert [m.session_id for m in await mine.load_all()] == [held]
