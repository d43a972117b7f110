"""The app reads MiniLM between turns, in steps (issue 22, item 21).

Read beside a streamed answer (~1.5 s of a core, right after the app's
start), the model took half of the machine from the answer and its keys:
the first reply after a start streamed at two thirds of its speed. Real
SQLite in ``tmp_path``, the real model from its wheel, offline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import numpy as np
import pytest
from helpers.recall_kit import PASSPORT

from koroku_tui.agent.recall import _load_local, _load_meaning
from koroku_tui.agent.recall import meaning as meaning_module
from koroku_tui.agent.recall.embedder import Embedder
from koroku_tui.agent.recall.meaning import MeaningEmbedder
from koroku_tui.agent.recall.passes import LocalPasses
from koroku_tui.store import SessionManager

Gate = Callable[[], Awaitable[None]]


async def test_the_model_is_read_in_steps_each_once_the_gate_opens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing is read before the gate opens, then a gate before each of many short steps;
    the model read in steps is the model ``load`` reads at once."""
    whole = MeaningEmbedder.load()
    monkeypatch.setattr(meaning_module, "_loaded", {})  # read again, not the process's copy
    opened, reached = asyncio.Event(), asyncio.Event()
    asked = 0

    async def between_turns() -> None:
        nonlocal asked
        asked += 1
        reached.set()
        await opened.wait()

    reading = asyncio.create_task(MeaningEmbedder.load_between(between_turns))
    await reached.wait()
    assert asked == 1 and not reading.done()
    opened.set()
    stepped = await reading
    assert asked > 10  # a turn that starts meanwhile shares the machine for one step
    assert stepped is not whole
    assert MeaningEmbedder.load() is stepped  # kept for the process, as ``load`` keeps it
    assert np.allclose(stepped.embed([PASSPORT]), whole.embed([PASSPORT]), atol=1e-6)


async def test_the_apps_meaning_pass_reads_its_model_only_while_no_turn_runs(
    store: SessionManager,
) -> None:
    await store.begin_turn()
    gates: asyncio.Queue[Gate | None] = asyncio.Queue()

    async def meaning(gate: Gate | None) -> Embedder:
        await gates.put(gate)
        return await _load_meaning(gate)

    passes = LocalPasses(store, _load_local, meaning)
    task = asyncio.create_task(passes.run())
    try:
        gate = await gates.get()
        assert gate is not None
        waiting = asyncio.ensure_future(gate())
        for _ in range(5):
            await asyncio.sleep(0)
        assert not waiting.done()  # a turn runs: the read waits for its end
        await store.end_turn()
        passes.meaning.nudge()
        await waiting
        await passes.meaning.loaded.wait()
        assert passes.meaning.embedder is not None
        assert passes.meaning.embedder.name == MeaningEmbedder.name
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
