"""Vectors for recall by meaning: the rows still to embed, storing vectors, similar rows.

The store takes and returns vectors; the embedder is the caller's
(``agent.recall``): it asks ``unembedded`` for rows past a cursor, embeds
them off the event loop, and hands them to ``add_vectors`` (one transaction
a batch, never the message's insert transaction). ``use_vectors`` gives the
store what embeds a query; the searches then fuse words and meaning
(``store.hybrid``). The vectors of that embedder are read into memory on
the first search (``store.vector_index``), and kept up to date as
``add_vectors`` stores more.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from koroku_tui.store import vectors
from koroku_tui.store.errors import StoreReadError, translate_errors
from koroku_tui.store.manager.core import QueryVectors, StoreCore

if TYPE_CHECKING:  # numpy: loaded with the first vector, after the app's first frame
    from koroku_tui.store.vector_index import Vector, VectorIndex

__all__ = ["VectorsMixin"]

_LOAD_PAGE = 20_000
"""Vectors read into memory per lock hold (~30 ms here), so writes are not held up longer."""


class VectorsMixin(StoreCore):
    """The vectors of every indexed message, per embedder."""

    def use_vectors(self, source: QueryVectors | None) -> None:
        """Search with ``source``'s vectors too (``None``: full text alone, as before)."""
        before = self._query_vectors
        if source is None or before is None or source.embedder != before.embedder:
            self._vector_index = None
        self._query_vectors = source

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

    async def add_vectors(
        self, embedder: str, dims: int, rows: Sequence[tuple[int, Vector]]
    ) -> None:
        """Store ``(message id, vector)`` pairs of ``embedder`` in one transaction.

        Vectors are kept of unit length, as float16; a message deleted
        meanwhile is skipped. Raises ``StoreWriteError``.
        """
        from koroku_tui.store.vector_index import to_blob

        blobs = [(message_id, to_blob(vector)) for message_id, vector in rows]
        conn = self._connection()
        async with self._lock:
            async with self._transaction(conn):
                known = await vectors.embedder_id(conn, embedder, dims, create=True)
                assert known is not None
                await vectors.write_vectors(conn, known, blobs)
            source, index = self._query_vectors, self._vector_index
            if index is not None and source is not None and source.embedder == embedder:
                index.add_blobs(blobs)

    async def vector_progress(self, embedder: str) -> tuple[int, int]:
        """``(rows with a vector of embedder, rows to embed in all)``."""
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                known = await vectors.embedder_id(conn, embedder, 0, create=False)
                return await vectors.vector_counts(conn, known)

    async def similar_rows(
        self, query: str, k: int, exclude: frozenset[int] = frozenset()
    ) -> list[tuple[int, float]]:
        """The ``k`` rows whose vectors are nearest ``query``'s: ``(id, cosine)``, best first.

        Empty without ``use_vectors``, before any vector exists, or when the
        embedder has no vector for the query. The scan runs in a thread.
        """
        source = self._query_vectors
        if source is None:
            return []
        vector = await source.query_vector(query)  # first: it may wait for the backlog
        if vector is None:
            return []
        index = await self._loaded_vectors(source)
        return await asyncio.to_thread(index.nearest, vector, k, exclude)

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
        source, index = self._query_vectors, self._vector_index
        if source is None or index is None or source.embedder != embedder:
            return None
        after = self._vectors_read_to
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                known = await vectors.embedder_id(conn, embedder, 0, create=False)
                lacking = await vectors.unembedded(conn, known, after, 1)
                last = await vectors.last_indexed(conn)
        if known is not None:
            await self._read_vectors(index, known, after)
        gap = lacking[0][0] if lacking else None
        if self._vector_index is index:
            self._vectors_read_to = gap - 1 if gap is not None else max(after, last)
        return gap

    async def _loaded_vectors(self, source: QueryVectors) -> VectorIndex:
        """The index of ``source``'s vectors, read a page at a time on first use.

        It is in place from the start, so vectors stored meanwhile join it
        (a search meanwhile sees those read so far).
        """
        from koroku_tui.store.vector_index import VectorIndex

        if self._vector_index is not None:
            return self._vector_index
        index = self._vector_index = VectorIndex(source.dims)
        self._vectors_read_to = 0
        conn = self._connection()
        try:
            async with self._lock:
                with translate_errors(self._path, StoreReadError):
                    known = await vectors.embedder_id(conn, source.embedder, 0, create=False)
                    if known is not None:
                        index.reserve((await vectors.vector_counts(conn, known))[0] + 1024)
            if known is not None:
                await self._read_vectors(index, known, 0)
        except BaseException:
            if self._vector_index is index:
                self._vector_index = None
            raise
        return index

    async def _read_vectors(self, index: VectorIndex, embedder: int, after: int) -> None:
        """Add the file's vectors of ``embedder`` past row ``after`` to ``index``, a page a hold."""
        conn = self._connection()
        while True:
            async with self._lock:
                with translate_errors(self._path, StoreReadError):
                    page = await vectors.vector_blobs(conn, embedder, after, _LOAD_PAGE)
                    index.add_blobs(page)
            if len(page) < _LOAD_PAGE:
                return
            after = page[-1][0]
