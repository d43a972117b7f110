"""MiniLM's kept coverage count under the writes that race its pass (issue 26 review).

Real SQLite in ``tmp_path`` and the real models from their wheels, as in
``test_recall_meaning_pass``; the pass's steps are taken one by one, in the
order a user's actions can interleave with them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from helpers.events import user
from helpers.recall_kit import MEDICINE, everyday_history
from test_recall_meaning_pass import embed_with_minilm, meaning_pass_held, store_minilm_vectors

from koroku_tui.agent.recall.meaning import MeaningEmbedder
from koroku_tui.agent.recall.passes import MEANING_PASS_WEIGHT
from koroku_tui.store import SessionManager
from koroku_tui.store.manager.vectors import Similar


async def weights(store: SessionManager) -> list[float]:
    return [weight for _, weight in await store.similar_sides(MEDICINE, 5)]


async def test_a_batch_of_copies_that_left_the_index_while_embedded_is_no_coverage(
    store: SessionManager,
) -> None:
    """The pass reads a batch holding a fork's copies (indexed while their source is in
    the trash); the user restores the source while MiniLM embeds it, so the copies leave
    the index. Their vectors, stored then, counted as coverage: MiniLM read as having
    every row (x2) while it lacked the newest message, which WordLlama fills in for."""
    await everyday_history(store, fillers=20)
    await store.add_messages([user(f"Line {n} about the garden beds.") for n in range(6)])
    source = store.session_id
    await store.fork(source)
    await store.delete_session(source)  # to the trash: the fork's copies are indexed
    async with meaning_pass_held(store):
        batch = await store.unembedded(MeaningEmbedder.name, 0, 1_000)  # the pass's batch
        await store.restore_session(source)  # meanwhile: the copies leave the index
        await store.add_message(user("Basil seedlings want a warm window."))
        await store.similar_sides(MEDICINE, 5)  # coverage counted here
        await store_minilm_vectors(store, batch)  # the batch is stored
        done, total = await store.vector_progress(MeaningEmbedder.name)
        assert total - done == 1  # the basil line has no MiniLM vector
        assert MEANING_PASS_WEIGHT not in await weights(store)


async def test_minilm_s_last_batch_stored_mid_search_is_not_counted_twice_there(
    store: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass stores its last batch while a search scans: both sides rank the rows they
    held when it began (MiniLM's without that batch, WordLlama's that batch), so MiniLM
    must count as WordLlama does there, not twice as its coverage reads once it is done."""
    await everyday_history(store, fillers=40)
    rows = await store.unembedded_below(MeaningEmbedder.name, None, 1_000)
    last, rest = rows[:8], rows[8:]
    await store_minilm_vectors(store, rest)
    async with meaning_pass_held(store):
        assert await weights(store) == [1.0, 1.0]  # read into memory, counted
        index = store._vector_sides[MeaningEmbedder.name].index
        assert index is not None
        loop, scan = asyncio.get_running_loop(), index.nearest

        def scan_as_the_batch_lands(*args: Any, **kwargs: Any) -> Similar:
            asyncio.run_coroutine_threadsafe(store_minilm_vectors(store, last), loop).result()
            return scan(*args, **kwargs)

        monkeypatch.setattr(index, "nearest", scan_as_the_batch_lands)
        assert await weights(store) == [1.0, 1.0]
        monkeypatch.undo()
        assert await weights(store) == [MEANING_PASS_WEIGHT]  # every row, in memory too


async def test_in_a_turn_minilm_counts_twice_when_it_lacks_only_the_conversation_s_rows(
    store: SessionManager,
) -> None:
    """The passes wait for a turn to end, so the turn's own rows lack their vectors while
    the model searches; the search leaves them out, yet they made MiniLM count as
    WordLlama in every search a model made. A row it may rank and lacks still does."""
    await everyday_history(store, fillers=40)
    await embed_with_minilm(store, 10)
    async with meaning_pass_held(store):
        await embed_with_minilm(store, 10_000)
        assert await weights(store) == [MEANING_PASS_WEIGHT]
        await store.begin_turn(user("Which medicine must I avoid?"))
        seen = frozenset(m.id for m in (await store.load_all()))
        sides = await store.similar_sides(MEDICINE, 5, seen)
        assert [weight for _, weight in sides] == [MEANING_PASS_WEIGHT]
        await store.end_turn()
        await store.new_session()
        await store.add_message(user("The pharmacy closes at six."))
        assert MEANING_PASS_WEIGHT not in await weights(store)


async def another_window_adds_five_rows_and_their_vectors(db_path: Path) -> None:
    """Another process on the file stores five rows and MiniLM's vectors of them."""
    async with SessionManager(db_path) as other:
        await other.add_messages([user(f"Basil note {n}: a warm window.") for n in range(5)])
        await embed_with_minilm(other, 5)


async def test_rows_this_window_removed_for_good_do_not_stand_in_for_another_s_new_rows(
    store: SessionManager, db_path: Path
) -> None:
    """This window empties the trash; its MiniLM vectors in memory kept the removed rows',
    so once another window stored and embedded five rows the file had every row and the
    index held as many: MiniLM counted twice while it lacked those five."""
    await everyday_history(store, fillers=20)
    await store.add_messages([user(f"Line {n} about the garden beds.") for n in range(6)])
    garden = store.session_id
    await store.new_session()
    await embed_with_minilm(store, 10)  # some left: WordLlama's pass runs
    async with meaning_pass_held(store):
        await embed_with_minilm(store, 10_000)
        assert await weights(store) == [MEANING_PASS_WEIGHT]  # every row, in memory too
        await store.delete_session(garden)
        await store.empty_trash()
        assert await weights(store) == [MEANING_PASS_WEIGHT]
        await another_window_adds_five_rows_and_their_vectors(db_path)
        assert set(await weights(store)) == {1.0}


async def test_copies_this_window_took_out_of_the_index_do_not_stand_in_for_new_rows(
    store: SessionManager, db_path: Path
) -> None:
    """Restoring a fork's source takes the fork's copies out of the search index (their
    vectors stay in the file, uncounted): the index in memory must not count them either."""
    await everyday_history(store, fillers=20)
    await store.add_messages([user(f"Line {n} about the garden beds.") for n in range(6)])
    source = store.session_id
    await store.fork(source)
    await embed_with_minilm(store, 10)
    async with meaning_pass_held(store):
        await store.delete_session(source)  # to the trash: the fork's copies are indexed
        await embed_with_minilm(store, 10_000)
        assert await weights(store) == [MEANING_PASS_WEIGHT]
        await store.restore_session(source)
        assert await weights(store) == [MEANING_PASS_WEIGHT]
        await another_window_adds_five_rows_and_their_vectors(db_path)
        assert set(await weights(store)) == {1.0}
