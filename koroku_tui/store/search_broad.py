"""Broad queries: the ones that match a large part of the history and mean little.

Only stop words (``what did we do``, searched when nothing else was asked)
or a two-letter prefix typed in the history screen (``co`` is ``"co"*``:
config, commit, compaction...) match tens of thousands of rows in a big
history, and bm25 scores every one of them: 40 to 60 ms at 100,000
messages before anything else. Such a query has no word to be relevant
to, so it ranks only its newest ``BROAD_CANDIDATES`` matches (still by
bm25 and recency): under 20 ms, and the same hits in all but name, since
recency already lifts the newest. A query with any other word is ranked
over every match, however many.
"""

from __future__ import annotations

import re
from collections.abc import Collection

import aiosqlite

__all__ = ["BROAD_CANDIDATES", "is_broad", "newest_floor"]

#: The newest matches a broad query ranks (bm25 costs about 3 µs a row here).
BROAD_CANDIDATES = 5_000
#: A prefix this short (or shorter) makes a query broad.
SHORT_PREFIX = 2

# A term of ``build_match_query``'s output: a quoted phrase ("" is a quote
# inside it), a star after it when it is a prefix.
_TERM = re.compile(r'"((?:[^"]|"")*)"(\*?)')
_TOKEN = re.compile(r"[^\W_]+")

_FLOOR_SQL = (
    "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?"
)


def is_broad(match: str, stop_words: Collection[str]) -> bool:
    """True when every term of ``match`` is stop words or a short prefix."""
    terms = _TERM.findall(match)
    if not terms:
        return False
    for phrase, star in terms:
        tokens = _TOKEN.findall(phrase.lower())
        short_prefix = bool(star) and len("".join(tokens)) <= SHORT_PREFIX
        if not short_prefix and not all(token in stop_words for token in tokens):
            return False
    return True


async def newest_floor(conn: aiosqlite.Connection, match: str, stop_words: Collection[str]) -> int:
    """The lowest rowid a search for ``match`` ranks: 0 (all) unless the query is broad.

    For a broad query, the rowid of its ``BROAD_CANDIDATES``-th newest match
    (walking the index by rowid, without scoring: about a millisecond).
    """
    if not is_broad(match, stop_words):
        return 0
    rows = list(await conn.execute_fetchall(_FLOOR_SQL, (match, BROAD_CANDIDATES - 1)))
    return int(rows[0][0]) if rows else 0
