"""Gemini's embedding model for recall by meaning (``[recall] embeddings = "gemini"``).

Through the agent's own client (its key, base URL and transport), every text
redacted like everything else Koroku sends (``redaction.Redactor``), many
texts per request (the SDK's ``embed_content`` with a list of contents is one
``batchEmbedContents`` call on the Gemini API). Vectors are asked at 256
dimensions, the local model's size: the same memory and scan time for the
in-memory index (gemini-embedding-001 is trained to be cut short this way).
"""

from __future__ import annotations

from collections.abc import Sequence

from google import genai
from google.genai import types

from koroku_tui.agent.wire.redaction import Redactor

__all__ = ["EMBEDDING_MODEL", "GeminiEmbedder"]

EMBEDDING_MODEL = "gemini-embedding-001"
_DIMS = 256
_BATCH = 100
"""Texts per request: the Gemini API takes at most 100 in one ``batchEmbedContents``."""
_MAX_CHARS = 8_000
"""Characters of one text sent (the model reads ~2,000 tokens; the start says what it is)."""


class GeminiEmbedder:
    """Vectors from Gemini's embedding model: history is sent to Google to be indexed."""

    dims = _DIMS
    batch = _BATCH

    def __init__(self, client: genai.Client, model: str = EMBEDDING_MODEL) -> None:
        self._client = client
        self._model = model
        self._redactor = Redactor.for_client(client)
        self.name = f"gemini-{model}-{_DIMS}"

    async def _embed(self, texts: list[str], task: str) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            chunk = [self._redactor.text(t[:_MAX_CHARS]) or " " for t in texts[start:][:_BATCH]]
            answer = await self._client.aio.models.embed_content(
                model=self._model,
                contents=list(chunk),
                config=types.EmbedContentConfig(task_type=task, output_dimensionality=_DIMS),
            )
            got = [list(e.values or []) for e in answer.embeddings or []]
            if len(got) != len(chunk):
                raise ValueError(
                    f"{self._model} answered {len(got)} vectors for {len(chunk)} texts"
                )
            vectors += got
        return vectors

    async def embed_documents(self, texts: list[str]) -> Sequence[list[float]]:
        """The vectors of stored texts (``RETRIEVAL_DOCUMENT``), in requests of 100."""
        return await self._embed(texts, "RETRIEVAL_DOCUMENT")

    async def embed_query(self, text: str) -> list[float]:
        """A search's vector (``RETRIEVAL_QUERY``)."""
        return (await self._embed([text], "RETRIEVAL_QUERY"))[0]
