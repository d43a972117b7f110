"""Hybrid search: the full-text ranking and vector similarity, fused into one list of hits.

Words find what shares a word with the query (stems, phrases, bm25 with
recent rows a little higher: ``search``); vectors find what means the same
in other words ("when does my travel document run out?" for "my passport
expires on 9 March"). There may be several vector sides, one per embedder,
each with its weight (the local passes: while MiniLM's pass runs, MiniLM
over the rows it has and WordLlama over the rest, x1 each; MiniLM x2 alone
once it is done: ``use_vectors``'s ``fills_in_for``). Each side ranks its
candidates; reciprocal rank fusion adds ``weight / (RRF_K + rank)`` from each
list a row is in, so a row several sides found leads, and a row only one
side found still places (``bench/recall_bench.py`` and
``bench/recall_rerank.py`` measured the constants against other choices).

A hit found by meaning alone has no matched word to mark: its snippet is the
start of its text. The hit format is otherwise the same as full text's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import aiosqlite

from koroku_tui.store.records import SearchHit
from koroku_tui.store.search import SearchQuery, matched_hits, ranked_ids
from koroku_tui.store.vectors import live_rows, plain_hits

__all__ = [
    "FUSION_DEPTH",
    "MEANING_WEIGHT",
    "MIN_SIMILARITY",
    "RRF_K",
    "Ranked",
    "fused_hits",
    "fused_order",
    "word_hits",
    "word_side",
]

RRF_K = 10.0
"""Reciprocal rank fusion's constant: how fast a lower rank fades. Measured at 100,000
messages (``bench/recall_bench.py``), 10 found more questions sharing no word with their
fact than the usual 60 (0.33 against 0.31), the paraphrased ones alike (0.96)."""
FUSION_DEPTH = 50
"""Candidates taken from each side before fusing (plus the hits asked for)."""
MEANING_WEIGHT = 1.0
"""How much WordLlama's ranks count against the words' (a side's default). Counting them
twice found more questions sharing no word (0.38) but lost paraphrased ones (0.96 -> 0.90);
MiniLM's side counts twice (``agent.recall.passes``)."""
MIN_SIMILARITY = 0.1
"""A row found by meaning alone must be at least this similar (cosine) to count:
below it, the nearest rows of a query that means nothing in particular are noise."""


Ranked: TypeAlias = tuple[Sequence[int], float]
"""One vector side's ranked ids, and its weight."""


def fused_order(words: Sequence[int], meaning: Sequence[Ranked]) -> list[int]:
    """Ids of the words' list and each side's by reciprocal rank fusion, best first (newer
    first on ties)."""
    scores: dict[int, float] = {}
    for ranked, weight in ((words, 1.0), *meaning):
        for rank, row_id in enumerate(ranked, start=1):
            scores[row_id] = scores.get(row_id, 0.0) + weight / (RRF_K + rank)
    return sorted(scores, key=lambda row_id: (-scores[row_id], -row_id))


async def word_side(
    conn: aiosqlite.Connection, search: SearchQuery, limit: int, *, skip: int = 0
) -> list[int]:
    """The words' ranked candidates for fusing ``limit`` hits (``FUSION_DEPTH`` more)."""
    return await ranked_ids(conn, search, FUSION_DEPTH + limit, skip=skip)


async def word_hits(
    conn: aiosqlite.Connection,
    search: SearchQuery,
    words: Sequence[int],
    limit: int,
    *,
    snippet_tokens: int,
) -> list[SearchHit]:
    """The best ``limit`` of the words' side alone (no vectors: full text as before)."""
    best = list(words[:limit])
    by_id = await matched_hits(conn, search, best, snippet_tokens=snippet_tokens)
    return [by_id[row_id] for row_id in best if row_id in by_id]


async def fused_hits(
    conn: aiosqlite.Connection,
    search: SearchQuery,
    words: Sequence[int],
    similar: Sequence[tuple[Sequence[tuple[int, float]], float]],
    limit: int,
    *,
    snippet_tokens: int,
    plain_chars: int,
) -> tuple[list[SearchHit], int]:
    """The best ``limit`` hits of words and meaning fused, and how many only meaning found.

    ``words`` is the words' side (``word_side``); ``similar`` the vector
    sides, each ``(message id, cosine)`` best first (the excluded rows
    already left out) with its weight; rows of sessions in the trash, or of
    other sessions than ``search.session_id``, are dropped here.
    """
    if limit <= 0:
        return [], 0
    depth = FUSION_DEPTH + limit
    close = [
        ([row_id for row_id, score in rows if score >= MIN_SIMILARITY][:depth], weight)
        for rows, weight in similar
    ]
    live = await live_rows(conn, sorted({i for ids, _ in close for i in ids}), search.session_id)
    meaning = [([i for i in ids if i in live], weight) for ids, weight in close]
    best = fused_order(words, meaning)[:limit]
    by_id = await matched_hits(conn, search, best, snippet_tokens=snippet_tokens)
    matched = set(by_id)
    for row in await plain_hits(conn, [i for i in best if i not in matched], plain_chars * 2):
        hit = SearchHit(*row)  # type: ignore[arg-type]
        by_id[hit.message_id] = _with_start(hit, plain_chars)
    hits = [by_id[row_id] for row_id in best if row_id in by_id]
    return hits, sum(1 for hit in hits if hit.message_id not in matched)


def _with_start(hit: SearchHit, chars: int) -> SearchHit:
    """``hit`` with its snippet the start of its text, on one line, about ``chars`` long."""
    flat = " ".join(hit.snippet.split())
    if len(flat) > chars:
        flat = flat[: chars - 1].rstrip() + "…"
    return SearchHit(
        hit.session_id,
        hit.session_title,
        hit.message_id,
        hit.kind,
        hit.role,
        hit.created_at,
        flat,
    )
