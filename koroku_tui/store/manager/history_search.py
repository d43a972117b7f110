"""Full-text search over every session: for the history screen and for the model.

The matching and ranking live in ``koroku_tui.store.search`` (FTS5 with
stems, bm25 with recent rows a little higher); this part decides what each
caller is shown. The history screen searches everything as the user types
(``search``, ``search_page``); the model's ``search_history`` leaves out what
it already sees, the current session's context.
"""

from __future__ import annotations

from dataclasses import replace

from koroku_tui.store.errors import StoreReadError, translate_errors
from koroku_tui.store.manager.context_cache import ContextCacheMixin
from koroku_tui.store.records import SearchHit, SearchPage
from koroku_tui.store.search import (
    SearchQuery,
    build_match_query,
    count_matches,
    originals_of_copies,
    ranked_hits,
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


class HistorySearchMixin(ContextCacheMixin):
    """Messages and summaries of every session, found by their words."""

    async def search(
        self, query: str, limit: int = 50, *, session_id: int | None = None
    ) -> list[SearchHit]:
        """Messages and summaries matching ``query`` across all sessions (or one).

        The same matching and ranking as ``search_history`` (any meaningful
        word, stems, phrases, bm25 with recent rows a little higher), with
        nothing excluded but the trash, and the last word matched as a prefix
        while the user types. Any input is safe; nothing searchable returns ``[]``.
        """
        match = build_match_query(query, prefix_last=True)
        if match is None or limit <= 0:
            return []
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                return await ranked_hits(
                    conn,
                    SearchQuery(match, session_id=session_id),
                    limit,
                    snippet_tokens=LIST_SNIPPET_TOKENS,
                )

    async def search_page(self, query: str, limit: int = 100) -> SearchPage:
        """``search`` across all sessions, with how many rows matched in all.

        The rows are counted only when the hits fill ``limit`` (else ``total``
        is their number): a list of the best hits can say it shows a part.
        """
        hits = await self.search(query, limit)
        total = len(hits)
        if hits and total >= limit:
            match = build_match_query(query, prefix_last=True)
            assert match is not None  # there are hits
            conn = self._connection()
            async with self._lock:
                with translate_errors(self._path, StoreReadError):
                    total, _ = await count_matches(conn, SearchQuery(match))
        return SearchPage(hits=hits, total=max(total, len(hits)))

    async def search_history(self, query: str, limit: int = 10) -> SearchPage:
        """Every session's messages and summaries matching ``query``, best first.

        What the model already sees (the rows of the current session's
        context) is left out; rows a compaction or a rewind took out of it
        are past and found. Natural language works: a hit needs any meaningful word of
        the query (ranked by how many and how rare, recent ones a little
        higher); words match on their stems; quotes keep a phrase; any input
        is safe. ``limit`` is clamped to 1..50; ``total`` counts every match
        outside the context. Snippets are about 300 characters.
        """
        limit = min(max(limit, 1), MAX_HISTORY_HITS)
        match = build_match_query(query)
        if match is None:
            return SearchPage(hits=[], total=0)
        context = await self._loaded_context()
        conn = self._connection()
        async with self._lock:
            # Exactly the rows the model sees: after a rewind that is not "every
            # row from the floor on" (an abandoned branch is past, searchable).
            seen = {m.id for m in context.messages}
            with translate_errors(self._path, StoreReadError):
                # In a fork, the source rows its context copies are seen too.
                times = {m.created_at for m in context.messages}
                seen |= await originals_of_copies(conn, match, self.session_id, times)
                search = SearchQuery(match, exclude_ids=frozenset(seen))
                total, in_context = await count_matches(conn, search)
                hits = await ranked_hits(
                    conn, search, limit, snippet_tokens=SNIPPET_TOKENS, skip=in_context
                )
        hits = [replace(hit, snippet=trim_snippet(hit.snippet, SNIPPET_CHARS)) for hit in hits]
        return SearchPage(hits=hits, total=total - in_context)
