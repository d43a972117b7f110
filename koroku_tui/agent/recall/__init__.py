"""Recall by meaning: the embedders and the indexer that gives every message its vector.

``[recall] embeddings`` chooses the embedder: ``"local"`` (the default:
WordLlama's static model, on this machine, ``recall.local``), ``"gemini"``
(Gemini's embedding model through the agent's client, ``wire.embeddings``)
or ``"off"`` (full text alone). ``embedder_loader`` turns the choice into
what ``RecallIndexer`` loads after the app's first frame. Nothing here is
imported before that frame: the model, numpy and the tokenizer come with
the loader's call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from google import genai

    from koroku_tui.agent.recall.embedder import Embedder

__all__ = ["EmbeddingsChoice", "embedder_loader"]

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
