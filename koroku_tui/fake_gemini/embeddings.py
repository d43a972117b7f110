"""``batchEmbedContents`` and ``embedContent``: deterministic vectors, for recall by meaning.

The fake has no model: a text's vector is a hashed bag of its words (each
lower-cased word adds 1 to a dimension picked by its hash), scaled to unit
length, at the ``outputDimensionality`` asked (768 when absent). Texts that
share words are near, others far: enough for a test to tell vector search
from full text and to read what was sent (the request log keeps it).
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from koroku_tui.fake_gemini.wire import JsonObject, get_field

__all__ = ["DEFAULT_DIMENSIONS", "embed_answer", "hashed_vector"]

DEFAULT_DIMENSIONS = 768
_WORD = re.compile(r"[^\W_]+")


def hashed_vector(text: str, dims: int) -> list[float]:
    """The fake's vector of ``text``: its words hashed into ``dims`` buckets, unit length."""
    vector = [0.0] * dims
    for word in _WORD.findall(text.lower()):
        bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
        vector[bucket % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def _text_of(content: Any) -> str:
    parts = get_field(content, "parts") if isinstance(content, dict) else None
    pieces = [p.get("text", "") for p in parts or [] if isinstance(p, dict)]
    return " ".join(piece for piece in pieces if isinstance(piece, str))


def _one(request: Any) -> JsonObject:
    request = request if isinstance(request, dict) else {}
    config = get_field(request, "embedContentConfig") or {}
    dims = get_field(request, "outputDimensionality") or get_field(config, "outputDimensionality")
    size = dims if isinstance(dims, int) and 0 < dims <= 3072 else DEFAULT_DIMENSIONS
    return {"values": hashed_vector(_text_of(get_field(request, "content")), size)}


def embed_answer(action: str, body: Any) -> JsonObject:
    """The answer to ``batchEmbedContents`` (``{"embeddings": [...]}``) or ``embedContent``."""
    body = body if isinstance(body, dict) else {}
    if action == "embedContent":
        return {"embedding": _one(body)}
    requests = get_field(body, "requests")
    return {"embeddings": [_one(r) for r in (requests if isinstance(requests, list) else [])]}
