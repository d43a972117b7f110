"""Stored rows Gemini could not be sent: left out of the context with a reason, never fatal.

A real database file, rows written with sqlite3 behind Koroku's back, then a
real turn with the agent on the strict fake Gemini.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from helpers.agent_kit import open_agent
from hostile.rows import UNSENDABLE_ROWS

from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.store import SessionManager


def user_texts(fake: FakeGemini) -> list[str]:
    return [
        part["text"]
        for content in fake.generate_requests[-1].contents
        for part in content["parts"]
        if content["role"] == "user" and "text" in part
    ]


def write_row(db: Path, session_id: int, kind: str, raw: str) -> int:
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        cursor = conn.execute(
            "INSERT INTO messages(session_id, kind, event_json, created_at) VALUES (?, ?, ?, ?)",
            (session_id, kind, raw, 2.0),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid


@pytest.mark.parametrize(
    ("kind", "raw"), UNSENDABLE_ROWS, ids=[f"{i}-{k}" for i, (k, _) in enumerate(UNSENDABLE_ROWS)]
)
async def test_an_unsendable_row_is_skipped_and_the_session_keeps_working(
    fake: FakeGemini, tmp_path: Path, kind: str, raw: str
) -> None:
    db = tmp_path / "koroku.db"
    fake.add(text_reply("One."))
    async with open_agent(fake, tmp_path) as agent:
        assert await agent.run_turn("first") == "One."
        assert agent.session_manager is not None
        session_id = agent.session_manager.session_id
    bad_id = write_row(db, session_id, kind, raw)

    fake.add(text_reply("Two."), text_reply("Three."))
    async with open_agent(fake, tmp_path) as agent:
        assert await agent.run_turn("second") == "Two."
        assert await agent.run_turn("third") == "Three."
        store = agent.session_manager
        assert store is not None
        ((skipped_id, reason),) = store.skipped_rows
        assert skipped_id == bad_id and reason.startswith("not a valid event: ")
    assert user_texts(fake) == ["first", "second", "third"]

    async with SessionManager(db) as store:
        history = await store.load_all()
    (row,) = [r for r in history if r.id == bad_id]
    assert (row.event, row.raw_json) == (None, raw)
    assert row.error is not None
