"""Recall by meaning, measured on ``recall_bench``'s histories: imported by it, not run alone.

For one history: the local model embeds every indexed row through the real
``RecallIndexer`` (messages a second), then each question set is asked with
words alone and with words and meaning fused (recall@5), the fused search is
timed (p50, p95), and the memory the vectors add is read (RSS before and
after the first fused search loads them). ``fusions`` tries other fusion
settings on the same history. ``first_frame_ratio`` times the app's first
frame with ``[recall] embeddings`` "local" against "off".
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from koroku_tui.agent.recall import embedder_loader
from koroku_tui.agent.recall.embedder import QuerySide
from koroku_tui.agent.recall.indexer import RecallIndexer
from koroku_tui.agent.recall.local import LocalEmbedder
from koroku_tui.store import SessionManager, hybrid

Fact = tuple[str, str, str]
Sets = Mapping[str, Sequence[Fact]]
"""Question sets by name."""


@dataclass
class Meaning:
    """What one history measured."""

    rows: int
    index_seconds: float
    recall: dict[str, tuple[float, float]]
    """Set name -> (recall@5 words alone, recall@5 hybrid)."""
    latencies: list[float]
    added_mb: float
    missed: list[str]


def rss_mb() -> float:
    """This process's resident memory (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


async def index_all(path: Path) -> tuple[int, float]:
    """Embed every indexed row with the local model; ``(rows, seconds)`` (the load not counted)."""
    async with SessionManager(path) as store:
        load = embedder_loader("local")
        assert load is not None
        indexer = RecallIndexer(store, load)
        task = asyncio.create_task(indexer.run())
        await indexer.loaded.wait()
        began = time.perf_counter()
        await indexer.idle.wait()
        seconds = time.perf_counter() - began
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert indexer.embedder is not None
        done, total = await store.vector_progress(indexer.embedder.name)
        assert done == total, (done, total)
    return total, seconds


async def found_at_5(
    store: SessionManager,
    sets: Sets,
    first: dict[str, int],
    planted: dict[int, int],
) -> tuple[dict[str, float], list[str]]:
    """recall@5 of each set (its facts start at ``first[name]`` in ``planted``), and the misses."""
    shares: dict[str, float] = {}
    missed: list[str] = []
    for name, facts in sets.items():
        found = 0
        for offset, (_, _, question) in enumerate(facts):
            page = await store.search_history(question, limit=5)
            if planted[first[name] + offset] in [hit.message_id for hit in page.hits]:
                found += 1
            else:
                missed.append(f"{name}: {question}")
        shares[name] = found / len(facts)
    return shares, missed


async def measure_meaning(
    path: Path,
    sets: Sets,
    first: dict[str, int],
    planted: dict[int, int],
    rounds: int,
) -> Meaning:
    rows, seconds = await index_all(path)
    embedder = LocalEmbedder.load()
    async with SessionManager(path) as store:
        words, _ = await found_at_5(store, sets, first, planted)
        before = rss_mb()
        store.use_vectors(QuerySide(embedder))
        await store.search_history("warm up the vectors")  # loads them
        added = rss_mb() - before
        fused, missed = await found_at_5(store, sets, first, planted)
        latencies: list[float] = []
        for _ in range(rounds):
            for facts in sets.values():
                for _, _, question in facts:
                    started = time.perf_counter()
                    await store.search_history(question)
                    latencies.append(time.perf_counter() - started)
    recall = {name: (words[name], fused[name]) for name in sets}
    return Meaning(rows, seconds, recall, latencies, added, [m for m in missed if "shared" in m])


FUSIONS = (
    ("RRF k=60, cosine >= 0.1", 60.0, 0.1, 1.0),
    ("RRF k=60, any cosine", 60.0, -1.0, 1.0),
    ("RRF k=10, cosine >= 0.1 (shipped)", 10.0, 0.1, 1.0),
    ("RRF k=60, meaning x1.5", 60.0, 0.1, 1.5),
    ("RRF k=60, meaning x2", 60.0, 0.1, 2.0),
    ("RRF k=10, meaning x2", 10.0, 0.1, 2.0),
    ("meaning alone", 60.0, 0.1, 1000.0),
)


async def fusions(
    path: Path, sets: Sets, first: dict[str, int], planted: dict[int, int]
) -> list[tuple[str, dict[str, float]]]:
    """recall@5 of each set under each of ``FUSIONS`` (the store's constants set in turn)."""
    embedder = LocalEmbedder.load()
    shipped = hybrid.RRF_K, hybrid.MIN_SIMILARITY, hybrid.MEANING_WEIGHT
    results: list[tuple[str, dict[str, float]]] = []
    try:
        async with SessionManager(path) as store:
            store.use_vectors(QuerySide(embedder))
            for name, k, floor, weight in FUSIONS:
                hybrid.RRF_K, hybrid.MIN_SIMILARITY, hybrid.MEANING_WEIGHT = k, floor, weight
                shares, _ = await found_at_5(store, sets, first, planted)
                results.append((name, shares))
    finally:
        hybrid.RRF_K, hybrid.MIN_SIMILARITY, hybrid.MEANING_WEIGHT = shipped
    return results


def first_frame_ratio(rounds: int) -> float:
    """Median over rounds of the first frame with recall by meaning on ("local") over "off"."""
    from terminal_launch import COMMAND, FOOTER, launch_in_terminal
    from tui_bench import BIG, build_home

    ratios: list[float] = []
    with tempfile.TemporaryDirectory(prefix="koroku-recall-launch-") as folder:
        home = Path(folder) / "home"
        build_home(home, BIG)
        last = f"Final answer {BIG - 1}."
        argv = [COMMAND, "--home", str(home)]
        for choice in ("local", "off"):  # untimed: caches, the schema, the first indexing
            launch_in_terminal(argv, last, FOOTER, env_extra={"KOROKU_RECALL_EMBEDDINGS": choice})
        for number in range(rounds):
            order = ("local", "off") if number % 2 == 0 else ("off", "local")
            times = {
                choice: launch_in_terminal(
                    argv, last, FOOTER, env_extra={"KOROKU_RECALL_EMBEDDINGS": choice}
                )[0]
                for choice in order
            }
            ratios.append(times["local"] / times["off"])
    return statistics.median(ratios)
