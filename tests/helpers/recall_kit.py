"""Histories to recall by meaning, and a store whose indexer ran until everything has a vector."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from helpers.events import model, user

from koroku_tui.agent.recall import embedder_loader
from koroku_tui.agent.recall.embedder import Embedder
from koroku_tui.agent.recall.indexer import RecallIndexer
from koroku_tui.store import SessionManager

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from recall_bench import filler
from recall_facts import FACTS
from recall_meaning_facts import MEANING_FACTS

__all__ = [
    "FACTS",
    "MEANING_FACTS",
    "MEDICINE",
    "PASSPORT",
    "TRAVEL_DOCUMENT",
    "everyday_history",
    "facts_among_filler",
    "indexed",
    "plant_history",
    "wordllama_without_its_files",
]

MEDICINE = "which medicine must I avoid?"
"""Asks for "I'm allergic to penicillin." in other words: WordLlama alone misses it."""
PASSPORT = "My passport expires on 9 March."
TRAVEL_DOCUMENT = "when does my travel document run out?"
"""A question that shares no searchable word with ``PASSPORT`` (the bench checks its set)."""

FILLER = [
    "Can you check the nightly backup log for errors?",
    "The deploy script failed on the staging server again.",
    "Let's plan the garden beds for spring: tomatoes and basil.",
    "Summarise the meeting notes from Tuesday.",
    "Rename the config file and update the docs.",
]


async def plant_history(store: SessionManager, rounds: int = 4) -> int:
    """Sessions of everyday filler with ``PASSPORT`` among them; returns that fact's id."""
    fact = 0
    for number in range(rounds):
        for text in FILLER:
            await store.add_message(user(text))
            await store.add_message(model(f"Done ({number}): {text.lower()}"))
        if number == rounds // 2:
            fact = await store.add_message(user(PASSPORT))
        await store.new_session()
    return fact


async def everyday_history(store: SessionManager, fillers: int = 300) -> dict[str, int]:
    """The bench's everyday filler (its words are the facts' words too), then every fact of
    ``MEANING_FACTS``; returns each question's fact id."""
    import random

    rng = random.Random(1)
    await store.add_messages(
        [(user if n % 2 else model)(filler(rng, rng.randint(8, 40))) for n in range(fillers)]
    )
    facts = {question: await store.add_message(user(fact)) for _, fact, question in MEANING_FACTS}
    await store.new_session()
    return facts


async def facts_among_filler(
    store: SessionManager, facts: list[tuple[str, str, str]], fillers: int
) -> dict[str, int]:
    """``facts`` (``(where, text, question)``, stored as user text) spread evenly through
    ``fillers`` messages of the bench's everyday filler; returns each question's fact id."""
    import random

    rng = random.Random(1)
    ids: dict[str, int] = {}
    for _, fact, question in facts:
        count = fillers // len(facts)
        await store.add_messages(
            [(user if n % 2 else model)(filler(rng, rng.randint(8, 40))) for n in range(count)]
        )
        ids[question] = await store.add_message(user(fact))
    await store.new_session()
    return ids


@asynccontextmanager
async def indexed(
    store: SessionManager,
    load: Callable[[], Awaitable[Embedder]] | None = None,
) -> AsyncIterator[RecallIndexer]:
    """The store's indexer (the local model by default), run until nothing is left to embed."""
    loader = load or embedder_loader("local")
    assert loader is not None
    indexer = RecallIndexer(store, loader)
    task = asyncio.create_task(indexer.run())
    try:
        await indexer.idle.wait()
        yield indexer
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def wordllama_without_its_files(folder: Path) -> Path:
    """A folder whose ``wordllama`` package has no model files (a broken install), to put
    first on the import path; returns it."""
    package = folder / "broken" / "wordllama"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    return package.parent
