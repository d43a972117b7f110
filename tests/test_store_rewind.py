"""Rewind and fork in the store: the context they leave, what they keep, what they refuse."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from helpers.events import model, texts, user

from koroku_tui.events import CompactionEvent, SessionEvent
from koroku_tui.store import SessionManager, SessionNotFoundError
from koroku_tui.store.export import export_markdown


def _dump(path: Path) -> list[tuple[object, ...]]:
    """Every row of every table that matters, to prove nothing was written."""
    with closing(sqlite3.connect(path)) as conn:
        return [
            *conn.execute("SELECT * FROM sessions ORDER BY id"),
            *conn.execute("SELECT * FROM messages ORDER BY id"),
            *conn.execute("SELECT rowid, text FROM messages_fts ORDER BY rowid"),
        ]


async def test_rewind_hides_the_turns_from_m_on_and_keeps_their_rows(tmp_path: Path) -> None:
    async with SessionManager(tmp_path / "k.db") as store:
        await store.add_messages([user("a"), model("A"), user("b"), model("B"), user("c")])
        target = await store.rewind(3)
        assert isinstance(target.event, SessionEvent) and target.event.text == "b"
        assert texts(await store.load_messages()) == ["a", "A"]
        await store.add_messages([user("d"), model("D")])
        assert texts(await store.load_messages()) == ["a", "A", "d", "D"]
        rows = await store.load_all()
        assert [m.id for m in rows] == [1, 2, 3, 4, 5, 6, 7, 8]
        assert rows[5].kind == "rewind" and rows[5].rewind is not None and rows[5].event is None
        assert await store.abandoned_spans() == [(3, 5)]
        assert [m.id for m in await store.user_turns()] == [7, 1]
    # A fresh process reads the same context from the file.
    async with SessionManager(tmp_path / "k.db") as store:
        assert texts(await store.load_messages()) == ["a", "A", "d", "D"]
        assert store.skipped_rows == []


async def test_rewind_past_a_compaction_rebuilds_from_the_raw_rows(tmp_path: Path) -> None:
    async with SessionManager(tmp_path / "k.db") as store:
        await store.add_messages([user("a"), model("A"), user("b"), model("B")])
        await store.add_message(CompactionEvent.from_summary("a and b", kept_from_id=3))
        await store.add_messages([user("c"), model("C")])
        assert texts(await store.load_messages()) == ["b", "B", "c", "C"]
        await store.rewind(3)
        assert texts(await store.load_messages()) == ["a", "A"]
        await store.rewind(1)
        assert await store.load_messages() == []


@pytest.mark.parametrize(
    ("message_id", "error"),
    [
        (2, "Message 2 is not a message the user typed"),
        (99, "Message 99 is not in session 1."),
        (3, "Message 3 was already taken back by an earlier rewind"),
        (0, "A message id is a whole number from 1, not 0."),
        (True, "A message id is a whole number from 1, not True."),
    ],
)
async def test_a_bad_rewind_is_one_sentence_and_writes_nothing(
    tmp_path: Path, message_id: int, error: str
) -> None:
    path = tmp_path / "k.db"
    async with SessionManager(path) as store:
        await store.add_messages([user("a"), model("A"), user("b"), model("B")])
        await store.rewind(3)
        before = _dump(path)
        with pytest.raises(ValueError, match="^" + error.replace("(", r"\(").replace(".", r"\.")):
            await store.rewind(message_id)
        assert _dump(path) == before


async def test_fork_copies_the_context_before_m_into_a_new_session(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    async with SessionManager(path) as store:
        source = store.session_id
        await store.add_messages([user("a"), model("A"), user("b"), model("B")], [1.0, 2, 3, 4])
        fork = await store.fork(source, 3)
        assert (fork.forked_from_session, fork.forked_from_message) == (source, 3)
        assert fork.title == "a (fork)" and fork.message_count == 2
        assert store.session_id == source  # not switched to
        copies = await store.load_all(fork.id)
        assert [m.created_at for m in copies] == [1.0, 2.0]
        assert [m.id for m in copies] == [5, 6]
        await store.switch_session(fork.id)
        assert texts(await store.load_messages()) == ["a", "A"]
        whole = await store.fork(source)
        assert whole.forked_from_message is None and whole.message_count == 4


async def test_a_fork_of_a_compacted_session_starts_with_the_summary(tmp_path: Path) -> None:
    async with SessionManager(tmp_path / "k.db") as store:
        source = store.session_id
        await store.add_messages([user("a"), model("A"), user("b"), model("B")])
        await store.add_message(CompactionEvent.from_summary("a", kept_from_id=3))
        await store.add_messages([user("c"), model("C")])
        fork = await store.fork(source, 6)
        await store.switch_session(fork.id)
        context = await store.load_messages()
        assert isinstance(context[0], CompactionEvent) and context[0].summary == "a"
        assert texts(context) == ["b", "B"]
        assert fork.compaction_count == 1


async def test_a_bad_fork_is_one_sentence_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    async with SessionManager(path) as store:
        await store.add_messages([user("a"), model("A")])
        before = _dump(path)
        with pytest.raises(SessionNotFoundError):
            await store.fork(42)
        with pytest.raises(ValueError, match="Message 2 is not a message the user typed"):
            await store.fork(1, 2)
        with pytest.raises(ValueError, match="Message 7 is not in session 1"):
            await store.fork(1, 7)
        assert _dump(path) == before


async def test_another_window_sees_the_rewind_on_its_next_look(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    async with SessionManager(path) as mine:
        await mine.add_messages([user("a"), model("A")])
    async with SessionManager(path) as mine, SessionManager(path) as theirs:
        await mine.add_messages([user("b"), model("B")])
        assert texts(await theirs.load_messages()) == ["a", "A", "b", "B"]
        await mine.rewind(3)
        (seen,) = await theirs.catch_up()  # the other window is told of the rewind...
        assert seen.rewind is not None and seen.rewind.before_message_id == 3
        assert texts(await theirs.load_messages()) == ["a", "A"]  # ...and the context went back
        assert theirs.skipped_rows == []


async def test_readers_of_rows_show_a_rewind_as_a_one_line_marker(tmp_path: Path) -> None:
    async with SessionManager(tmp_path / "k.db") as store:
        await store.add_messages([user("a"), model("A"), user("b")])
        await store.rewind(3)
        seen: list[object] = []
        page = await store.replay(lambda *, event: seen.append(event))
        assert page.replayed == 3 and len(seen) == 3  # replay hands events only
        rows = await store.load_all()
        info = await store.get_session(store.session_id)
    markdown = export_markdown(info, rows)
    assert "## Rewind" in markdown
    assert "rewound to before message #3: the messages from there up to here" in markdown
    assert "Unreadable" not in markdown


async def test_a_damaged_rewind_row_is_skipped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    async with SessionManager(path) as store:
        await store.add_messages([user("a"), model("A"), user("b"), model("B")])
        await store.rewind(3)
        conn = await store.db()
        await conn.execute(
            "UPDATE messages SET event_json = '{\"before_message_id\": 9}' WHERE id = 5"
        )
        await conn.commit()
    async with SessionManager(path) as store:
        # The rewind cannot point forward: ignored, so the model sees more, never less.
        assert texts(await store.load_messages()) == ["a", "A", "b", "B"]
        assert store.skipped_rows == [(5, "a rewind to before message 9 must come after it")]
        assert await store.abandoned_spans() == []


async def test_deleting_the_source_keeps_the_fork_and_forgets_the_link(tmp_path: Path) -> None:
    async with SessionManager(tmp_path / "k.db") as store:
        source = store.session_id
        await store.add_messages([user("a"), model("A")])
        fork = await store.fork(source)
        await store.delete_session(source)  # to the trash: the link stays
        assert (await store.get_session(fork.id)).forked_from_session == source
        await store.empty_trash()
        kept = await store.get_session(fork.id)
        assert kept.forked_from_session is None and kept.message_count == 2
        await store.switch_session(fork.id)
        assert texts(await store.load_messages()) == ["a", "A"]
