"""``--print``'s searches over the local passes: the candidates MiniLM embeds at once, the waits.

Store-level: real SQLite in ``tmp_path``, the real models, ``--print``'s passes
(``recall_indexing(..., headless=True)``) with the candidate constants made
small, so a few hundred rows stand for a long backlog (``recall.candidates``).
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers.events import model, user
from helpers.recall_kit import MEANING_FACTS, TRAVEL_DOCUMENT, facts_among_filler, plant_history
from recall_bench import filler
from test_recall_meaning_pass import embed_with_minilm, store_minilm_vectors

from koroku_tui.agent.recall import backlog, candidates, passes, recall_indexing
from koroku_tui.agent.recall.meaning import MeaningEmbedder
from koroku_tui.agent.recall.passes import LocalPasses
from koroku_tui.store import SessionManager


@pytest.fixture
def small_backlog(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long backlog in miniature: candidates from 20 rows lacking MiniLM's vector."""
    monkeypatch.setattr(passes, "WAIT_BELOW", 20)
    monkeypatch.setattr(candidates, "NEAR_CANDIDATES", 20)
    monkeypatch.setattr(candidates, "WORD_CANDIDATES", 10)


@dataclass
class Recorded:
    """What ``--print``'s searches asked of ``embed_candidates``."""

    queries: list[str] = field(default_factory=list)
    wanted: list[tuple[int, str]] = field(default_factory=list)
    """The candidates (``unembedded_near``) as each search began."""
    embedded: list[str] = field(default_factory=list)
    """The texts MiniLM embedded of them."""


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch, small_backlog: None) -> Recorded:
    """The candidates of each search, recorded (a long backlog in miniature)."""
    found = Recorded()

    async def recording(
        store: SessionManager, query: str, embed: Any, near: str, *rest: Any
    ) -> bool:
        async def each(texts: list[str]) -> Any:
            found.embedded.extend(texts)
            return await embed(texts)

        found.queries.append(query)
        lacking, wanted = MeaningEmbedder.name, candidates.NEAR_CANDIDATES
        found.wanted += await store.unembedded_near(
            query, near, lacking, wanted, candidates.WORD_CANDIDATES
        )
        return await candidates.embed_candidates(store, query, each, near, *rest)

    monkeypatch.setattr("koroku_tui.agent.recall.passes.embed_candidates", recording)
    return found


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
    minutes), before ranking. Made 5 s here: ``late`` says the wait ran out."""
    monkeypatch.setattr(backlog, "PRINT_WAIT", 5.0)
    fact = await plant_history(store, rounds=3)
    await embed_with_minilm(store, 1_000)
    async with print_passes(store) as found:
        assert fact in await hits(store, TRAVEL_DOCUMENT)
        assert found._wait is not None
        assert not found._wait.late, "the search waited out PRINT_WAIT for a pass never run"


async def test_candidates_keep_a_fact_the_words_find_when_the_session_matches_the_query(
    store: SessionManager, small_backlog: None
) -> None:
    """``--print`` continues the latest session, which may be about the very thing asked.
    Its rows are never hits, but they took the candidates' slots (the words' best and
    WordLlama's nearest): the fact the words find got no MiniLM vector, and MiniLM x2
    over the rows it had outranked it."""
    rng = random.Random(3)
    await store.add_messages([user(filler(rng, 20)) for _ in range(120)])
    fact = await store.add_message(user("The spare key for the shed hangs behind the door."))
    await store.add_messages([model(filler(rng, 20)) for _ in range(120)])
    # A pass cut short: MiniLM has the oldest rows.
    await store_minilm_vectors(store, await store.unembedded(MeaningEmbedder.name, 0, 100))
    await store.new_session()
    for n in range(30):
        await store.add_message(user(f"Note {n}: the shed key, the shed key again."))
    assert fact in await hits(store, "shed key")  # full text finds it
    async with print_passes(store):
        assert fact in await hits(store, "shed key")


async def test_a_query_minilm_fails_after_its_candidates_still_leaves_wordllama(
    store: SessionManager, monkeypatch: pytest.MonkeyPatch, recorded: Recorded
) -> None:
    """MiniLM embeds the candidates, then fails the query itself (``QUERY_TIMEOUT``, a
    damaged model): WordLlama had been told not to rank, so no vector side ranked and a
    fact sharing no word with the question was lost (D1, again)."""
    fact = await plant_history(store, rounds=12)

    async def failing(_self: object, _text: str) -> None:
        raise RuntimeError("the model could not embed the query")

    monkeypatch.setattr(MeaningEmbedder, "embed_query", failing)
    async with print_passes(store):
        assert fact in await hits(store, TRAVEL_DOCUMENT)
        assert fact in await hits(store, TRAVEL_DOCUMENT)  # in the words-alone window
    assert recorded.queries == [TRAVEL_DOCUMENT]  # none for a query MiniLM will not embed


async def test_candidates_stop_at_print_wait_and_wordllama_fills_in_for_the_rest(
    store: SessionManager, monkeypatch: pytest.MonkeyPatch, recorded: Recorded
) -> None:
    """A candidate's cost grows with its text: 800 long rows took a minute of two threads,
    past ``PRINT_WAIT``, and then the tool's own limit. They are embedded best first, until
    the searches' deadline; the rest stay WordLlama's, which goes on ranking them."""
    monkeypatch.setattr(backlog, "PRINT_WAIT", 2.0)
    monkeypatch.setattr(candidates, "CHUNK", 4)  # 20 candidates: 5 groups of ~1 s
    facts = await facts_among_filler(store, MEANING_FACTS[:3], fillers=120)
    embed = MeaningEmbedder.embed

    def slow(self: MeaningEmbedder, texts: list[str]) -> Any:
        time.sleep(1.0)  # long texts, in miniature
        return embed(self, texts)

    monkeypatch.setattr(MeaningEmbedder, "embed", slow)
    question = MEANING_FACTS[0][2]
    async with print_passes(store):
        assert facts[question] in await hits(store, question)
    assert len(recorded.embedded) < len({text for _, text in recorded.wanted})


async def test_a_row_whose_text_is_not_utf8_leaves_the_candidate_search_working(
    store: SessionManager, db_path: Path, recorded: Recorded
) -> None:
    """A file another program (or a damaged disk) wrote a row of invalid UTF-8 into: that
    one row failed every query it was in (the candidates' texts, read at once; the
    search's hits), and so the search. It reads with replacement characters."""
    fact = await plant_history(store, rounds=12)
    row = await store.add_message(user("passport renewal form"))
    await store.new_session()
    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute("DELETE FROM messages_fts WHERE rowid = ?", (row,))
        conn.execute(
            "INSERT INTO messages_fts(rowid, text, role) "
            "VALUES (?, CAST(X'70617373706f727420fffe80' AS TEXT), 'user')",
            (row,),
        )
    async with print_passes(store):
        assert fact in await hits(store, "passport")
    assert "passport \ufffd\ufffd\ufffd" in recorded.embedded


@pytest.mark.parametrize("emptied", [False, True], ids=["in-the-trash", "trash-emptied"])
async def test_candidates_leave_out_the_rows_of_sessions_in_the_trash(
    store: SessionManager, db_path: Path, recorded: Recorded, emptied: bool
) -> None:
    """A trashed session about the very question: search_history never shows its rows, so
    they must not take the candidates' slots (the live fact got no MiniLM vector, and
    WordLlama no longer ranks). Emptying the trash is the control: found either way."""
    facts = await facts_among_filler(store, MEANING_FACTS[:3], fillers=120)
    question = MEANING_FACTS[0][2]
    await store.add_messages([user(f"{question} (asked again, {n})") for n in range(30)])
    trashed = store.session_id
    await store.delete_session(trashed)
    if emptied:
        await store.empty_trash()
    async with print_passes(store):
        found = await hits(store, question)
    with closing(sqlite3.connect(db_path)) as conn:
        rows = conn.execute("SELECT id FROM messages WHERE session_id = ?", (trashed,))
        in_trash = {int(row_id) for (row_id,) in rows}
    assert not in_trash & {row_id for row_id, _ in recorded.wanted}
    assert facts[question] in found
