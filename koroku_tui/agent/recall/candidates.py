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

from collections.abc import Awaitable, Callable

from koroku_tui.agent.recall.embedder import Vectors
from koroku_tui.store import SessionManager

__all__ = ["NEAR_CANDIDATES", "WAIT_BELOW", "WORD_CANDIDATES", "embed_candidates"]

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


async def embed_candidates(
    store: SessionManager,
    query: str,
    embed: Callable[[list[str]], Awaitable[Vectors]],
    near: str,
    meaning: tuple[str, int],
) -> int:
    """Store the ``meaning`` embedder's (name, dims) vectors of the rows lacking one that a
    search for ``query`` may want (``near``'s nearest, the words' best); how many."""
    name, dims = meaning
    rows = await store.unembedded_near(query, near, name, NEAR_CANDIDATES, WORD_CANDIDATES)
    if not rows:
        return 0
    # Each text once: a history repeats itself ("ok", "thanks", a tool's same output).
    texts = list(dict.fromkeys(text for _, text in rows))
    vectors = dict(zip(texts, await embed(texts), strict=True))
    await store.add_vectors(name, dims, [(row_id, vectors[text]) for row_id, text in rows])
    return len(rows)
