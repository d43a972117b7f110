"""What recall by meaning asks of an embedding model, and the query side the store is given.

Two embedders: the local one (``recall.local``, WordLlama's 256-dimension
static model, shipped in its wheel) and Gemini's (``wire.embeddings``,
through the agent's client). The store never knows which: it takes
vectors with the embedder's ``name`` and asks ``QuerySide`` for a query's
vector (``store.QueryVectors``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "QUERY_TIMEOUT",
    "WORDS_ALONE_AFTER_FAILURE",
    "Embedder",
    "EmbedsInThread",
    "QuerySide",
    "Vector",
    "Vectors",
]

logger = logging.getLogger(__name__)

QUERY_TIMEOUT = 3.0
"""Seconds a search waits for its query's vector: past it, its words alone answer (a
network that swallows requests would otherwise hold every search for the client's 120 s)."""
WORDS_ALONE_AFTER_FAILURE = 30.0
"""Seconds after a query's vector failed during which searches do not ask again."""

Vector: TypeAlias = "Sequence[float] | npt.NDArray[np.float32]"
"""One text's vector (a numpy row or a list of floats)."""
Vectors: TypeAlias = "Sequence[Vector] | npt.NDArray[np.float32]"
"""Texts' vectors, in order (a numpy matrix or a list of rows)."""


class Embedder(Protocol):
    """An embedding model: texts in, one vector each out, never on the event loop's time."""

    @property
    def name(self) -> str:
        """Which model and size, as the store keys vectors ("wordllama-l2_supercat-256")."""

    @property
    def dims(self) -> int:
        """The length of its vectors."""

    @property
    def batch(self) -> int:
        """Texts per ``embed_documents`` call the indexer should send."""

    async def embed_documents(self, texts: list[str]) -> Vectors:
        """The vectors of stored texts (messages, results, summaries), in order."""

    async def embed_query(self, text: str) -> Vector:
        """The vector of a search's words."""


class EmbedsInThread:
    """The async side of a local model whose ``embed`` is plain CPU work: run in a thread.

    The tokenizers and numpy's products release the GIL for most of it, so
    the event loop goes on meanwhile.
    """

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Unit-length vectors of ``texts``, one row each (the model's own work)."""
        raise NotImplementedError

    async def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """``embed`` in a thread."""
        return await asyncio.to_thread(self.embed, texts)

    async def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """One query's vector, in a thread."""
        vectors = await asyncio.to_thread(self.embed, [text])
        first: npt.NDArray[np.float32] = vectors[0]
        return first


class QuerySide:
    """The store's ``QueryVectors``: a query's vector from ``embedder``, after ``ready`` if given.

    ``ready(query)`` is awaited first (``--print`` waits until the history is
    indexed, or embeds the rows the query may want: its one answer sees all of
    it); a failure to embed a query, or a wait past ``QUERY_TIMEOUT``, is logged
    and the search goes on by its words alone, as do those of the next
    ``WORDS_ALONE_AFTER_FAILURE`` seconds.
    """

    def __init__(
        self, embedder: Embedder, ready: Callable[[str], Awaitable[None]] | None = None
    ) -> None:
        self._embedder = embedder
        self._ready = ready
        self._words_alone_until = 0.0

    @property
    def embedder(self) -> str:
        """The embedder's name: the vectors of the file this compares with."""
        return self._embedder.name

    @property
    def dims(self) -> int:
        """The length of its vectors."""
        return self._embedder.dims

    async def query_vector(self, text: str) -> Vector | None:
        """``text``'s vector, or ``None`` when the embedder failed (words alone then)."""
        if time.monotonic() < self._words_alone_until:
            return None  # before ``ready``: ``--print`` embeds no candidates for nothing
        if self._ready is not None:
            await self._ready(text)
        try:
            return await asyncio.wait_for(self._embedder.embed_query(text), QUERY_TIMEOUT)
        except Exception as exc:  # a network or model failure must not fail the search
            logger.warning("embedding a query with %s failed: %r", self.embedder, exc)
            self._words_alone_until = time.monotonic() + WORDS_ALONE_AFTER_FAILURE
            return None
