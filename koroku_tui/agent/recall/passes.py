"""The local choice's two passes: WordLlama first and fast, then MiniLM for meaning.

``[recall] embeddings = "local"`` indexes the history twice, both on this
machine. The first pass (WordLlama, ``recall.local``) embeds ~4,000
messages a second, so a year of history searches by meaning within seconds
of the first start. The meaning pass (all-MiniLM-L6-v2, ``recall.meaning``)
finds what is asked in other words nine times in ten where WordLlama finds
a third (``bench/recall_rerank.py``), but embeds ~90 messages a second a
core: it starts once the first pass has no backlog, works between turns in
batches of ~0.3 s, and carries on where the last run stopped.

While it runs, searches fuse the words with MiniLM over the rows it has and
WordLlama over the rest, counted alike (WordLlama fills in for MiniLM:
``store.use_vectors``); once MiniLM covers every row, its ranks count twice
(``MEANING_PASS_WEIGHT``), WordLlama is let go of (its pass and its vectors
in memory) and the words fuse with MiniLM alone. A run that finds the
meaning pass done starts with MiniLM alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from koroku_tui.agent.recall.backlog import BacklogWait, Late
from koroku_tui.agent.recall.candidates import WAIT_BELOW, embed_candidates
from koroku_tui.agent.recall.embedder import Embedder, Vector, Vectors
from koroku_tui.agent.recall.indexer import Progress, RecallIndexer
from koroku_tui.agent.recall.meaning import MeaningEmbedder
from koroku_tui.store import SessionManager, StoreError

__all__ = ["FIRST_PASS", "MEANING_PASS", "MEANING_PASS_WEIGHT", "LocalPasses"]

logger = logging.getLogger(__name__)

MEANING_PASS_WEIGHT = 2.0
"""How much MiniLM's ranks count against the words' once it has every row (while WordLlama
fills in for the rest, as much as WordLlama's). At 100,000 messages (``bench/recall_bench.py``,
int8 rows): words + MiniLM x2 found 0.93 of the questions sharing no word with their fact
and 0.96 of the paraphrased ones (x1: 0.80 / 1.00 with float32 rows). Counted twice over
the newest half only, it lost paraphrased ones (0.56): its nearest there outranked facts of
the older half."""
FIRST_PASS = "recall"
"""What the progress line says the first pass indexes for."""
MEANING_PASS = "recall by meaning"
"""What it says the meaning pass indexes for."""

HEADLESS_BATCH = 256
"""Rows a meaning batch in ``--print``, which has no turn to make way for: bigger groups of
equal length, ~1.5x the rate of the app's batches of 32 (142 against 93 texts a second)."""

HEADLESS_THREADS = 2
"""Threads the meaning pass embeds in under ``--print`` (this machine's cores)."""

Load = Callable[[], Awaitable[Embedder]]
Gate = Callable[[], Awaitable[None]]
MeaningLoad = Callable[[Gate | None], Awaitable[Embedder]]
"""MiniLM's load: at once (``None``), or in steps, each once the gate returned."""


class LocalPasses:
    """WordLlama's pass and MiniLM's after it, on ``store`` (a ``Recall``, as one indexer is).

    ``headless`` (``--print``): neither waits for turns, a search waits until
    WordLlama has embedded the history, then until MiniLM has too if little is
    left (``WAIT_BELOW``), else MiniLM embeds at once the rows the search may
    want (``recall.candidates``) and the search ranks as if it had every row
    (``PRINT_WAIT`` at most, in all: then ``on_late`` is told how many rows
    MiniLM still lacks, and the search fuses what is indexed). MiniLM's side
    is searched from the start (its model still loading: a search waits for
    it), so the turn never waits for that load (~1.5 s).
    """

    def __init__(
        self,
        store: SessionManager,
        first: Load,
        meaning: MeaningLoad,
        *,
        on_progress: Progress | None = None,
        headless: bool = False,
        on_late: Late | None = None,
    ) -> None:
        self._store = store
        wait = BacklogWait(self._meaning_left, on_late) if headless else None
        self.first = RecallIndexer(
            store,
            first,
            on_progress=on_progress,
            yield_to_turns=not headless,
            wait_for_backlog=wait,
            label=FIRST_PASS,
            beside=True,  # MiniLM's side may come first (``headless``)
            fills_in_for=MeaningEmbedder.name,
        )
        """WordLlama's pass."""
        self.meaning = RecallIndexer(
            store,
            self._meaning_at_once if headless else self._meaning_between_turns,
            on_progress=on_progress,
            yield_to_turns=not headless,
            wait_for_backlog=wait,
            label=MEANING_PASS,
            weight=MEANING_PASS_WEIGHT,
            beside=True,
            start_after=self._searched_then_first_backlog if headless else self._first_backlog_done,
            batch=HEADLESS_BATCH if headless else None,
            ready_for=self._meaning_ready if headless else None,
        )
        """MiniLM's pass."""
        self._load_meaning = meaning
        self._wait = wait
        self._meaning_model: asyncio.Future[Embedder] | None = None
        self.loaded = asyncio.Event()
        """Set once both sides are searched (or failed to load)."""
        self.stopped = asyncio.Event()
        self.meaning_alone = asyncio.Event()
        """Set once the words fuse with MiniLM alone (its pass has every row)."""
        self._first_skipped = False
        self._embedding = asyncio.Lock()
        """Held by a ``--print`` search embedding its rows, and by each batch of the pass
        (``_Loading``): the search's rows come first, not shared with the pass's."""
        self._loading = _Loading(self._meaning_future, self._embedding)
        self._decided = asyncio.Event()
        """Set once the first ``--print`` search chose: the whole pass, or its own rows."""

    async def _meaning_between_turns(self) -> Embedder:
        """MiniLM's model, read while no turn runs (the app; ``MeaningEmbedder.load_between``)."""
        return await self._load_meaning(self.meaning.between_turns)

    async def _meaning_at_once(self) -> Embedder:
        """MiniLM's embedder at once, its model read when first used (``--print``)."""
        return self._loading

    async def _meaning_ready(self, query: str) -> None:
        """``--print``, before MiniLM's query: its whole pass if little is left, else its
        vectors of the rows ``query`` may want, at once (``recall.candidates``)."""
        assert self._wait is not None
        try:
            async with self._embedding:  # the pass's batches wait: this search comes first
                self._meaning_future()  # the model loads meanwhile (~1.5 s)
                if not self._first_skipped:  # else its ``idle`` is never set: PRINT_WAIT
                    await self._wait.until(self.first.idle)
                first = self.first.embedder
                if first is not None and await self._meaning_left() > WAIT_BELOW:
                    # The pass cannot end in this run: small batches, so the run's exit
                    # waits for one of ~0.2 s, not 256 rows' ~3 s (a thread is not cut).
                    self.meaning.batch = None
                    self._decided.set()
                    if await self._embed_candidates(query, first.name):
                        self._store.rank_side(first.name, False)
                        return
        finally:
            self._decided.set()
        await self._wait.until(self.meaning.idle)
        if self.first.embedder is not None:  # every row embedded: WordLlama has none left
            self._store.rank_side(self.first.embedder.name, True)

    async def _embed_candidates(self, query: str, near: str) -> bool:
        """MiniLM's vectors of the rows ``query`` may want, stored within the searches'
        ``PRINT_WAIT``; whether it has every one (else WordLlama fills in for the rest)."""
        assert self._wait is not None
        meaning = (MeaningEmbedder.name, MeaningEmbedder.dims)
        embed, seconds = self._loading.embed_unlocked, self._wait.seconds_left()
        try:
            return await embed_candidates(self._store, query, embed, near, meaning, seconds)
        except Exception as exc:  # the model or the file: MiniLM's query says so, once
            logger.warning("embedding a search's rows by meaning: %r", exc)
            return False

    def _meaning_future(self) -> asyncio.Future[Embedder]:
        """MiniLM's model, loading in a task from the first call on."""
        if self._meaning_model is None:
            model = self._meaning_model = asyncio.ensure_future(self._load_meaning(None))
            model.add_done_callback(lambda done: done.cancelled() or done.exception())
        return self._meaning_model

    async def _searched_then_first_backlog(self) -> None:
        """``--print``: the meaning pass begins with the turn's first search, if any (a run
        that never searches never reads MiniLM: it had cost every ``--print`` ~1.5 s and
        ~400 MB), and after WordLlama's backlog."""
        assert self._wait is not None
        await self._wait.asked.wait()
        await self._decided.wait()  # its batch size: rows fetched before it had the old one
        await self._first_backlog_done()

    @property
    def idle(self) -> asyncio.Event:
        """Set while neither pass has rows left (the meaning pass's, which comes second)."""
        return self.first.idle if self.meaning.problem is not None else self.meaning.idle

    @property
    def problem(self) -> str | None:
        """Why a pass could not load its model (the other still runs)."""
        model = self._meaning_model
        if model is not None and model.done() and not model.cancelled() and model.exception():
            return meaning_off(model.exception())
        if self.meaning.problem is not None and self.first.problem is None:
            return meaning_off(self.meaning.failure)
        return self.first.problem or self.meaning.problem

    async def _meaning_left(self) -> int:
        """Rows without MiniLM's vector (known before its model is: ``--print`` asks early)."""
        done, total = await self._store.vector_progress(MeaningEmbedder.name)
        return max(0, total - done)

    async def _first_backlog_done(self) -> None:
        if not self._first_skipped:
            await self.first.idle.wait()

    async def run(self) -> None:
        """Both passes until the store closes; WordLlama's until MiniLM's has caught up."""
        try:
            done, total = await self._store.vector_progress(MeaningEmbedder.name)
        except StoreError:
            done, total = 0, 1
        self._first_skipped = 0 < total <= done
        passes = [self.meaning] if self._first_skipped else [self.first, self.meaning]
        tasks = [asyncio.create_task(p.run()) for p in passes]
        try:
            for each in passes:
                await each.loaded.wait()
            self.loaded.set()
            if await self._let_first_go():
                tasks[0].cancel()
                await tasks[-1]  # the meaning pass alone, until the store closes
            else:
                await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.loaded.set()
            self.stopped.set()

    async def _let_first_go(self) -> bool:
        """Once MiniLM has every row, search without WordLlama; whether to stop its pass."""
        meaning = self.meaning
        if self._first_skipped:
            await meaning.loaded.wait()
            self.meaning_alone.set()
            return False
        caught_up = asyncio.create_task(meaning.caught_up.wait())
        stopped = asyncio.create_task(meaning.stopped.wait())
        try:
            await asyncio.wait((caught_up, stopped), return_when=asyncio.FIRST_COMPLETED)
        finally:
            caught_up.cancel()
            stopped.cancel()
        if not meaning.caught_up.is_set() or meaning.embedder is None:
            return False  # MiniLM did not load: WordLlama stays
        first = self.first.embedder
        if first is not None:
            self._store.drop_vectors(first.name)
        self.meaning_alone.set()
        return True


def meaning_off(why: BaseException | None) -> str:
    """The one sentence saying the meaning pass is off and searches go on without it."""
    return (
        f"Recall by meaning goes without its meaning pass for this run ({why}): "
        "searches use words and WordLlama."
    )


class _Loading:
    """An embedder whose model is still loading: its name and size are known, calls wait.

    Documents are embedded in ``HEADLESS_THREADS`` threads at once (numpy's products on
    one BLAS thread each release the GIL): ``--print`` has the machine to itself.
    """

    name = MeaningEmbedder.name
    dims = MeaningEmbedder.dims
    batch = MeaningEmbedder.batch

    def __init__(self, model: Callable[[], asyncio.Future[Embedder]], turn: asyncio.Lock) -> None:
        self._model = model
        self._turn = turn

    async def embed_documents(self, texts: list[str]) -> Vectors:
        """The model's vectors of ``texts``, once it is loaded and no search embeds its rows."""
        async with self._turn:
            return await self.embed_unlocked(texts)

    async def embed_unlocked(self, texts: list[str]) -> Vectors:
        """``embed_documents`` for the holder of the lock (a search), a share a thread."""
        model = await asyncio.shield(self._model())
        shares = [texts[n::HEADLESS_THREADS] for n in range(HEADLESS_THREADS)]
        done = await asyncio.gather(*(model.embed_documents(s) for s in shares if s))
        vectors: list[Vector] = [None] * len(texts)  # type: ignore[list-item]
        for n, share in enumerate(done):
            vectors[n::HEADLESS_THREADS] = list(share)
        return vectors

    async def embed_query(self, text: str) -> Vector:
        """The model's vector of ``text``, once it is loaded."""
        return await (await asyncio.shield(self._model())).embed_query(text)
