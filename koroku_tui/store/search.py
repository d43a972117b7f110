"""Full-text search: what gets indexed, the query builder, and the ranking.

The index (``messages_fts``, rowid = ``messages.id``, tokenizer ``porter
unicode61 remove_diacritics 2``) holds everything a past conversation said:
the visible text of messages, the name and arguments of each function call,
each tool result (capped at ``RESULT_CHARS``), and compaction summaries. The
model's thinking is left out.

Queries are natural language, never FTS5 syntax. ``build_match_query`` turns
"what did we decide about the backup script" into ``"decide" OR "backup" OR
"script"``: stop words dropped, every term quoted (so ``"``, ``AND(``,
``NEAR``, ``*``, ``-`` or ``:`` are just text), a hit needs ANY term, and
``"quoted phrases"`` stay phrases. Porter stemming makes "compacted" find
"compaction". The search screen (ctrl+r) and the model's ``search_history``
share the builder and the ranking (``ranked_ids``), so both find the same.

Text and queries are indexed and searched in their index form
(``search_forms``: NFKC; Chinese, Japanese and Korean one token per
character), and a broad query ranks only its newest matches
(``search_broad``).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import aiosqlite

from koroku_tui.events import CompactionEvent, Event, SessionEvent
from koroku_tui.events.views import Attached, Called, Said, ToolResult, part_views
from koroku_tui.store.records import MATCH_END, MATCH_START, SearchHit
from koroku_tui.store.search_broad import newest_floor
from koroku_tui.store.search_forms import (
    SEPARATOR,
    UNSPACED_STOP_WORDS,
    index_form,
    normalized,
    query_phrases,
)

__all__ = [
    "ECHO_TOOLS",
    "INDEX_INSERT_SQL",
    "RESULT_CHARS",
    "IndexEntry",
    "SearchQuery",
    "build_match_query",
    "count_matches",
    "index_entries",
    "indexed_role",
    "matched_hits",
    "originals_of_copies",
    "ranked_ids",
    "searchable_text",
    "trim_snippet",
]

#: The tools whose calls and answers only repeat what is stored elsewhere (the
#: conversations, the memory files): the built-in tools whose spec says
#: ``echoes_history`` (kind "reads history" or "reads memory"). The index
#: leaves them out: otherwise every recall would be found again by the next
#: search, ahead of the original. The store cannot ask the tool registry
#: (agent/ sits above it), so it keeps their names; tests/test_tools_spec.py
#: checks they are the built-in registry's. A tool from elsewhere (an MCP
#: server) never echoes Koroku's own store.
ECHO_TOOLS = frozenset({"search_history", "read_session", "read_memory"})
#: Indexed characters per tool result (and per call's arguments): a 1 MB file
#: read would otherwise swamp the index and bm25's length statistics.
RESULT_CHARS = 4_000
#: Candidates taken by FTS rank before recency re-ranks them in Python.
CANDIDATES = 200
#: At most this many terms reach FTS5 (a pasted page must stay fast).
MAX_TERMS = 12
#: A phrase is searched as its first this many tokens: FTS5 walks a phrase token by
#: token, and a pasted page of Japanese (one run: a phrase of every character) took
#: seconds at 20,000 messages, holding the store meanwhile.
MAX_PHRASE_TOKENS = 16
#: How much a brand-new row beats an old one of the same bm25 score (+25 %),
#: fading with a half-life of ``RECENCY_DAYS``: mild, relevance decides.
RECENCY_BOOST = 0.25
RECENCY_DAYS = 30.0

# Small on purpose: a word the user meant must never be dropped.
_STOP_TEXT = """
    a about above after again all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each
    few for from further had has have having he her here hers him his how i if in into
    is it its itself just let me more most my no nor not now of off on once only or
    other our ours out over own same she should so some such than that the their them
    then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    s t d ll m re ve don didn doesn isn wasn weren won wouldn shouldn couldn
    tell find remember recall said say says please us
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split()) | UNSPACED_STOP_WORDS
# FTS5's unicode61 splits on everything but letters and digits (and keeps
# private-use characters): the same runs are this query's tokens.
_TOKEN = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"([^"]*)"')
# Control characters (the snippet markers among them) and lone surrogates,
# which SQLite cannot even be handed, become spaces.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _bounded(text: str) -> str:
    return text if len(text) <= RESULT_CHARS else text[:RESULT_CHARS]


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def searchable_text(event: Event) -> str:
    """What the index holds for ``event`` (shared by inserts and every migration).

    A summary's text; else, part by part: visible text, each call as its name
    and arguments, each tool result as its name and output, each ``@`` file
    as its path and text (each capped at ``RESULT_CHARS``: a 2 MB attachment
    filled the index). Thoughts, other attachments and the calls and answers of
    ``ECHO_TOOLS`` (a recall's result quotes what it found) are left out.
    """
    if isinstance(event, CompactionEvent):
        text = event.summary
    else:
        pieces: list[str] = []
        for view in part_views(event):
            if isinstance(view, Said):
                if view.file is not None:  # an @file: its name, its start, as a tool's output
                    pieces.append(f"{view.file.path}: {_bounded(view.file.content or '')}")
                elif not view.thought:
                    pieces.append(view.text)
            elif isinstance(view, Called):
                if view.name not in ECHO_TOOLS:
                    pieces.append(f"{view.name} {_bounded(_as_text(view.args))}")
            elif isinstance(view, ToolResult):
                if view.name not in ECHO_TOOLS:
                    pieces.append(f"{view.name}: {_bounded(_as_text(view.outcome))}")
            else:
                assert isinstance(view, Attached)
        # Text parts of one message join as the user sees them; other parts
        # stand apart so a call name never glues onto the text before it.
        text = "\n".join(piece for piece in pieces if piece)
    # The snippet markers must only ever mean "match".
    return text.replace(MATCH_START, "").replace(MATCH_END, "")


def indexed_role(event: Event) -> str | None:
    """Who a hit is from, as the index keeps it: "user", "model", "tool" (results) or None.

    Tool results travel with role "user"; a hit must not say the user wrote
    what a file or a command did.
    """
    if not isinstance(event, SessionEvent):
        return None
    if event.role == "user" and not event.is_real_user_turn:
        return "tool"
    return event.role


IndexEntry = tuple[int, str, str | None]
"""One ``messages_fts`` row: ``(rowid, text, role)``, as ``INDEX_INSERT_SQL`` takes it."""

INDEX_INSERT_SQL = "INSERT INTO messages_fts(rowid, text, role) VALUES (?, ?, ?)"


def index_entries(rows: Iterable[tuple[int, Event | None]]) -> list[IndexEntry]:
    """The index rows for ``(message id, event)`` pairs: unreadable or textless ones have none.

    The one way a row enters the index: a new message, the migration that
    rebuilds the index, a fork's copies before their source is deleted.
    """
    entries: list[IndexEntry] = []
    for message_id, event in rows:
        if event is not None and (text := searchable_text(event)):
            entries.append((message_id, index_form(text), indexed_role(event)))
    return entries


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _clipped(phrase: str) -> str:
    """``phrase`` up to the end of its ``MAX_PHRASE_TOKENS``-th token."""
    for count, token in enumerate(_TOKEN.finditer(phrase), start=1):
        if count == MAX_PHRASE_TOKENS:
            return phrase[: token.end()]
    return phrase


def build_match_query(query: str, *, prefix_last: bool = False) -> str | None:
    """An FTS5 MATCH expression for free text, or ``None`` when nothing is searchable.

    ``what did we decide about "nightly backup"`` becomes ``"decide" OR
    "nightly backup"``. Words that are all stop words are dropped unless
    nothing else is left. With ``prefix_last`` the last bare word matches as
    a prefix, for a search run while the user types (``"kyo"*``).
    """
    clean = _CONTROL.sub(" ", normalized(query))
    phrases = [p for p in _PHRASE.findall(clean) if _tokens(p)]
    rest = _PHRASE.sub(" ", clean).replace('"', " ")
    words = [w for w in rest.split() if _tokens(w)]
    meaningful = [w for w in words if not all(t in _STOP_WORDS for t in _tokens(w))]
    # Stop words count only when nothing else was asked (not even a phrase).
    words = meaningful or ([] if phrases else words)
    terms: list[str] = []
    seen: set[str] = set()
    for term in [*phrases, *words]:
        # Chinese, Japanese and Korean runs become phrases of their characters.
        for phrase in map(_clipped, query_phrases(term, whole=term in phrases)):
            key = " ".join(_tokens(phrase))
            if key not in seen:
                seen.add(key)
                terms.append(_quoted(phrase))
    if not terms:
        return None
    terms = terms[:MAX_TERMS]
    typing = (
        prefix_last
        and bool(words)
        and not clean[-1:].isspace()
        and not clean.endswith('"')
        # One letter as a prefix matches most of the index: wait for the second.
        and len(_tokens(words[-1])[-1]) >= 2
    )
    if typing and terms[-1] == _quoted(words[-1]):
        terms[-1] += "*"
    return " OR ".join(terms)


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """One search: the MATCH expression and what to leave out."""

    match: str
    session_id: int | None = None
    """Only this session's rows (``None``: every session not in the trash)."""
    exclude_ids: frozenset[int] = frozenset()
    """Rows the model already sees (the current context): never hits, never counted."""


# The rows of the sessions in the trash (schema 6) are never hits and never
# counted: one subquery per search, empty when the trash is.
_LIVE = """rowid NOT IN (
    SELECT m.id FROM sessions AS s JOIN messages AS m ON m.session_id = s.id
    WHERE s.trashed_at IS NOT NULL)"""

_COUNT_SQL = f"SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ? AND {_LIVE}"

# The matches among the context's rows, handed over as one JSON array (a
# context can hold thousands of rows; one parameter whatever its length).
_COUNT_CONTEXT_SQL = f"""
SELECT count(*) FROM messages_fts
WHERE messages_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?)) AND {_LIVE}
"""

_CANDIDATES_SQL = f"""
SELECT f.rowid, f.rank, m.created_at
FROM (SELECT rowid, rank FROM messages_fts
      WHERE messages_fts MATCH ? AND rowid >= ? AND {_LIVE}
      ORDER BY rank LIMIT ?) AS f
JOIN messages AS m ON m.id = f.rowid
"""

_SESSION_CANDIDATES_SQL = """
SELECT f.rowid, f.rank, m.created_at
FROM messages_fts AS f JOIN messages AS m ON m.id = f.rowid
WHERE messages_fts MATCH ? AND m.session_id = ?
ORDER BY f.rank LIMIT ?
"""

# ``rowid IN`` runs the MATCH once per id: cheapest for words (0.2 ms for
# ten), but a prefix expands again each time ("co"*: 150 ms for 100), so a
# query with one scans its matches once instead (``+rowid``: 6 ms). The
# snippet loses the separators of the index form (``search_forms``).
_HITS_SQL = f"""
SELECT m.session_id, s.title, m.id, m.kind, f.role, m.created_at,
       replace(snippet(messages_fts, 0, ?, ?, '…', ?), '{SEPARATOR}', '')
FROM messages_fts AS f
JOIN messages AS m ON m.id = f.rowid
JOIN sessions AS s ON s.id = m.session_id
WHERE messages_fts MATCH ? AND {{once}}f.rowid IN ({{ids}})
"""


async def _first_int(conn: aiosqlite.Connection, sql: str, params: tuple[Any, ...]) -> int:
    rows = list(await conn.execute_fetchall(sql, params))
    return int(rows[0][0])


async def count_matches(conn: aiosqlite.Connection, search: SearchQuery) -> tuple[int, int]:
    """Every matching row, and how many of those lie in the excluded context."""
    total = await _first_int(conn, _COUNT_SQL, (search.match,))
    if not search.exclude_ids or total == 0:
        return total, 0
    ids = json.dumps(sorted(search.exclude_ids))
    return total, await _first_int(conn, _COUNT_CONTEXT_SQL, (search.match, ids))


_ANCESTORS_SQL = """
WITH RECURSIVE up(id) AS (
    SELECT forked_from_session FROM sessions WHERE id = ?
    UNION SELECT s.forked_from_session FROM sessions AS s JOIN up ON s.id = up.id
)
SELECT id FROM up WHERE id IS NOT NULL
"""

_ANCESTOR_MATCHES_SQL = """
SELECT f.rowid, m.created_at FROM messages_fts AS f JOIN messages AS m ON m.id = f.rowid
WHERE messages_fts MATCH ? AND m.session_id IN (SELECT value FROM json_each(?))
"""


async def originals_of_copies(
    conn: aiosqlite.Connection, match: str, session_id: int, copied_times: set[float]
) -> set[int]:
    """Matching rows of the sessions ``session_id`` was forked from that its context copies.

    A fork's copies are not indexed: their words are found through the
    source's rows, which are what the model of the fork already sees. A copy
    keeps its original's timestamp, so that is how they are paired.
    """
    ancestors = [int(row[0]) for row in await conn.execute_fetchall(_ANCESTORS_SQL, (session_id,))]
    if not ancestors or not copied_times:
        return set()
    rows = await conn.execute_fetchall(_ANCESTOR_MATCHES_SQL, (match, json.dumps(ancestors)))
    return {int(row_id) for row_id, created_at in rows if created_at in copied_times}


def _score(rank: float, created_at: float, now: float) -> float:
    """Higher is better: bm25 (FTS5's rank is its negative) nudged toward recent rows."""
    age_days = max(0.0, now - created_at) / 86_400
    return -rank * (1 + RECENCY_BOOST * math.exp2(-age_days / RECENCY_DAYS))


async def ranked_ids(
    conn: aiosqlite.Connection, search: SearchQuery, limit: int, *, skip: int = 0
) -> list[int]:
    """The ids of the best ``limit`` matches: bm25, a mild preference for recent rows.

    FTS5 ranks every match but only the best ``CANDIDATES`` (plus ``skip``,
    the matches the exclusion will drop) leave SQLite; recency re-ranks them
    here, newest first on ties.
    """
    if limit <= 0:
        return []
    wanted = CANDIDATES + max(limit, skip)
    params: tuple[object, ...]
    if search.session_id is not None:
        sql, params = _SESSION_CANDIDATES_SQL, (search.match, search.session_id, wanted)
    else:
        # A broad query ranks its newest matches only (``search_broad``).
        floor = await newest_floor(conn, search.match, _STOP_WORDS)
        sql, params = _CANDIDATES_SQL, (search.match, floor, wanted)
    rows = await conn.execute_fetchall(sql, params)
    now = time.time()
    scored = [
        (_score(rank, created_at, now), row_id)
        for row_id, rank, created_at in rows
        if row_id not in search.exclude_ids
    ]
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [row_id for _, row_id in scored[:limit]]


async def matched_hits(
    conn: aiosqlite.Connection, search: SearchQuery, ids: list[int], *, snippet_tokens: int
) -> dict[int, SearchHit]:
    """The hits of ``ids`` that match ``search``, with their snippets (made for these only)."""
    if not ids:
        return {}
    once = "+" if search.match.endswith("*") else ""  # the only prefix is the last term
    sql = _HITS_SQL.format(ids=", ".join("?" * len(ids)), once=once)
    params: list[object] = [MATCH_START, MATCH_END, snippet_tokens, search.match, *ids]
    return {row[2]: SearchHit(*row) for row in await conn.execute_fetchall(sql, params)}


def trim_snippet(snippet: str, width: int) -> str:
    """``snippet`` cut to about ``width`` characters around its first match, markers balanced."""
    plain = snippet.replace(MATCH_START, "").replace(MATCH_END, "")
    if len(plain) <= width:
        return snippet
    spans: list[tuple[int, int]] = []
    position = 0
    for chunk_index, chunk in enumerate(snippet.split(MATCH_START)):
        if chunk_index == 0:
            position += len(chunk)
            continue
        match, _, rest = chunk.partition(MATCH_END)
        spans.append((position, position + len(match)))
        position += len(match) + len(rest)
    first = spans[0][0] if spans else 0
    start = max(0, min(first - width // 3, len(plain) - width))
    end = start + width
    out: list[str] = ["…"] if start > 0 else []
    cursor = start
    for span_start, span_end in spans:
        low, high = max(span_start, start), min(span_end, end)
        if low >= high:
            continue
        out += [plain[cursor:low], MATCH_START, plain[low:high], MATCH_END]
        cursor = high
    out.append(plain[cursor:end])
    if end < len(plain):
        out.append("…")
    return "".join(out)
