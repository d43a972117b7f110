"""Search over every session, by words and meaning: for the history screen and the model.

The matching and ranking live in ``koroku_tui.store.search`` (FTS5 with
stems, bm25 with recent rows a little higher), fused with vector similarity
when the run gave the store an embedder (``use_vectors``; ``store.hybrid``);
this part decides what each caller is shown. The history screen searches
everything as the user types (``search``, ``search_page``); the model's
``search_history`` leaves out what it already sees, the current session's
context.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from itertools import zip_longest

from koroku_tui.store import vectors
from koroku_tui.store.errors import StoreReadError, translate_errors
from koroku_tui.store.hybrid import FUSION_DEPTH, fused_hits, word_hits, word_side
from koroku_tui.store.manager.context_cache import ContextCacheMixin
from koroku_tui.store.manager.vectors import Similar, VectorsMixin
from koroku_tui.store.records import MATCH_START, SearchHit, SearchPage
from koroku_tui.store.search import (
    SearchQuery,
    build_match_query,
    count_matches,
    originals_of_copies,
    ranked_ids,
    trim_snippet,
)

__all__ = ["HistorySearchMixin"]

MAX_HISTORY_HITS = 50
"""The most hits ``search_history`` returns at once."""
SNIPPET_TOKENS = 64
"""FTS5's limit; the snippet is then cut to ``SNIPPET_CHARS`` around the match."""
SNIPPET_CHARS = 300
LIST_SNIPPET_TOKENS = 12
"""Tokens around a match in the history screen's one-line results."""
LIST_MEANING_HITS = 10
"""Rows the history screen lists by meaning at most: a word that matches nothing
(a typo, a name never mentioned) shows a few near ones, not a page of them."""
LIST_PLAIN_CHARS = 80
"""Characters of a hit found by meaning alone in the history screen's one-line results."""


class HistorySearchMixin(ContextCacheMixin, VectorsMixin):
    """Messages and summaries of every session, found by their words and their meaning."""

    async def search(
        self, query: str, limit: int = 50, *, session_id: int | None = None
    ) -> list[SearchHit]:
        """Messages and summaries matching ``query`` across all sessions (or one).

        The same matching and ranking as ``search_history`` (any meaningful
        word, stems, phrases, bm25 with recent rows a little higher, fused
        with the nearest by meaning), with nothing excluded but the trash,
        and the last word matched as a prefix while the user types. Any input
        is safe; nothing searchable returns ``[]``.
        """
        match = build_match_query(query, prefix_last=True)
        if match is None or limit <= 0:
            return []
        search = SearchQuery(match, session_id=session_id)
        meaning = self._meaning(query, LIST_MEANING_HITS)
        conn = self._connection()
        try:
            async with self._lock:
                with translate_errors(self._path, StoreReadError):
                    words = await word_side(conn, search, limit)
        except BaseException:
            meaning.cancel()
            raise
        similar = await meaning
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                if not similar:
                    return await word_hits(
                        conn, search, words, limit, snippet_tokens=LIST_SNIPPET_TOKENS
                    )
                hits, _ = await fused_hits(
                    conn,
                    search,
                    words,
                    similar,
                    limit,
                    snippet_tokens=LIST_SNIPPET_TOKENS,
                    plain_chars=LIST_PLAIN_CHARS,
                )
                return hits

    def _meaning(
        self, query: str, k: int, exclude: frozenset[int] = frozenset()
    ) -> asyncio.Future[list[tuple[Similar, float]]]:
        """``similar_sides`` started now: its scans (threads) run while SQLite ranks the words.

        Awaited outside the lock: the first search reads the vectors under it.
        """
        return asyncio.ensure_future(self.similar_sides(query, k, exclude))

    async def search_page(self, query: str, limit: int = 100) -> SearchPage:
        """``search`` across all sessions, with how many rows matched in all.

        The rows are counted only when the hits fill ``limit`` (else ``total``
        is their number): a list of the best hits can say it shows a part.
        """
        hits = await self.search(query, limit)
        # Found by meaning alone: no word matched, nothing is marked in the snippet.
        alone = sum(1 for hit in hits if MATCH_START not in hit.snippet)
        total = len(hits)
        if hits and total >= limit:
            match = build_match_query(query, prefix_last=True)
            assert match is not None  # there are hits
            conn = self._connection()
            async with self._lock:
                with translate_errors(self._path, StoreReadError):
                    total, _ = await count_matches(conn, SearchQuery(match))
            total += alone
        return SearchPage(hits=hits, total=max(total, len(hits)))

    async def search_history(self, query: str, limit: int = 10) -> SearchPage:
        """Every session's messages and summaries matching ``query``, best first.

        What the model already sees (the rows of the current session's
        context) is left out; rows a compaction or a rewind took out of it
        are past and found. Natural language works: a hit needs any meaningful word of
        the query (ranked by how many and how rare, recent ones a little
        higher); words match on their stems; quotes keep a phrase; any input
        is safe. With an embedder (``use_vectors``) the rows nearest by meaning
        are fused in, found whatever their words (their snippet is the start of
        their text). ``limit`` is clamped to 1..50; ``total`` counts every match
        outside the context, plus those found by meaning alone among the hits.
        Snippets are about 300 characters.
        """
        limit = min(max(limit, 1), MAX_HISTORY_HITS)
        match = build_match_query(query)
        if match is None:
            return SearchPage(hits=[], total=0)
        context = await self._loaded_context()
        # Exactly the rows the model sees: after a rewind that is not "every
        # row from the floor on" (an abandoned branch is past, searchable).
        seen = frozenset(m.id for m in context.messages)
        meaning = self._meaning(query, FUSION_DEPTH + limit, seen)
        conn = self._connection()
        try:
            async with self._lock:
                with translate_errors(self._path, StoreReadError):
                    # In a fork, the source rows its context copies are seen too.
                    times = {m.created_at for m in context.messages}
                    copied = await originals_of_copies(conn, match, self.session_id, times)
                    search = SearchQuery(match, exclude_ids=seen | copied)
                    total, in_context = await count_matches(conn, search)
                    words = await word_side(conn, search, limit, skip=in_context)
        except BaseException:
            meaning.cancel()
            raise
        similar = [
            ([(i, score) for i, score in rows if i not in copied], weight)
            for rows, weight in await meaning
        ]
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                if any(rows for rows, _ in similar):
                    hits, alone = await fused_hits(
                        conn,
                        search,
                        words,
                        similar,
                        limit,
                        snippet_tokens=SNIPPET_TOKENS,
                        plain_chars=SNIPPET_CHARS,
                    )
                    total += alone
                else:
                    hits = await word_hits(
                        conn, search, words, limit, snippet_tokens=SNIPPET_TOKENS
                    )
        hits = [replace(hit, snippet=trim_snippet(hit.snippet, SNIPPET_CHARS)) for hit in hits]
        return SearchPage(hits=hits, total=total - in_context)

    async def unembedded_near(
        self, query: str, near: str, lacking: str, k: int, words: int
    ) -> list[tuple[int, str]]:
        """The rows without a vector of ``lacking`` that ``search_history(query)`` may want.

        ``near``'s ``k`` nearest among them and the words' best ``words``
        that lack one, a row of each in turn: ``(message id, text)``, no row twice. The rows that
        search leaves out (the current session's context, the trash) are left out here
        too: ``--print`` continues a session that may be about the very thing
        asked, and its rows took every slot (so did a trashed one's). Empty unless
        both embedders are sides (``use_vectors``).
        """
        near_side, lacking_side = self._vector_sides.get(near), self._vector_sides.get(lacking)
        if near_side is None or lacking_side is None:
            return []
        skip = await self._loaded_vectors(lacking_side)
        context = await self._loaded_context()
        left_out = frozenset(m.id for m in context.messages)
        match = build_match_query(query)
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                left_out |= await vectors.trashed_rows(conn)
                if match is not None:
                    times = {m.created_at for m in context.messages}
                    left_out |= await originals_of_copies(conn, match, self.session_id, times)
        nearest: list[int] = []
        vector = await near_side.source.query_vector(query)
        if vector is not None:
            index = await self._loaded_vectors(near_side)
            found = await asyncio.to_thread(index.nearest, vector, k, left_out, skip)
            nearest = [row_id for row_id, _ in found]
        best: list[int] = []
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                if match is not None and words > 0:
                    search = SearchQuery(match, exclude_ids=left_out)
                    _, in_context = await count_matches(conn, search)
                    ranked = await ranked_ids(conn, search, words, skip=in_context)
                    best = [row_id for row_id in ranked if row_id not in skip]
                # Best first, taking turns: the caller may embed only the first ones.
                turns = [i for pair in zip_longest(nearest, best) for i in pair if i is not None]
                return await vectors.texts_of(conn, list(dict.fromkeys(turns)))
