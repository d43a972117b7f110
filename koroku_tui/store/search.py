"""Full-text search: what gets indexed, and turning user input into a safe FTS5 query.

The index (``messages_fts``, rowid = ``messages.id``) holds the visible text of
each session event (thoughts, calls and tool output are left out) and the
summary of each compaction. User input is never passed to FTS5 as syntax:
every whitespace-separated term becomes a quoted FTS5 string, so ``"``,
``AND(``, ``NEAR``, ``*`` or ``-`` are just text. Terms are ANDed; the last
one matches as a prefix while the user is still typing it.
"""

from __future__ import annotations

import aiosqlite

from koroku_tui.events import CompactionEvent, Event
from koroku_tui.store.records import MATCH_END, MATCH_START, SearchHit

__all__ = ["build_match_query", "search_messages", "searchable_text"]

#: Tokens shown around a match in a snippet.
SNIPPET_TOKENS = 12

# Columns in ``SearchHit``'s field order: a row is the record's arguments.
_SEARCH_SQL = """
SELECT m.session_id, s.title, m.id, m.kind, f.role, m.created_at,
       snippet(messages_fts, 0, ?, ?, '…', ?)
FROM messages_fts AS f
JOIN messages AS m ON m.id = f.rowid
JOIN sessions AS s ON s.id = m.session_id
WHERE messages_fts MATCH ? {session_filter}
ORDER BY f.rank, m.id DESC
LIMIT ?
"""


def searchable_text(event: Event) -> str:
    """What the index holds for ``event``: visible text, or the summary."""
    text = event.summary if isinstance(event, CompactionEvent) else event.text
    # The snippet markers must only ever mean "match".
    return text.replace(MATCH_START, "").replace(MATCH_END, "")


def _has_token(term: str) -> bool:
    # FTS5's unicode61 tokenizer keeps letters and digits and splits on the
    # rest; a term with neither would become an empty (useless) phrase.
    return any(ch.isalnum() for ch in term)


def build_match_query(query: str) -> str | None:
    """An FTS5 MATCH expression for free text, or ``None`` when nothing is searchable.

    For example ``say AND(`` becomes ``"say" "AND("*``; a ``"`` inside a term
    is doubled, which is how FTS5 strings escape it.
    """
    terms = [term for term in query.split() if _has_token(term)]
    if not terms:
        return None
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms]
    if not query[-1].isspace():
        quoted[-1] += "*"
    return " ".join(quoted)


async def search_messages(
    conn: aiosqlite.Connection, query: str, limit: int, session_id: int | None
) -> list[SearchHit]:
    """Best matches first (FTS5 rank), newest first among equals."""
    match = build_match_query(query)
    if match is None or limit <= 0:
        return []
    params: list[object] = [MATCH_START, MATCH_END, SNIPPET_TOKENS, match]
    session_filter = ""
    if session_id is not None:
        session_filter = "AND m.session_id = ?"
        params.append(session_id)
    params.append(limit)
    rows = await conn.execute_fetchall(_SEARCH_SQL.format(session_filter=session_filter), params)
    return [SearchHit(*row) for row in rows]
