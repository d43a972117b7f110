"""A damaged database is told as damage, with the way out; a full disk as a full disk.

Real SQLite files, damaged as in ``hostile/databases.py``, opened by the real
store: at open, and under a store that already has the file open. Whatever
operation runs into the damage first (opening, reading the context, listing,
searching, writing), the user reads what is wrong and what to do, never
"free disk space or close other Koroku windows".
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest
from helpers.events import user
from hostile.databases import DAMAGES, WAL_DAMAGES, Damage, garbage_last_page

from koroku_tui.events import SessionEvent
from koroku_tui.store import SessionManager, StoreError, StoreWriteError

MESSAGES = 400
Operation = Callable[[SessionManager], Awaitable[object]]


async def _fill(path: Path, messages: int, start: int = 0) -> None:
    async with SessionManager(path) as store:
        for index in range(start, start + messages):
            await store.add_message(user(f"message {index} " + "y" * 300))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A checkpointed Koroku database with 400 messages, made once for the module."""
    path = tmp_path_factory.mktemp("pristine") / "koroku.db"
    asyncio.run(_fill(path, MESSAGES))
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    yield path


def copy_of(pristine: Path, tmp_path: Path) -> Path:
    path = tmp_path / "koroku.db"
    shutil.copyfile(pristine, path)
    return path


READS_FIRST: list[tuple[str, Operation]] = [
    ("read the context", lambda s: s.load_messages()),
    ("list sessions", lambda s: s.list_sessions()),
    ("search", lambda s: s.search("message")),
    ("load the history", lambda s: s.load_all()),
    ("list tool results", lambda s: s.tool_results()),
    ("write", lambda s: s.add_message(user("one more"))),
]
WRITE_FIRST = READS_FIRST[-1:] + READS_FIRST[:-1]
ORDERS = {"reads first": READS_FIRST, "write first": WRITE_FIRST}


async def first_failure(store: SessionManager, operations: list[tuple[str, Operation]]) -> str:
    """Run the operations in order; the message of the first StoreError (opening included)."""
    try:
        await store.initialize()
        for _, operation in operations:
            await operation(store)
    except StoreError as exc:
        return str(exc)
    finally:
        await store.close()
    raise AssertionError("the damage went unnoticed by every operation")


def assert_told(message: str, told: str, path: Path) -> None:
    assert "\n" not in message and str(path) in message
    assert "Traceback" not in message
    # The old advice sent the user after the wrong thing.
    assert "free disk space" not in message.lower()
    assert "close other koroku windows" not in message.lower()
    if told == "damaged":
        assert "the file is damaged" in message
        # The damaged file is copied aside before anything is tried on it.
        assert f"cp {path.name} koroku-damaged.db" in message
        assert "sqlite3 koroku-damaged.db .recover > koroku-recovered.sql" in message
        assert str(path.parent) in message and "move the file aside" in message
    else:
        assert "not an SQLite database, or its first page is damaged" in message
        assert "move it aside" in message


def damage_id(case: tuple[Damage, str, bool]) -> str:
    return case[0].__name__


@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize("case", DAMAGES, ids=damage_id)
async def test_a_damaged_file_is_told_as_damage_at_open(
    pristine: Path, tmp_path: Path, case: tuple[Damage, str, bool], order: str
) -> None:
    damage, told, _ = case
    path = copy_of(pristine, tmp_path)
    damage(path)
    message = await first_failure(SessionManager(path), ORDERS[order])
    assert_told(message, told, path)


@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize("case", [c for c in DAMAGES if c[2]], ids=damage_id)
async def test_damage_under_an_open_store_is_told_as_damage(
    pristine: Path, tmp_path: Path, case: tuple[Damage, str, bool], order: str
) -> None:
    damage, told, _ = case
    path = copy_of(pristine, tmp_path)
    store = SessionManager(path)
    await store.initialize()
    try:
        assert len(await store.load_messages()) == MESSAGES  # the context is in memory
        damage(path)
    except BaseException:
        await store.close()
        raise
    message = await first_failure(store, ORDERS[order])
    assert_told(message, told, path)


async def test_a_write_into_a_damaged_page_says_nothing_was_half_written(
    pristine: Path, tmp_path: Path
) -> None:
    path = copy_of(pristine, tmp_path)
    async with SessionManager(path) as store:
        before = len(await store.load_messages())
        garbage_last_page(path)  # where the next row goes
        with pytest.raises(StoreWriteError) as caught:
            await store.add_message(user("into the damaged page"))
        assert len(await store.load_messages()) == before  # nothing phantom in memory
    message = str(caught.value)
    assert message.startswith(f"Koroku could not save to {path}: the file is damaged")
    assert "Nothing was half-written. Quit Koroku, then save what is readable" in message


async def test_a_full_disk_is_told_as_a_full_disk(pristine: Path, tmp_path: Path) -> None:
    path = copy_of(pristine, tmp_path)
    async with SessionManager(path) as store:
        await store.load_messages()
        # SQLite's own cap on the file size gives the real SQLITE_FULL a full disk gives.
        [(pages,)] = await (await store.db()).execute_fetchall("PRAGMA page_count")
        await (await store.db()).execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(StoreWriteError) as caught:
            await store.add_message(user("z" * 200_000))
        await (await store.db()).execute("PRAGMA max_page_count = 1073741823")
        await store.add_message(user("fits again"))  # nothing was left half-done
    message = str(caught.value)
    assert message == (
        f"Koroku could not save to {path}: the disk is full. Nothing was half-written. "
        "Free some disk space and try again."
    )


async def test_a_lock_held_elsewhere_is_told_as_another_window(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path, busy_timeout_ms=100) as store:
        await store.add_message(user("first"))
        with closing(sqlite3.connect(path, isolation_level=None)) as holder:
            holder.execute("BEGIN IMMEDIATE")
            with pytest.raises(StoreWriteError) as caught:
                await store.add_message(user("blocked"))
            holder.execute("ROLLBACK")
    message = str(caught.value)
    assert "another Koroku window or program holds a lock on it" in message
    assert "damaged" not in message and "disk" not in message


async def _crash_snapshot(pristine: Path, tmp_path: Path) -> Path:
    """The files a crash leaves: 50 more messages still in the WAL, not in the main file."""
    live = tmp_path / "live" / "koroku.db"
    live.parent.mkdir()
    shutil.copyfile(pristine, live)
    snapshot = tmp_path / "koroku.db"
    store = SessionManager(live)
    await store.initialize()
    try:
        for index in range(50):
            await store.add_message(user(f"in the log {index}"))
        for suffix in ("", "-wal", "-shm"):
            shutil.copyfile(f"{live}{suffix}", f"{snapshot}{suffix}")
    finally:
        await store.close()
    return snapshot


@pytest.mark.parametrize("damage", WAL_DAMAGES, ids=lambda d: d.__name__)
async def test_a_damaged_log_never_costs_a_row_of_the_main_file(
    pristine: Path, tmp_path: Path, damage: Damage
) -> None:
    path = await _crash_snapshot(pristine, tmp_path)
    damage(path)
    async with SessionManager(path) as store:
        texts = [e.text for e in await store.load_messages() if isinstance(e, SessionEvent)]
        await store.add_message(user("after the crash"))
        assert len(await store.search("after the crash")) == 1
    # SQLite drops log frames that fail their checksum: those rows are gone,
    # which it cannot tell; every row that reached the main file stays.
    assert texts[:MESSAGES] == [f"message {i} " + "y" * 300 for i in range(MESSAGES)]
    assert texts[MESSAGES:] == [f"in the log {i}" for i in range(len(texts) - MESSAGES)]
