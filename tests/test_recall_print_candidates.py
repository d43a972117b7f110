"""``--print``'s searches over the local passes: the candidates MiniLM embeds at once, the waits.

Store-level: real SQLite in ``tmp_path``, the real models, ``--print``'s passes
(``recall_indexing(..., headless=True)``) with the candidate constants made
small, so a few hundred rows stand for a long backlog (``recall.candidates``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from helpers.recall_kit import TRAVEL_DOCUMENT, plant_history
from test_recall_meaning_pass import embed_with_minilm

from koroku_tui.agent.recall import backlog, candidates, passes, recall_indexing
from koroku_tui.agent.recall.passes import LocalPasses
from koroku_tui.store import SessionManager


@pytest.fixture
def small_backlog(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long backlog in miniature: candidates from 20 rows lacking MiniLM's vector."""
    monkeypatch.setattr(passes, "WAIT_BELOW", 20)
    monkeypatch.setattr(candidates, "NEAR_CANDIDATES", 20)
    monkeypatch.setattr(candidates, "WORD_CANDIDATES", 10)


@asynccontextmanager
async def print_passes(store: SessionManager) -> AsyncIterator[LocalPasses]:
    """The local passes as ``--print`` runs them, both sides searched."""
    found = recall_indexing(store, "local", headless=True)
    assert isinstance(found, LocalPasses)
    task = asyncio.create_task(found.run())
    try:
        await found.loaded.wait()
        yield found
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def hits(store: SessionManager, query: str, limit: int = 5) -> list[int]:
    """The ids ``search_history`` finds for ``query``, best first."""
    return [hit.message_id for hit in (await store.search_history(query, limit)).hits]


async def test_a_print_search_on_a_fully_indexed_home_does_not_wait_out_print_wait(
    store: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The steady state: MiniLM has every row, so WordLlama's pass never runs and its
    ``idle`` is never set; each ``--print`` search waited for it, ``PRINT_WAIT`` (two
    minutes), before ranking. Made 2 s here: ``late`` says the wait ran out."""
    monkeypatch.setattr(backlog, "PRINT_WAIT", 2.0)
    fact = await plant_history(store, rounds=3)
    await embed_with_minilm(store, 1_000)
    async with print_passes(store) as found:
        assert fact in await hits(store, TRAVEL_DOCUMENT)
        assert found._wait is not None
        assert not found._wait.late, "the search waited out PRINT_WAIT for a pass never run"
