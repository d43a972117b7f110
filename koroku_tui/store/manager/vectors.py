"""Vectors for recall by meaning: the rows still to embed, storing vectors, similar rows.

The store takes and returns vectors; the embedders are the caller's
(``agent.recall``): each asks ``unembedded_below`` for its backlog, newest
first, and ``unembedded`` for the rows stored since, past a cursor; embeds
them off the event loop, and hands them to ``add_vectors`` (one transaction
a batch, never the message's insert transaction). ``use_vectors`` gives the
store what embeds a query, one side per embedder (the local passes search
with two at once, each with its weight, the faster model filling in for
the rows the better one has not embedded yet); the searches then fuse words and
every side (``store.hybrid``). A side's vectors are read into memory on the
first search (``store.vector_index``), kept up to date as ``add_vectors``
stores more, and let go of by ``drop_vectors``.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING

from koroku_tui.store import vectors
from koroku_tui.store.errors import StoreReadError, translate_errors
from koroku_tui.store.manager.core import Coverage, QueryVectors, StoreCore, VectorSide

if TYPE_CHECKING:  # numpy: loaded with the first vector, after the app's first frame
    from koroku_tui.store.vector_index import Vector, VectorIndex

__all__ = ["Similar", "VectorsMixin"]

_LOAD_PAGE = 4096
"""Vectors read into memory per lock hold (a few ms), so writes are not held up longer. Pages
of 20,000 left ~20 MB more in the heap at 100,000 MiniLM rows (their blobs and rows, freed
between the index's arrays): +103 MB RSS after the first search against +82."""

_LEFT_OUT_SLACK = 64
"""Left-out rows looked at past the count lacking a vector: a turn's rows without text
(a rewind's, an error's) are not in the search index."""

Similar = list[tuple[int, float]]
"""One side's nearest rows: ``(message id, cosine)``, best first."""


class VectorsMixin(StoreCore):
    """The vectors of every indexed message, per embedder."""

    def use_vectors(
        self,
        source: QueryVectors | None,
        weight: float = 1.0,
        *,
        beside: bool = False,
        fills_in_for: str | None = None,
    ) -> None:
        """Search with ``source``'s vectors too, its ranks counted ``weight`` times.

        ``None``: full text alone, as before. Without ``beside`` it is the one
        vector side (any other is let go of); with it, one more. Its vectors
        in memory are kept when it was searched already.

        ``fills_in_for``: another side's embedder, still embedding the history.
        This side then ranks only the rows that one has no vector of, and while
        that one lacks a vector of any row (its coverage, not what a query found),
        it counts no more than this one: its ranks among part of the rows must not
        outweigh the words' among all of them (``bench/recall_bench.py``: half
        embedded by MiniLM, counted twice, lost 0.96 -> 0.56 of the paraphrased
        questions at 100,000 messages).
        """
        if source is None:
            self._vector_sides = {}
            return
        kept = self._vector_sides.get(source.embedder)
        sides = dict(self._vector_sides) if beside else {}
        if kept is not None and kept.source.dims == source.dims:
            kept.source, kept.weight, kept.fills_in_for = source, weight, fills_in_for
            sides[source.embedder] = kept
        else:
            sides[source.embedder] = VectorSide(source, weight, fills_in_for=fills_in_for)
        self._vector_sides = sides

    def drop_vectors(self, embedder: str) -> None:
        """Search without ``embedder``'s vectors from now on, and let go of them in memory."""
        dropped = self._vector_sides.get(embedder)
        self._vector_sides = {n: s for n, s in self._vector_sides.items() if n != embedder}
        if dropped is not None and dropped.index is not None:
            from koroku_tui.store.vector_index import give_back_free_memory

            dropped.index = None
            give_back_free_memory()  # ~2 ms: the rows' pages may sit in the heap

    def rank_side(self, embedder: str, ranks: bool) -> None:
        """Whether searches rank ``embedder``'s side; without it, its vectors stay in memory.

        ``--print`` over a long backlog: the side it fills in for embedded what a
        search may want (``unembedded_near``), so that side ranks as if it had
        every row (x2 alone, not x1 beside this one).
        """
        side = self._vector_sides.get(embedder)
        if side is not None:
            side.ranks = ranks

    @property
    def vector_sides(self) -> dict[str, float]:
        """The embedders searched beside the words, and their weights."""
        return {name: side.weight for name, side in self._vector_sides.items()}

    async def unembedded(self, embedder: str, after: int, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` indexed rows past id ``after`` without a vector of ``embedder``.

        Each is ``(message id, text)``.

        The text is what full text indexes (``search.searchable_text``);
        oldest first. A row gets its vector from ``add_vectors``.
        """
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                known = await vectors.embedder_id(conn, embedder, 0, create=False)
                return await vectors.unembedded(conn, known, after, limit)

    async def unembedded_below(
        self, embedder: str, below: int | None, limit: int
    ) -> list[tuple[int, str]]:
        """Up to ``limit`` indexed rows under id ``below`` without a vector, newest first.

        ``None``: from the newest row. A pass embeds its backlog this way, so
        what users ask about most (the recent) is searched by meaning first.
        """
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                known = await vectors.embedder_id(conn, embedder, 0, create=False)
                return await vectors.unembedded_below(conn, known, below, limit)

    async def add_vectors(
        self, embedder: str, dims: int, rows: Sequence[tuple[int, Vector]]
    ) -> None:
        """Store ``(message id, vector)`` pairs of ``embedder`` in one transaction.

        Vectors are kept of unit length, as float16; a row that left the
        search index meanwhile is skipped. Raises ``StoreWriteError``.
        """
        from koroku_tui.store.vector_index import to_blob

        blobs = [(message_id, to_blob(vector)) for message_id, vector in rows]
        conn = self._connection()
        async with self._lock:
            side = self._vector_sides.get(embedder)
            counted = side.counted if side is not None else None
            newest = counted.newest if counted is not None else 0
            async with self._transaction(conn):
                known = await vectors.embedder_id(conn, embedder, dims, create=True)
                assert known is not None
                # Coverage counts the rows up to its newest; those past it are counted alone.
                added = await vectors.write_vectors(
                    conn, known, [r for r in blobs if r[0] <= newest]
                )
                await vectors.write_vectors(conn, known, [r for r in blobs if r[0] > newest])
            if side is not None and counted is not None and side.counted is counted:
                # Its coverage stays current without counting again (~100 ms at 100,000).
                side.counted = counted._replace(newest=newest, done=counted.done + added)
            if side is not None and side.index is not None:
                await asyncio.to_thread(side.index.add_blobs, blobs)

    async def vector_progress(self, embedder: str) -> tuple[int, int]:
        """``(rows with a vector of embedder, rows to embed in all)``."""
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                known = await vectors.embedder_id(conn, embedder, 0, create=False)
                return await vectors.vector_counts(conn, known)

    async def similar_sides(
        self, query: str, k: int, exclude: frozenset[int] = frozenset()
    ) -> list[tuple[Similar, float]]:
        """Each side's ``k`` rows nearest ``query`` and the weight its ranks count.

        Empty without ``use_vectors``; a side with no vector yet, or whose
        embedder has none for the query, is left out. The scans run in threads.
        A side that fills in for another lowers that one's weight to its own while
        that one lacks a vector of some row (``has_every_row``): whether the query
        happened to find such a row does not matter.
        """
        every = list(self._vector_sides.values())
        # Every side's query first (each may wait for its backlog: ``--print``), then
        # the scans, from one state: a side skips the rows of the side it fills in
        # for only if that one has a query vector (else those rows had neither), and
        # only once that side's wait is over (else rows embedded meanwhile had both).
        asked_for = await asyncio.gather(*(side.source.query_vector(query) for side in every))
        asked = {
            side.source.embedder
            for side, vector in zip(every, asked_for, strict=True)
            if vector is not None
        }
        # A query may have made a side stop ranking (``rank_side``: ``--print``'s
        # candidates); it ranks still if the side it fills in for has no query vector.
        ranking = [
            (side, vector)
            for side, vector in zip(every, asked_for, strict=True)
            if side.ranks or (side.fills_in_for is not None and side.fills_in_for not in asked)
        ]
        sides = [side for side, _ in ranking]
        queries = [vector for _, vector in ranking]
        skips: list[VectorIndex | None] = []
        for side in sides:
            filled = self._vector_sides.get(side.fills_in_for or "")
            if filled is None or filled.source.embedder not in asked:
                skips.append(None)
            else:  # read in whole before the side that skips its rows scans
                skips.append(await self._loaded_vectors(filled))
        indexes = [
            await self._loaded_vectors(side) if vector is not None else None
            for side, vector in zip(sides, queries, strict=True)
        ]
        scanning = [side for side, index in zip(sides, indexes, strict=True) if index is not None]
        # The weights from the rows the scans rank: a batch the pass stores mid-scan is
        # in neither scan of the side it completes (counted twice over part of the rows).
        weights = {side.source.embedder: side.weight for side in scanning}
        for side in scanning:
            filled = self._vector_sides.get(side.fills_in_for or "")
            if filled is None or filled.source.embedder not in weights:
                continue
            if not await self.has_every_row(filled, exclude):
                weights[filled.source.embedder] = min(weights[filled.source.embedder], side.weight)
        # Each index's rows counted once, before either scans (threads: the pass may add
        # a row meanwhile), with no wait since the weights were read: its own scan and the
        # side skipping its rows see the same rows, and those its coverage counted.
        counts = {id(index): len(index) for index in [*indexes, *skips] if index is not None}
        found = await asyncio.gather(
            *(
                asyncio.to_thread(
                    index.nearest,
                    vector,
                    k,
                    exclude,
                    skip,
                    upto=counts[id(index)],
                    skip_upto=None if skip is None else counts[id(skip)],
                )
                for index, vector, skip in zip(indexes, queries, skips, strict=True)
                if index is not None and vector is not None
            )
        )
        return [
            (rows, weights[side.source.embedder])
            for side, rows in zip(scanning, found, strict=True)
            if rows
        ]

    async def has_every_row(self, side: VectorSide, exclude: frozenset[int] = frozenset()) -> bool:
        """Whether ``side``'s embedder has a vector of every row to embed, in the file and in
        its index in memory (``vector_progress``), but rows of ``exclude``, which the search
        leaves out: in a turn, the conversation's own newest rows lack theirs (the passes
        wait for the turn to end), and MiniLM counted as WordLlama in every model's search.

        Counted again only once another process wrote to the file, or rows left or
        joined the index below its newest (``_recount_coverage``): counting takes
        ~100-150 ms at 100,000 rows, too long for each search. Rows stored since are
        counted alone (a seek), and ``add_vectors`` keeps the count of the others.
        """
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                version = await vectors.data_version(conn)
                counted = side.counted
                if (
                    counted is None
                    or counted.version != version
                    or counted.changes != conn.total_changes
                ):
                    known = await vectors.embedder_id(conn, side.source.embedder, 0, create=False)
                    if counted is None or counted.version != version:  # another process wrote
                        newest = await vectors.last_indexed(conn)
                        done, total = await vectors.vector_counts(conn, known)
                    else:  # this one stored rows: those past the newest counted are added
                        more, embedded, newest = await vectors.coverage_past(
                            conn, known, counted.newest
                        )
                        done, total = counted.done + embedded, counted.total + more
                    counted = side.counted = Coverage(
                        conn.total_changes, version, newest, done, total
                    )
        # The ranks come from the index in memory: another process may have ended the pass
        # (the file has every row) while this one holds only part of them. Its rows this
        # process took out of the search index are not held (``VectorIndex.live``): they
        # stood in for rows another process added since.
        held = side.index.live if side.index is not None else counted.done
        short = counted.total - min(counted.done, held)
        if short <= 0:
            return True
        if short > len(exclude):
            return False
        # The rows lacking one are the search's left-out ones only if as many of those lack
        # one in the file (the newest: a turn's own; the index holds what the file has).
        left_out = heapq.nlargest(short + _LEFT_OUT_SLACK, exclude)
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                known = await vectors.embedder_id(conn, side.source.embedder, 0, create=False)
                return await vectors.lacking_among(conn, known, left_out) >= short

    async def refresh_vectors(self, embedder: str) -> int | None:
        """Read in the vectors of ``embedder`` another process stored; the first row without one.

        Two windows on one home index at once, each skipping the rows the
        other embedded first: a search in one must see the other's vectors
        too. The index holds every vector of the rows up to the first one
        the file lacked at the last look; from there the file is read again
        (the indexer calls this when nothing is left past its cursor, so it
        is a few rows). Returns that first row (``None``: every row has its
        vector, or no search read vectors yet): the indexer embeds from it.
        """
        side = self._vector_sides.get(embedder)
        index = side.index if side is not None else None
        if side is None or index is None:
            return None
        after = side.read_to
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                known = await vectors.embedder_id(conn, embedder, 0, create=False)
                lacking = await vectors.unembedded(conn, known, after, 1)
                last = await vectors.last_indexed(conn)
        if known is not None:
            await self._read_vectors(index, known, after)
        gap = lacking[0][0] if lacking else None
        if side.index is index:
            side.read_to = gap - 1 if gap is not None else max(after, last)
        return gap

    async def _loaded_vectors(self, side: VectorSide) -> VectorIndex:
        """The index of ``side``'s vectors, read a page at a time on first use.

        It is in place from the start, so vectors stored meanwhile join it
        (a search meanwhile sees those read so far).
        """
        from koroku_tui.store.vector_index import VectorIndex, give_back_free_memory

        if side.index is not None:
            return side.index
        index = side.index = VectorIndex(side.source.dims)
        side.read_to = 0
        conn = self._connection()
        try:
            async with self._lock:
                with translate_errors(self._path, StoreReadError):
                    known = await vectors.embedder_id(conn, side.source.embedder, 0, create=False)
                    if known is not None:
                        index.reserve((await vectors.vector_counts(conn, known))[0] + 1024)
            if known is not None:
                await self._read_vectors(index, known, 0)
                await asyncio.to_thread(give_back_free_memory)
        except BaseException:
            if side.index is index:
                side.index = None
            raise
        return index

    async def _read_vectors(self, index: VectorIndex, embedder: int, after: int) -> None:
        """Add the file's vectors of ``embedder`` past row ``after`` to ``index``, a page a hold."""
        conn = self._connection()
        while True:
            async with self._lock:
                with translate_errors(self._path, StoreReadError):
                    page = await vectors.vector_blobs(conn, embedder, after, _LOAD_PAGE)
                # Off the loop (quantizing a page to int8); the lock keeps
                # other writers out meanwhile.
                await asyncio.to_thread(index.add_blobs, page)
            if len(page) < _LOAD_PAGE:
                return
            after = page[-1][0]
