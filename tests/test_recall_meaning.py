"""Recall by meaning in the store: the local model, vectors in SQLite, hybrid search, kills.

Real SQLite in ``tmp_path`` through the real ``SessionManager``, the real
local embedder (WordLlama's shipped files), offline.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
import tokenizers
from helpers.events import user
from helpers.old_files import as_version
from helpers.recall_kit import MEANING_FACTS, PASSPORT, TRAVEL_DOCUMENT, indexed, plant_history

from koroku_tui.agent.recall.local import LocalEmbedder, model_files
from koroku_tui.store import SCHEMA_VERSION, SessionManager
from koroku_tui.store.hybrid import fused_order
from koroku_tui.store.search import build_match_query


def test_the_local_model_loads_from_its_wheel_with_no_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """WordLlama's own loader looks in the wrong folder, then asks a hub: never used."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    asked: list[str] = []

    def no_hub(*args: object, **kwargs: object) -> None:
        asked.append(repr(args))
        raise AssertionError("a model hub was asked")

    monkeypatch.setattr(tokenizers.Tokenizer, "from_pretrained", no_hub)
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_hub)
    embedder = LocalEmbedder.read(*model_files())  # the files themselves, not a kept model
    vectors = embedder.embed([PASSPORT, TRAVEL_DOCUMENT, "garden beds for spring", ""])
    assert vectors.shape == (4, 256)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2]  # the question is nearer its fact
    assert not vectors[3].any()  # no token, no direction
    assert asked == []
    assert "wordllama" not in sys.modules  # its __init__ configures the root logger


def test_every_no_shared_word_question_really_shares_no_word() -> None:
    """What full text searches for in each question matches nothing of its fact."""
    with closing(sqlite3.connect(":memory:")) as conn:
        conn.execute(
            "CREATE VIRTUAL TABLE f USING fts5(text, tokenize = 'porter unicode61 "
            "remove_diacritics 2')"
        )
        for where, fact, question in MEANING_FACTS:
            match = build_match_query(question)
            conn.execute("DELETE FROM f")
            conn.execute("INSERT INTO f(text) VALUES (?)", (fact,))
            assert conn.execute("SELECT count(*) FROM f WHERE f MATCH ?", (match,)).fetchone() == (
                0,
            ), (where, question)
    assert len(MEANING_FACTS) >= 50


async def test_search_history_finds_a_fact_asked_in_other_words(store: SessionManager) -> None:
    fact = await plant_history(store)
    words_alone = await store.search_history(TRAVEL_DOCUMENT, limit=5)
    assert fact not in [hit.message_id for hit in words_alone.hits]
    async with indexed(store):
        page = await store.search_history(TRAVEL_DOCUMENT, limit=5)
    [hit] = [hit for hit in page.hits if hit.message_id == fact]
    assert hit.snippet == PASSPORT  # no word matched: the start of its text, unmarked
    assert hit.role == "user"
    assert page.total >= len(page.hits)


async def test_the_context_the_model_sees_is_never_a_hit_by_meaning(store: SessionManager) -> None:
    await plant_history(store)
    in_context = await store.add_message(user(PASSPORT))
    async with indexed(store):
        page = await store.search_history(TRAVEL_DOCUMENT, limit=50)
    assert in_context not in [hit.message_id for hit in page.hits]


async def test_the_history_screen_search_fuses_meaning_too(store: SessionManager) -> None:
    fact = await plant_history(store)
    async with indexed(store):
        [hit] = [h for h in await store.search(TRAVEL_DOCUMENT, 20) if h.message_id == fact]
        await store.delete_session(hit.session_id)
        # In the trash: found by neither words nor meaning.
        assert fact not in [hit.message_id for hit in await store.search(TRAVEL_DOCUMENT, 20)]


def test_reciprocal_rank_fusion_puts_rows_both_sides_found_first() -> None:
    assert fused_order([1, 2, 3], [([3, 4], 1.0)]) == [3, 1, 4, 2]  # 4 and 2 tie: newer first
    # A side counted twice: its first row leads one both found.
    assert fused_order([1, 2], [([2], 1.0), ([5], 2.0)])[0] == 5


async def test_new_messages_are_embedded_after_they_are_stored(store: SessionManager) -> None:
    await plant_history(store, rounds=1)
    async with indexed(store) as indexer:
        assert indexer.embedder is not None
        before = await store.vector_progress(indexer.embedder.name)
        assert before[0] == before[1] > 0
        fact = await store.add_message(user(PASSPORT))
        assert await store.vector_progress(indexer.embedder.name) == (before[0], before[1] + 1)
        indexer.idle.clear()
        indexer.nudge()
        await indexer.idle.wait()
        assert await store.vector_progress(indexer.embedder.name) == (before[0] + 1,) * 2
        await store.new_session()
        page = await store.search_history(TRAVEL_DOCUMENT, limit=5)
    assert fact in [hit.message_id for hit in page.hits]


INDEX_AND_DIE = """
import asyncio, sys
from koroku_tui.agent.recall import embedder_loader
from koroku_tui.agent.recall.indexer import RecallIndexer
from koroku_tui.store import SessionManager

async def main():
    store = SessionManager(sys.argv[1])
    await store.initialize()
    indexer = RecallIndexer(store, embedder_loader("local"),
                            on_progress=lambda done, total, _: done and print(done, flush=True))
    await indexer.run()

asyncio.run(main())
"""


OLDER_THAN_A_ROW_WITHOUT_VECTOR = """
SELECT count(*) FROM message_vectors AS v WHERE v.message_id < (SELECT max(f.rowid)
  FROM messages_fts AS f WHERE f.rowid NOT IN (SELECT message_id FROM message_vectors))
"""


async def test_a_kill_while_indexing_loses_nothing_and_the_next_start_resumes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        fact = await plant_history(store)
        await store.add_messages([user(f"shopping list item {n}") for n in range(1_500)])
    script = tmp_path / "index_and_die.py"
    script.write_text(INDEX_AND_DIE, encoding="utf-8")
    child = subprocess.Popen(  # noqa: ASYNC220 (the test waits for nothing else)
        [sys.executable, str(script), str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        first_batch = child.stdout.readline()  # a batch is committed
        assert first_batch.strip().isdigit(), first_batch
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        child.kill()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        kept = conn.execute("SELECT count(*) FROM message_vectors").fetchone()[0]
        total = conn.execute("SELECT count(*) FROM messages_fts").fetchone()[0]
        older_done = conn.execute(OLDER_THAN_A_ROW_WITHOUT_VECTOR).fetchone()[0]
    assert 0 < kept < total
    assert older_done == 0  # newest first: what a pass cut short covers is the recent
    async with SessionManager(path) as store, indexed(store) as indexer:  # the next start
        assert indexer.embedder is not None
        assert await store.vector_progress(indexer.embedder.name) == (total, total)
        page = await store.search_history(TRAVEL_DOCUMENT, limit=5)
    assert fact in [hit.message_id for hit in page.hits]


async def test_a_schema_7_file_gains_the_vectors_and_is_indexed(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        fact = await plant_history(store)
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:  # as version 7 wrote it
        as_version(conn, 7)
    async with SessionManager(path) as store, indexed(store):
        page = await store.search_history(TRAVEL_DOCUMENT, limit=5)
    assert fact in [hit.message_id for hit in page.hits]
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


async def test_a_second_window_s_vectors_reach_the_first_window_s_searches(
    db_path: Path, store: SessionManager
) -> None:
    """Two windows on one home index at once: each skips what the other embedded first."""
    await store.add_messages([user(f"shopping list item {n}") for n in range(300)])
    async with SessionManager(db_path) as other, indexed(store) as first:
        await store.search_history(TRAVEL_DOCUMENT, limit=5)  # its vectors are read in
        async with indexed(other) as second:
            fact = await other.add_message(user(PASSPORT))
            second.idle.clear()
            second.nudge()
            await second.idle.wait()  # the other window embedded it
            first.idle.clear()
            first.nudge()
            await first.idle.wait()
        await store.new_session()
        page = await store.search_history(TRAVEL_DOCUMENT, limit=5)
    assert fact in [hit.message_id for hit in page.hits]


async def test_rows_indexed_behind_the_indexer_get_their_vectors(store: SessionManager) -> None:
    """Deleting a forked session indexes the fork's copies, older than the indexer's cursor."""
    fact = await plant_history(store)
    async with indexed(store) as indexer:
        [source] = [h.session_id for h in await store.search(PASSPORT, 5) if h.message_id == fact]
        fork = await store.fork(source)
        await store.add_message(user("and the spare key is in the drawer"))  # after the copies
        indexer.idle.clear()
        indexer.nudge()
        await indexer.idle.wait()  # embedded; the copies, not indexed, were skipped
        await store.delete_session(source)
        indexer.idle.clear()
        indexer.nudge()
        await indexer.idle.wait()
        page = await store.search_history(TRAVEL_DOCUMENT, limit=5)
    assert fork.id in [hit.session_id for hit in page.hits if hit.snippet == PASSPORT]


async def test_a_fork_s_copies_out_of_the_index_again_take_no_hit_s_place(
    store: SessionManager,
) -> None:
    """Restoring a fork's source takes the copies out of the index; their vectors stay."""
    fact = await plant_history(store)
    async with indexed(store) as indexer:
        [source] = [h.session_id for h in await store.search(PASSPORT, 5) if h.message_id == fact]
        await store.fork(source)
        await store.delete_session(source)  # the copies are indexed, and embedded
        indexer.idle.clear()
        indexer.nudge()
        await indexer.idle.wait()
        await store.restore_session(source)
        page = await store.search_history(TRAVEL_DOCUMENT, limit=3)
        listed = await store.search(TRAVEL_DOCUMENT, 3)
    assert page.hits[0].message_id == fact
    assert len(page.hits) == len(listed) == 3


class _StoredMidPass(LocalEmbedder):
    """The local model, noting each batch's texts; a message is stored during the first."""

    batch = 100

    def __init__(self, model: LocalEmbedder, store: SessionManager) -> None:
        super().__init__(model._tokenizer, model._table)
        self.store = store
        self.batches: list[list[str]] = []

    async def embed_documents(self, texts: list[str]) -> list[list[float]]:  # type: ignore[override]
        self.batches.append(texts)
        if len(self.batches) == 1:
            await self.store.add_message(user("stored while the pass ran"))
        return list(await super().embed_documents(texts))


async def test_a_pass_embeds_new_rows_then_the_backlog_newest_first(store: SessionManager) -> None:
    """What a user asks about most is the recent: a pass cut short has covered it."""
    await store.add_messages([user(f"shopping list item {n}") for n in range(300)])
    recording = _StoredMidPass(LocalEmbedder.load(), store)

    async def load() -> LocalEmbedder:
        return recording

    async with indexed(store, load):
        pass
    first, second, third, *rest = recording.batches
    assert first[:2] == ["shopping list item 299", "shopping list item 298"]
    assert second == ["stored while the pass ran"]  # before the older rows left
    assert third[0] == "shopping list item 199" and rest[-1][-1] == "shopping list item 0"
