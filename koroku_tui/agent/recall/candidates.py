"""``--print`` over a long meaning backlog: MiniLM embeds, at once, the rows a search may want.

A first ``--print`` over a year it never indexed waited for MiniLM's whole
backlog: 5,000 messages 45 s, 15,000 past ``PRINT_WAIT`` (two minutes), so a
script's own time limit cut it first. WordLlama's pass takes seconds
(~8,000 messages a second), and MiniLM puts a fact in the top five almost
whenever it is among the rows it ranks (``bench/recall_rerank.py``): so before
the search MiniLM embeds WordLlama's nearest rows among those it lacks and the
words' best ones, stores them (real vectors: its pass skips them later), and
the search ranks as if MiniLM had every row (``store.rank_side``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from koroku_tui.agent.recall.embedder import Vectors
from koroku_tui.store import SessionManager

__all__ = ["CHUNK", "NEAR_CANDIDATES", "WAIT_BELOW", "WORD_CANDIDATES", "embed_candidates"]

WAIT_BELOW = 600
"""Rows MiniLM may lack for a ``--print`` search to wait for its whole pass instead (~4 s
in ``--print``'s two threads, at ~140 rows a second): then every row is ranked."""
NEAR_CANDIDATES = 800
"""WordLlama's nearest rows (among those MiniLM lacks) MiniLM embeds for a search: at 15,000
messages (questions sharing no word with their fact) 300 found 0.75 of them, 500 0.78, 800
0.84, 2,000 0.85, every row 0.93; ~6 s of ``--print``'s two threads."""
WORD_CANDIDATES = 100
"""The words' best rows (those MiniLM lacks) it embeds too: facts a paraphrase finds by
words keep MiniLM's rank beside the words' (the fusion counts MiniLM twice)."""

CHUNK = 64
"""Texts embedded between looks at the clock: ``--print``'s two threads' batches (2 x 32),
~0.5 s of short texts, ~3 s of the longest."""


async def embed_candidates(
    store: SessionManager,
    query: str,
    embed: Callable[[list[str]], Awaitable[Vectors]],
    near: str,
    meaning: tuple[str, int],
    seconds: float,
) -> bool:
    """Store the ``meaning`` embedder's (name, dims) vectors of the rows lacking one that a
    search for ``query`` may want (``near``'s nearest, the words' best), best first, for
    ``seconds`` at most; whether every one has its vector.

    A text's cost grows with its length (MiniLM reads up to 256 tokens of it): 800 long
    ones take a minute of two threads. The clock is looked at between groups of
    ``CHUNK`` texts, and each group is stored as it is done (the pass skips those rows).
    """
    name, dims = meaning
    deadline = time.monotonic() + seconds
    rows = await store.unembedded_near(query, near, name, NEAR_CANDIDATES, WORD_CANDIDATES)
    # Each text once: a history repeats itself ("ok", "thanks", a tool's same output).
    texts = list(dict.fromkeys(text for _, text in rows))
    rows_of: dict[str, list[int]] = {}
    for row_id, text in rows:
        rows_of.setdefault(text, []).append(row_id)
    for start in range(0, len(texts), CHUNK):
        if time.monotonic() >= deadline:
            return False
        chunk = texts[start : start + CHUNK]
        vectors = await embed(chunk)
        pairs = [
            (row_id, vector)
            for text, vector in zip(chunk, vectors, strict=True)
            for row_id in rows_of[text]
        ]
        await store.add_vectors(name, dims, pairs)
    return True
