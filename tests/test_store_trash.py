"""The trash (schema 6): deleting a session moves it there; only emptying the trash removes it.

Real SQLite files under ``tmp_path`` through ``SessionManager``; a second
manager on the same file stands for another Koroku window.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from helpers.events import model, texts, user

from koroku_tui.store import (
    SessionBusyError,
    SessionInTrashError,
    SessionManager,
    SessionNotFoundError,
)


def row_count(path: Path) -> int:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        return int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])


async def two_sessions(store: SessionManager) -> tuple[int, int]:
    """A past session about marmalade, and a current one about tea."""
    past = store.session_id
    await store.add_messages([user("the marmalade recipe"), model("oranges and sugar")])
    current = (await store.new_session()).id
    await store.add_message(user("green tea or black?"))
    return past, current


async def test_a_deleted_session_is_kept_but_listed_found_and_recalled_nowhere(
    tmp_path: Path,
) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        past, current = await two_sessions(store)
        rows = row_count(path)
        await store.delete_session(past)
        assert row_count(path) == rows  # nothing removed
        assert [s.id for s in await store.list_sessions()] == [current]
        [trashed] = await store.list_trash()
        assert trashed.id == past and trashed.trashed_at is not None
        assert await store.search("marmalade") == []
        assert (await store.search_page("marmalade")).total == 0
        page = await store.search_history("marmalade recipe")
        assert page.hits == [] and page.total == 0
        with pytest.raises(SessionInTrashError, match=f"Session {past} is in the trash"):
            await store.read_session(past)
        with pytest.raises(SessionInTrashError):
            await store.switch_session(past)
        with pytest.raises(SessionInTrashError):
            await store.fork(past)
        # The history screen still reads it, to show what is in the trash.
        assert texts([m.event for m in await store.load_all(past)]) == [
            "the marmalade recipe",
            "oranges and sugar",
        ]

        restored = await store.restore_session(past)
        assert restored.trashed_at is None and await store.list_trash() == []
        assert [s.id for s in await store.list_sessions()] == [current, past]
        assert [h.session_id for h in (await store.search_history("marmalade")).hits] == [past]
        assert (await store.read_session(past)).session.id == past


async def test_a_session_in_the_trash_is_never_opened_by_itself_or_by_session(
    tmp_path: Path,
) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        past, current = await two_sessions(store)
        await store.delete_session(current)  # the newest: the next start must not pick it
    async with SessionManager(path) as store:
        assert store.session_id == past
        assert [s.id for s in await store.list_trash()] == [current]  # still there
    with pytest.raises(SessionInTrashError, match="restore it in the history"):
        await SessionManager(path, session_id=current).initialize()


async def test_deleting_the_current_session_starts_a_fresh_one_and_keeps_it_in_the_trash(
    tmp_path: Path,
) -> None:
    async with SessionManager(tmp_path / "koroku.db") as store:
        past, current = await two_sessions(store)
        await store.delete()  # the seed's "clear"
        assert store.session_id not in (past, current) and not store.session_saved
        assert await store.load_messages() == []
        assert [s.id for s in await store.list_trash()] == [current]
        await store.restore_session(current)
        await store.switch_session(current)
        assert texts(await store.load_messages()) == ["green tea or black?"]


async def test_emptying_the_trash_removes_only_what_is_in_it(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        past, current = await two_sessions(store)
        assert await store.empty_trash() == 0
        await store.delete_session(past)
        assert await store.empty_trash() == 1
        assert row_count(path) == 1  # the tea question
        assert await store.list_trash() == []
        with pytest.raises(SessionNotFoundError):
            await store.get_session(past)
        assert [s.id for s in await store.list_sessions()] == [current]
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        assert conn.execute("SELECT count(*) FROM messages_fts").fetchone()[0] == 1


async def test_a_forks_copies_stay_findable_while_its_source_is_in_the_trash(
    tmp_path: Path,
) -> None:
    async with SessionManager(tmp_path / "koroku.db") as store:
        source = store.session_id
        await store.add_messages([user("the marmalade recipe"), model("oranges and sugar")])
        fork = await store.fork(source)
        await store.new_session()
        assert [h.session_id for h in (await store.search_history("marmalade")).hits] == [source]
        await store.delete_session(source)
        assert [h.session_id for h in (await store.search_history("marmalade")).hits] == [fork.id]
        await store.restore_session(source)
        page = await store.search_history("marmalade")  # found once again, where it was said
        assert [h.session_id for h in page.hits] == [source] and page.total == 1


async def test_deleting_a_fork_that_was_forked_again_finds_its_source_s_words_once(
    tmp_path: Path,
) -> None:
    """A fork of a fork copies the first fork's copies too: deleting the middle one indexed
    them all, and every fact of the original (still live) was found twice, for good once
    the trash was emptied; only the middle fork's own words need its fork's copies."""
    async with SessionManager(tmp_path / "koroku.db") as store:
        source, middle, last = await fork_chain(store)
        await store.delete_session(middle)
        await store.empty_trash()
        assert await found_in(store, "marmalade") == [source]
        assert await found_in(store, "quince") == [last]


async def fork_chain(store: SessionManager) -> tuple[int, int, int]:
    """A source saying "marmalade", its fork adding "quince", a fork of that fork; then a new
    session is current (none of the three is): their ids."""
    source = store.session_id
    await store.add_messages([user("the marmalade recipe"), model("oranges and sugar")])
    middle = (await store.fork(source)).id
    await store.switch_session(middle)
    await store.add_message(user("quince jelly instead"))
    last = (await store.fork(middle)).id
    await store.new_session()
    return source, middle, last


async def found_in(store: SessionManager, words: str) -> list[int]:
    """The sessions of ``words``' hits, in order (a fact found twice is there twice)."""
    return [hit.session_id for hit in (await store.search_history(words)).hits]


async def test_with_the_middle_fork_in_the_trash_the_last_fork_says_the_source_s_words_once(
    tmp_path: Path,
) -> None:
    """Source, a fork, a fork of that: with the middle one in the trash, deleting the source
    lost its words (only the middle one's copies were indexed, and the trash is not
    searched); restoring it found each of them twice (the last fork's copies stayed)."""
    async with SessionManager(tmp_path / "koroku.db") as store:
        source, middle, last = await fork_chain(store)
        await store.delete_session(middle)
        await store.delete_session(source)
        assert await found_in(store, "marmalade") == [last]
        await store.restore_session(source)
        assert await found_in(store, "marmalade") == [source]
        assert await found_in(store, "quince") == [last]
        await store.restore_session(middle)
        assert await found_in(store, "marmalade") == [source]
        assert await found_in(store, "quince") == [middle]


async def test_a_conversation_another_window_is_in_the_middle_of_is_not_deleted(
    tmp_path: Path,
) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as first:
        await first.add_message(user("a long job"))
        async with SessionManager(path, first.session_id, lease_wait=0.05) as second:
            await first.begin_turn(user("still running"))
            with pytest.raises(SessionBusyError):
                await second.delete_session(first.session_id)
            assert await second.list_trash() == []
            await first.end_turn()


async def test_emptying_the_trash_under_another_window_starts_it_afresh_there(
    tmp_path: Path,
) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as first:
        past, current = await two_sessions(first)
        async with SessionManager(path, session_id=past) as second:
            await first.delete_session(past)
            assert await second.empty_trash() == 1
            assert second.session_id != past and not second.session_saved
            await second.add_message(user("after the trash was emptied"))
        assert [s.id for s in await first.list_sessions()][-1] == current
