"""``RecallIndexer``: every indexed message gets its vector, in the background, in batches.

Started after the app's first frame (the model loads then, in a thread),
it asks the store for rows without a vector of its embedder, embeds a batch
off the event loop, stores it (one transaction), and goes on until none is
left; then it looks again every ``POLL`` seconds (or at once when
``nudge``d), so a new message is embedded soon after it is stored, never in
its insert transaction. In the app it waits while a turn runs
(``yield_to_turns``): indexing happens between turns. What still needs a
vector is read from the file each time, so a kill at any moment loses at
most the batch being embedded, and the next start carries on; searches meanwhile
use the vectors stored so far. With nothing left past its cursor it reads in
the vectors another window stored (``SessionManager.refresh_vectors``). The
first start after the upgrade reports ``(done, total, what)`` to
``on_progress``, which the app shows as a line. The local choice runs two of
these, one after the other (``recall.passes``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Protocol

from koroku_tui.agent.recall.backlog import BacklogWait
from koroku_tui.agent.recall.embedder import Embedder, QuerySide
from koroku_tui.store import SessionManager, StoreError, StoreNotInitializedError

__all__ = ["POLL", "Progress", "Recall", "RecallIndexer"]

Row = tuple[int, str]
"""A row to embed: its message id and its text."""

logger = logging.getLogger(__name__)

POLL = 2.0
"""Seconds between looks for new rows once everything is embedded."""
_TURN_POLL = 0.25
"""Seconds between looks at a running turn, waiting for it to end."""
_BACKOFF = (1.0, 60.0)
"""First and longest pause after a failure (a network error in Gemini mode, a busy file)."""

Progress = Callable[[int, int, str], None]
"""Told ``(rows with a vector, rows to embed in all, what for)`` when a backlog is found and
after each batch ("recall", "recall by meaning")."""


class Recall(Protocol):
    """What gives the history its vectors: one ``RecallIndexer``, or the local passes."""

    @property
    def idle(self) -> asyncio.Event:
        """Set while no row is left to embed (tests and ``--print`` wait on it)."""

    @property
    def loaded(self) -> asyncio.Event:
        """Set once the store searches by meaning (or the model failed to load)."""

    @property
    def stopped(self) -> asyncio.Event:
        """Set when ``run`` ended."""

    @property
    def problem(self) -> str | None:
        """Why recall by meaning is off (or partly off) for this run."""

    async def run(self) -> None:
        """Load, then embed until the store closes (cancel to stop sooner)."""


class RecallIndexer:
    """Embeds the history of ``store`` with the embedder ``load`` gives, and hands queries one.

    ``load`` runs once, at ``run``'s start. Once it is loaded the store
    searches by meaning too (``store.use_vectors``: its ranks counted
    ``weight`` times, ``beside`` the sides already in use or alone).
    ``wait_for_backlog`` makes each query wait until the history is embedded
    (``--print``: one answer, over all of it), as long as it allows. ``start_after`` is awaited
    before the first batch (the meaning pass waits for the first pass's
    backlog). ``batch``: rows a batch instead of the embedder's own. ``fills_in_for``: the
    embedder whose missing rows alone this one's side ranks (``use_vectors``). ``ready_for``
    replaces the wait for the backlog before a query (``--print``'s meaning pass).
    """

    def __init__(
        self,
        store: SessionManager,
        load: Callable[[], Awaitable[Embedder]],
        *,
        on_progress: Progress | None = None,
        yield_to_turns: bool = True,
        wait_for_backlog: BacklogWait | None = None,
        label: str = "recall by meaning",
        weight: float = 1.0,
        beside: bool = False,
        start_after: Callable[[], Awaitable[object]] | None = None,
        batch: int | None = None,
        fills_in_for: str | None = None,
        ready_for: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self._store = store
        self._ready_for = ready_for
        self._load = load
        self._on_progress = on_progress
        self._yield_to_turns = yield_to_turns
        self._wait_for_backlog = wait_for_backlog
        self.label = label
        """What the progress line says the indexing is for."""
        self._weight = weight
        self._beside = beside
        self._start_after = start_after
        self.batch = batch
        """Rows a batch (``None``: the embedder's own), read before each batch."""
        self._fills_in_for = fills_in_for
        self._wake = asyncio.Event()
        self.idle = asyncio.Event()
        """Set while no row is left to embed (tests and ``--print`` wait on it)."""
        self.stopped = asyncio.Event()
        """Set when ``run`` ended (the store closed, or the model failed to load)."""
        self.embedder: Embedder | None = None
        """The loaded model (``None`` until ``run`` loaded it)."""
        self.loaded = asyncio.Event()
        """Set once the store searches by meaning too (or the model failed to load)."""
        self.problem: str | None = None
        """Why recall by meaning is off for this run (the model could not load)."""
        self.failure: Exception | None = None
        """What the model's load raised (``problem`` says it in a sentence)."""
        self.caught_up = asyncio.Event()
        """Set once a look found every row embedded (not on a failure, unlike ``idle``)."""

    def nudge(self) -> None:
        """Look for new rows now (a message was just stored)."""
        self._wake.set()

    async def run(self) -> None:
        """Load the model, then embed until the store closes (cancel to stop sooner)."""
        try:
            try:
                embedder = await self._load()
            except Exception as exc:
                logger.exception("loading the embedding model failed")
                self.failure = exc
                self.problem = f"Recall by meaning is off for this run: {exc}."
                return
            self.embedder = embedder
            ready = self._ready_for
            if ready is None and self._wait_for_backlog is not None:
                ready = self._backlog_done
            self._store.use_vectors(
                QuerySide(embedder, ready),
                self._weight,
                beside=self._beside,
                fills_in_for=self._fills_in_for,
            )
            self.loaded.set()
            if self._start_after is not None:
                await self._start_after()
            await self._embed_forever(embedder)
        except StoreNotInitializedError:
            pass  # the store closed: the run is over
        finally:
            self.loaded.set()
            self.idle.set()  # nobody waits for a backlog that will not move
            self.stopped.set()

    async def between_turns(self) -> None:
        """Return once no turn runs here (at once unless ``yield_to_turns``)."""
        while self._yield_to_turns and self._store.holds_turn:
            await self._sleep(_TURN_POLL)

    async def _backlog_done(self, _query: str = "") -> None:
        assert self._wait_for_backlog is not None
        await self._wait_for_backlog.until(self.idle)

    async def left(self) -> int:
        """Rows still without a vector of this pass's embedder (0 before it loaded)."""
        if self.embedder is None:
            return 0
        done, total = await self._store.vector_progress(self.embedder.name)
        return max(0, total - done)

    async def _embed_forever(self, embedder: Embedder) -> None:
        cursor = _Cursor()
        done, total = await self._store.vector_progress(embedder.name)
        if done < total and self._on_progress is not None:
            self._on_progress(done, total, self.label)  # before the first batch (~0.3 s)
        pause = _BACKOFF[0]
        while True:
            await self.between_turns()
            try:
                rows = await cursor.next_rows(
                    self._store, embedder.name, self.batch or embedder.batch
                )
                if rows:
                    vectors = await embedder.embed_documents([text for _, text in rows])
                    pairs = [(row[0], vector) for row, vector in zip(rows, vectors, strict=True)]
                    await self._store.add_vectors(embedder.name, embedder.dims, pairs)
            except StoreNotInitializedError:
                raise
            except (StoreError, Exception) as exc:  # a busy file, a network error: later
                logger.warning("indexing for recall by meaning: %r; retrying", exc)
                self.idle.set()
                await self._sleep(pause)
                pause = min(pause * 2, _BACKOFF[1])
                continue
            pause = _BACKOFF[0]
            if not rows:
                self.caught_up.set()
                self.idle.set()
                await self._sleep(POLL)
                continue
            self.idle.clear()
            done += len(rows)
            total = max(total, done)
            if self._on_progress is not None:
                self._on_progress(done, total, self.label)

    async def _sleep(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when nudged."""
        self._wake.clear()
        with suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)


class _Cursor:
    """Where a pass is: the rows stored since it began first, then its backlog, newest first.

    A user asks most about the recent, so a pass that is cut short (``--print``'s
    bounded wait, a quit) has embedded that first. Only positions are kept here:
    what lacks a vector is asked of the file each time, so a kill loses nothing.
    """

    def __init__(self) -> None:
        self.top: int | None = None
        """The newest row seen: rows above it were stored since (``None``: none seen yet)."""
        self.below: int | None = None
        """The backlog's rows under this id are still to look at (``None``: all)."""
        self.backlog = True
        """Whether some of the backlog may still lack a vector."""

    async def next_rows(self, store: SessionManager, embedder: str, batch: int) -> list[Row]:
        """The next batch: new rows (oldest of them first), else the backlog's newest."""
        if self.top is not None:
            rows = await store.unembedded(embedder, self.top, batch)
            if rows:
                self.top = rows[-1][0]
                return rows
        if self.backlog:
            rows = await store.unembedded_below(embedder, self.below, batch)
            if rows:
                self.top = max(self.top or 0, rows[0][0])
                self.below = rows[-1][0]
                return rows
            self.backlog = False
            self.top = self.top or 0
        # Another window's vectors, and rows indexed behind the cursor since (a fork's
        # copies, once their source is deleted): the backlog is looked at again.
        if await store.refresh_vectors(embedder) is None:
            return []
        rows = await store.unembedded_below(embedder, None, batch)
        if rows:
            self.below, self.backlog = rows[-1][0], True
        return rows
