"""Paging reads past runs of unreadable rows: a page that would show nothing is skipped.

A run of rows the transcript cannot read (as long as a page or longer) must
not end the paging there: the pages above and below it are still reached.
Small pages and bound (patched) keep this quick.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from google import genai
from helpers.paging_kit import PAGE, mounted, turn, use_small_pages
from helpers.ui_kit import build, settle

from koroku_tui.config.settings import Settings
from koroku_tui.store import SessionManager
from koroku_tui.ui.main.transcript import Transcript


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    use_small_pages(monkeypatch)


async def seed_with_gap(tmp_path: Path, *, broken: int) -> None:
    """Turns 0-79, then ``broken`` unreadable rows, then turns 80-159, in one session."""
    path = Settings(home=tmp_path).database_path
    store = SessionManager(path)
    await store.initialize()
    await store.add_messages([e for n in range(80) for e in turn(n)])
    session = store.session_id
    await store.close()
    with sqlite3.connect(path) as db:  # rows a newer or damaged writer left
        db.executemany(
            "INSERT INTO messages(session_id, kind, event_json, created_at) VALUES (?,?,?,?)",
            [(session, "session", "{broken", time.time())] * broken,
        )
    db.close()
    store = SessionManager(path)
    await store.initialize()
    await store.switch_session(session)
    await store.add_messages([e for n in range(80, 160) for e in turn(n)])
    await store.close()


@pytest.mark.parametrize("broken", [2 * PAGE, 3 * PAGE + 5])
async def test_paging_reads_past_a_run_of_unreadable_rows_both_ways(
    client: genai.Client, tmp_path: Path, broken: int
) -> None:
    await seed_with_gap(tmp_path, broken=broken)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        seen = mounted(app)
        for _ in range(40):
            transcript.scroll_home(animate=False, immediate=True)
            await settle(pilot, app)
            window = mounted(app)
            if window[0] == seen[0]:
                break
            seen = window
        assert seen[0] == "question 0", "paging stopped at the unreadable rows"
        for _ in range(40):
            transcript.scroll_end(animate=False, immediate=True)
            await settle(pilot, app)
            window = mounted(app)
            if window[-1] == seen[-1]:
                break
            seen = window
        assert seen[-1] == "answer 159", "paging down stopped at the unreadable rows"
        assert not transcript.edges.away
