"""``SessionManager.read_session``: a window of a past session, centred on a message.

Real SQLite in tmp_path. The model pages with it, so the window, the
``more_before``/``more_after`` marks and the one-sentence refusals matter.
"""

from __future__ import annotations

import pytest
from helpers.events import model, texts, user

from koroku_tui.store import SessionManager, SessionNotFoundError


async def session_of(store: SessionManager, rows: int) -> tuple[int, list[int]]:
    await store.new_session()
    ids = [
        await store.add_message(user(f"question {n}") if n % 2 == 0 else model(f"answer {n}"))
        for n in range(rows)
    ]
    session = store.session_id
    await store.new_session()
    return session, ids


async def test_the_window_is_centred_on_the_message(store: SessionManager) -> None:
    session, ids = await session_of(store, 100)
    excerpt = await store.read_session(session, around_message_id=ids[50], limit=11)
    assert [m.id for m in excerpt.messages] == ids[45:56]
    assert (excerpt.more_before, excerpt.more_after) == (True, True)
    assert excerpt.session.id == session and excerpt.session.message_count == 100


async def test_near_an_end_the_other_side_fills_the_window(store: SessionManager) -> None:
    session, ids = await session_of(store, 30)
    start = await store.read_session(session, around_message_id=ids[1], limit=10)
    assert [m.id for m in start.messages] == ids[:10]
    assert (start.more_before, start.more_after) == (False, True)
    end = await store.read_session(session, around_message_id=ids[-1], limit=10)
    assert [m.id for m in end.messages] == ids[-10:]
    assert (end.more_before, end.more_after) == (True, False)
    whole = await store.read_session(session, around_message_id=ids[3], limit=40)
    assert [m.id for m in whole.messages] == ids
    assert (whole.more_before, whole.more_after) == (False, False)


async def test_without_a_message_the_newest_rows(store: SessionManager) -> None:
    session, ids = await session_of(store, 30)
    excerpt = await store.read_session(session, limit=5)
    assert [m.id for m in excerpt.messages] == ids[-5:]
    assert (excerpt.more_before, excerpt.more_after) == (True, False)
    assert texts([m.event for m in excerpt.messages])[-1] == "answer 29"


async def test_other_sessions_rows_never_leak_into_the_window(store: SessionManager) -> None:
    # Two sessions written in turns: their ids interleave.
    await store.add_message(user("first opens"))  # stored: it can be switched back to
    first = store.session_id
    second = (await store.new_session()).id
    await store.add_message(user("second opens"))
    first_ids: list[int] = []
    for n in range(10):
        await store.switch_session(first)
        first_ids.append(await store.add_message(user(f"first {n}")))
        await store.switch_session(second)
        await store.add_message(user(f"second {n}"))
    excerpt = await store.read_session(first, around_message_id=first_ids[5], limit=4)
    assert [m.id for m in excerpt.messages] == first_ids[4:8]
    assert {m.session_id for m in excerpt.messages} == {first}


async def test_limit_is_clamped(store: SessionManager) -> None:
    session, ids = await session_of(store, 250)
    assert len((await store.read_session(session, limit=1_000)).messages) == 200
    one = await store.read_session(session, around_message_id=ids[7], limit=0)
    assert [m.id for m in one.messages] == [ids[7]]
    assert len((await store.read_session(session, limit=-5)).messages) == 1


async def test_unknown_session_and_foreign_message_are_refused(store: SessionManager) -> None:
    session, _ = await session_of(store, 3)
    _, other_ids = await session_of(store, 3)
    with pytest.raises(SessionNotFoundError):
        await store.read_session(9_999)
    with pytest.raises(
        ValueError, match=rf"^message {other_ids[0]} is not in session {session}\.$"
    ):
        await store.read_session(session, around_message_id=other_ids[0])
    with pytest.raises(ValueError, match=r"^message 123456 is not in session"):
        await store.read_session(session, around_message_id=123_456)


async def test_an_empty_session_reads_as_nothing(store: SessionManager) -> None:
    excerpt = await store.read_session(store.session_id)
    assert (excerpt.messages, excerpt.more_before, excerpt.more_after) == ([], False, False)
