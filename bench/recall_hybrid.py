"""Recall by meaning as Koroku ships it, on ``recall_bench``'s histories: imported by it.

``[recall] embeddings = "local"`` is two passes (``agent.recall.passes``):
WordLlama over every row, then MiniLM's meaning pass. ``prepare`` runs both
through the real ``RecallIndexer`` (batches of 32 on one BLAS thread for
MiniLM, as the app does; messages a second each), and copies the file when
the meaning pass is ``DURING_SHARE`` done (MiniLM then has the newest rows,
as its order gives them). A kept file resumes where it stopped.

``measure_stage`` opens a file with the real ``LocalPasses`` while a turn
holds the session (``search_history`` runs inside a turn, and the passes
wait for it), so the store searches with the sides a user's app has at
that stage: while the meaning pass runs, words + MiniLM over the rows it
has + WordLlama over the rest (``fills_in_for``: counted alike); once it
is done, words + MiniLM x2 (the vectors int8 in memory). Each
question set is asked (recall@5), the searches are timed (p50, p95), and
the memory the vectors add read (RSS after the first search read them in,
against before it, the C heap's free pages given back first each time);
``models_mb`` reads what loading both models adds.
``first_frame_ratios`` times the app's first frame with ``[recall]
embeddings`` "local" against "off".
"""

from __future__ import annotations

import asyncio
import gc
import os
import sqlite3
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from koroku_tui.agent.recall import embedder_loader
from koroku_tui.agent.recall.embedder import Embedder
from koroku_tui.agent.recall.indexer import RecallIndexer
from koroku_tui.agent.recall.local import LocalEmbedder
from koroku_tui.agent.recall.meaning import MeaningEmbedder
from koroku_tui.agent.recall.passes import LocalPasses
from koroku_tui.store import SessionManager

Fact = tuple[str, str, str]
Sets = Mapping[str, Sequence[Fact]]
"""Question sets by name."""

Load = Callable[[], Awaitable[Embedder]]

DURING_SHARE = 0.5
"""How much of the history has MiniLM's vectors in the file kept "during" the meaning pass."""


@dataclass
class Indexing:
    """What this run's passes embedded (0 rows: a kept file had them all already)."""

    first: tuple[int, float]
    """WordLlama's ``(rows, seconds)``."""
    meaning: tuple[int, float]
    """MiniLM's ``(rows, seconds)``."""


@dataclass
class Stage:
    """One file's figures as the shipped searches see it."""

    sides: dict[str, float]
    """The vector sides searched beside the words, and their weights."""
    meaning_share: float
    """Share of the rows with MiniLM's vector."""
    recall: dict[str, float]
    """Set name -> recall@5."""
    latencies: list[float]
    vectors_mb: float
    missed: list[str]


def rss_mb() -> float:
    """This process's resident memory (Linux), once garbage and the heap's free pages are gone."""
    from koroku_tui.store.vector_index import give_back_free_memory

    gc.collect()
    give_back_free_memory()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def models_mb() -> float:
    """What reading both local models adds to this process (before any other use of them)."""
    before = rss_mb()
    LocalEmbedder.load()
    MeaningEmbedder.load()
    return rss_mb() - before


async def load_meaning(_between_turns: object = None) -> Embedder:
    """MiniLM's embedder, read at once in a thread (as ``recall_indexing`` loads it headless)."""
    return await asyncio.to_thread(MeaningEmbedder.load)


def load_first() -> Load:
    """What loads WordLlama, the first pass's model."""
    load = embedder_loader("local")
    assert load is not None
    return load


async def run_pass(path: Path, load: Load, share: float = 1.0) -> tuple[int, float]:
    """One pass's real indexer on ``path`` until ``share`` of the rows have its vectors;
    ``(rows it embedded, seconds)``, its model's load not counted."""
    async with SessionManager(path) as store:
        reached = asyncio.Event()

        def progress(done: int, total: int, _: str) -> None:
            if done >= share * total:
                reached.set()

        indexer = RecallIndexer(store, load, on_progress=progress, yield_to_turns=False)
        task = asyncio.create_task(indexer.run())
        await indexer.loaded.wait()
        assert indexer.embedder is not None, indexer.problem
        name = indexer.embedder.name
        before, total = await store.vector_progress(name)
        began = time.perf_counter()
        if before < share * total:
            waits = [asyncio.ensure_future(e.wait()) for e in (reached, indexer.idle)]
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for wait in waits:
                wait.cancel()
        seconds = time.perf_counter() - began
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        after, _ = await store.vector_progress(name)
    return after - before, seconds


async def index_all(path: Path) -> tuple[int, float]:
    """Embed every indexed row with WordLlama (the first pass): ``(rows, seconds)``."""
    return await run_pass(path, load_first())


def copy_file(source: Path, target: Path) -> None:
    """A consistent copy of a closed history file (SQLite's backup)."""
    with closing(sqlite3.connect(source)) as read, closing(sqlite3.connect(target)) as write:
        read.backup(write)


async def prepare(path: Path, during: Path) -> Indexing:
    """Both passes over ``path`` (what is missing), ``during`` copied part-way through."""
    first = await index_all(path)
    part = (0, 0.0)
    if not during.exists():  # noqa: ASYNC240 (a bench's set-up)
        part = await run_pass(path, load_meaning, DURING_SHARE)
        copy_file(path, during)
    rest = await run_pass(path, load_meaning)
    return Indexing(first, (part[0] + rest[0], part[1] + rest[1]))


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


async def words_alone(
    path: Path, sets: Sets, first: dict[str, int], planted: dict[int, int]
) -> dict[str, float]:
    """recall@5 of each set with full text alone (``"off"``)."""
    async with SessionManager(path) as store:
        return (await found_at_5(store, sets, first, planted))[0]


async def measure_stage(
    path: Path, sets: Sets, first: dict[str, int], planted: dict[int, int], rounds: int
) -> Stage:
    """``path`` searched as the app searches it (``LocalPasses``, inside a turn)."""
    async with SessionManager(path) as store:
        done, total = await store.vector_progress(MeaningEmbedder.name)
        await store.search_history("warm up the words")
        await store.begin_turn()  # the passes wait while a turn runs, as for a tool's search
        passes = LocalPasses(store, load_first(), load_meaning)
        task = asyncio.create_task(passes.run())
        try:
            await passes.loaded.wait()
            loaded = rss_mb()
            await store.search_history("warm up the vectors")  # reads them in
            read = rss_mb()
            recall, missed = await found_at_5(store, sets, first, planted)
            latencies: list[float] = []
            for _ in range(rounds):
                for facts in sets.values():
                    for _, _, question in facts:
                        started = time.perf_counter()
                        await store.search_history(question)
                        latencies.append(time.perf_counter() - started)
            sides = store.vector_sides
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await store.end_turn()
    return Stage(sides, done / total, recall, latencies, read - loaded, missed)


def first_frame_ratios(rounds: int) -> list[tuple[float, float]]:
    """Each round's first frame with recall by meaning on ("local") over "off": ``(wall, CPU)``.

    The two choices alternate which goes first; a launch with each is made
    untimed before (caches, the schema, the first indexing).
    """
    from terminal_launch import COMMAND, FOOTER, launch_in_terminal
    from tui_bench import BIG, build_home

    ratios: list[tuple[float, float]] = []
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
                )
                for choice in order
            }
            on, off = times["local"], times["off"]
            ratios.append((on.wall / off.wall, on.cpu / off.cpu))
    return ratios
