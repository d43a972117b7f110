"""The memories table (schema 8): kept, suggested, accepted, edited, deleted, chosen for a prompt.

A real SessionManager on a SQLite file in tmp_path; a version-7 file is
upgraded in place.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from helpers.events import model, texts, user
from helpers.old_files import as_version

from koroku_tui.store import (
    SCHEMA_VERSION,
    MemoryNotFoundError,
    SessionManager,
    StoreWriteError,
)
from koroku_tui.store.memories import MAX_MEMORY_CHARS

CAP = 4_000


async def test_a_kept_memory_names_its_session_and_the_users_message_and_outlives_a_restart(
    tmp_path: Path,
) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        asked = await store.add_message(user("Remember that I am vegetarian"))
        await store.add_message(model("Noted."))
        kept = await store.keep_memory("  The user is vegetarian.  ")
        again = await store.keep_memory("The user is vegetarian.")
        session = store.session_id
    assert (kept.text, kept.state, kept.session_id, kept.message_id) == (
        "The user is vegetarian.",
        "memory",
        session,
        asked,
    )
    assert again.id == kept.id  # the same fact is not kept twice
    async with SessionManager(path) as store:
        [listed] = await store.list_memories()
        assert (listed.id, listed.source_state) == (kept.id, "live")
        assert listed.source_title == "Remember that I am vegetarian"
        shown = await store.memories_for_prompt("", CAP)
        assert [m.text for m in shown.memories] == ["The user is vegetarian."]


async def test_a_deleted_memory_leaves_every_prompt_and_its_number_is_never_reused(
    store: SessionManager,
) -> None:
    await store.add_message(user("I live in Lyon"))
    lyon = await store.keep_memory("The user lives in Lyon.")
    tea = await store.keep_memory("The user drinks tea, not coffee.")
    gone = await store.delete_memory(lyon.id)
    assert gone.text == "The user lives in Lyon."
    shown = await store.memories_for_prompt("Lyon", CAP)
    assert [m.id for m in shown.memories] == [tea.id]
    assert await store.related_memories("Lyon") == []
    with pytest.raises(MemoryNotFoundError, match=f"There is no memory {lyon.id} "):
        await store.delete_memory(lyon.id)
    newer = await store.add_memory("The user lives in Lyon.")
    assert newer.id > tea.id  # AUTOINCREMENT: "memory 1" never names another fact
    # The conversation it came from stays.
    assert texts([m.event for m in await store.load_all()]) == ["I live in Lyon"]


async def test_suggestions_wait_for_acceptance_and_repeat_nothing_known(
    store: SessionManager,
) -> None:
    await store.add_message(user("hello"))
    await store.keep_memory("The user is vegetarian.")
    made = await store.suggest_memories(
        [
            "The user has a cat named Miso.",
            "the user is VEGETARIAN.",
            "",
            "x" * 5_000,
            "The user has a cat named Miso.",
        ],
        message_id=1,
    )
    assert [(m.text, m.state, m.message_id) for m in made] == [
        ("The user has a cat named Miso.", "suggestion", 1)
    ]
    assert [m.text for m in (await store.memories_for_prompt("cat", CAP)).memories] == [
        "The user is vegetarian."
    ]
    with pytest.raises(MemoryNotFoundError):
        await store.forget_memory(made[0].id)  # the model never saw it
    accepted = await store.accept_memory(made[0].id)
    assert accepted.state == "memory"
    assert [m.text for m in (await store.memories_for_prompt("", CAP)).memories] == [
        "The user has a cat named Miso.",
        "The user is vegetarian.",
    ]
    edited = await store.edit_memory(made[0].id, "The user has two cats.")
    assert [m.id for m in await store.related_memories("cats")] == [edited.id]
    assert await store.related_memories("Miso") == []


async def test_remembering_what_is_kept_or_suggested_in_other_case_keeps_it_once(
    store: SessionManager,
) -> None:
    """The model calling remember again, worded the same but for case and spacing."""
    await store.add_message(user("hello"))
    kept = await store.keep_memory("The user is vegetarian.")
    [cat] = await store.suggest_memories(["The user has a cat named Miso."])
    assert (await store.keep_memory("the user  is VEGETARIAN.")).id == kept.id
    again = await store.keep_memory("the user has a cat named miso.")
    assert (again.id, again.state) == (cat.id, "memory")  # the suggestion, accepted
    assert [m.text for m in await store.list_memories()] == [
        "The user has a cat named Miso.",
        "The user is vegetarian.",
    ]


async def test_past_the_cap_the_prompt_holds_the_related_and_the_newest(
    store: SessionManager,
) -> None:
    # Every memory 300 characters: 13 fit the cap, and nothing fills its last 100.
    expiry = "The user's passport expires on 9 March 2027."
    passport = await store.add_memory(expiry.ljust(300, "."))
    fillers = [await store.add_memory(f"Filler fact {n:02}: ".ljust(300, "z")) for n in range(40)]
    shown = await store.memories_for_prompt("When does my passport expire?", CAP)
    ids = [m.id for m in shown.memories]
    assert sum(len(m.text) for m in shown.memories) <= CAP
    # The 12 newest, newest first, then the oldest: past the cap, related to the question.
    assert ids == [f.id for f in fillers[-12:][::-1]] + [passport.id]
    assert shown.left_out == 41 - 13
    unrelated = await store.memories_for_prompt("what about the weather", CAP)
    assert [m.id for m in unrelated.memories] == [f.id for f in fillers[-13:][::-1]]


async def test_hostile_text_is_refused_in_one_sentence_or_stored_storable(
    store: SessionManager,
) -> None:
    with pytest.raises(ValueError, match=r"^A memory is at most 1,000 characters and this one"):
        await store.add_memory("x" * 100_000)
    with pytest.raises(ValueError, match="needs some text"):
        await store.add_memory(" \n\x00 ")
    odd = await store.add_memory("a\x00b\ud800c\x1b[2J\u202e")
    assert odd.text == "ab\ufffdc\x1b[2J\u202e"  # stored as given, shown safe by its readers
    assert len((await store.add_memory("y" * MAX_MEMORY_CHARS)).text) == MAX_MEMORY_CHARS
    # 100 KB written behind the store's back: a request carries its first 1,000 characters.
    with closing(sqlite3.connect(store.path, isolation_level=None)) as conn:
        conn.execute(
            "INSERT INTO memories(text, state, created_at, updated_at) VALUES (?, 'memory', 0, 0)",
            ("z" * 100_000,),
        )
    shown = await store.memories_for_prompt("", 100_000)
    assert [len(m.text) for m in shown.memories] == [MAX_MEMORY_CHARS, MAX_MEMORY_CHARS, 9]


async def test_a_read_only_store_refuses_memory_writes(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        await store.add_message(user("hi"))
        await store.add_memory("kept")
    async with SessionManager(path, read_only=True) as store:
        assert [m.text for m in await store.list_memories()] == ["kept"]
        with pytest.raises(StoreWriteError):
            await store.add_memory("more")


async def test_a_version_7_file_gains_the_memories(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        await store.add_message(user("before the upgrade"))
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        as_version(conn, 7)
    async with SessionManager(path) as store:
        assert [s.title for s in await store.list_sessions()] == ["before the upgrade"]
        assert await store.list_memories() == []
        await store.add_memory("after the upgrade")
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
