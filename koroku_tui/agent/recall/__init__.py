"""Recall by meaning: the embedders and the indexer that gives every message its vector.

``[recall] embeddings`` chooses the embedders: ``"local"`` (the default:
two passes on this machine, WordLlama's static model first and fast,
``recall.local``, then all-MiniLM-L6-v2 for meaning, ``recall.meaning``;
``recall.passes``), ``"gemini"`` (Gemini's embedding model through the
agent's client, ``wire.embeddings``) or ``"off"`` (full text alone).
``recall_indexing`` turns the choice into what runs after the app's first
frame (``embedder_loader``: what one ``RecallIndexer`` loads). Nothing here
is imported before that frame: the models, numpy and the tokenizers come
with the loaders' calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from google import genai

    from koroku_tui.agent.recall.backlog import Late
    from koroku_tui.agent.recall.embedder import Embedder
    from koroku_tui.agent.recall.indexer import Progress, Recall
    from koroku_tui.store import SessionManager

__all__ = ["EmbeddingsChoice", "embedder_loader", "recall_indexing"]

EmbeddingsChoice = Literal["local", "gemini", "off"]
"""``[recall] embeddings``: which model makes the vectors, or none."""


def embedder_loader(
    choice: EmbeddingsChoice, client: genai.Client | None = None
) -> Callable[[], Awaitable[Embedder]] | None:
    """What loads the chosen embedder (``None``: ``"off"``, or Gemini without a client)."""
    if choice == "local":
        return _load_local
    if choice == "gemini" and client is not None:
        gemini_client = client

        async def load_gemini() -> Embedder:
            from koroku_tui.agent.wire.embeddings import GeminiEmbedder

            return GeminiEmbedder(gemini_client)

        return load_gemini
    return None


async def _load_local() -> Embedder:
    from koroku_tui.agent.recall.local import LocalEmbedder

    return await asyncio.to_thread(LocalEmbedder.load)


async def _load_meaning(between_turns: Callable[[], Awaitable[None]] | None) -> Embedder:
    from koroku_tui.agent.recall.meaning import MeaningEmbedder

    if between_turns is not None:
        return await MeaningEmbedder.load_between(between_turns)
    return await asyncio.to_thread(MeaningEmbedder.load)


def recall_indexing(
    store: SessionManager,
    choice: EmbeddingsChoice,
    client: genai.Client | None = None,
    *,
    on_progress: Progress | None = None,
    headless: bool = False,
    on_late: Late | None = None,
) -> Recall | None:
    """What gives ``store``'s history its vectors as ``choice`` says (``None``: none does).

    ``"local"``: both local passes; ``"gemini"``: one indexer with Gemini's
    model. ``headless`` (``--print``) embeds what is missing before a search
    (``PRINT_WAIT`` at most: past it ``on_late`` is told how many rows are
    left, and the search uses what is indexed) and never waits for turns.
    """
    from koroku_tui.agent.recall.backlog import BacklogWait
    from koroku_tui.agent.recall.indexer import RecallIndexer

    if choice == "local":
        from koroku_tui.agent.recall.passes import LocalPasses

        return LocalPasses(
            store,
            _load_local,
            _load_meaning,
            on_progress=on_progress,
            headless=headless,
            on_late=on_late,
        )
    load = embedder_loader(choice, client)
    if load is None:
        return None
    wait = BacklogWait(lambda: indexer.left(), on_late) if headless else None
    indexer = RecallIndexer(
        store,
        load,
        on_progress=on_progress,
        yield_to_turns=not headless,
        wait_for_backlog=wait,
    )
    return indexer
