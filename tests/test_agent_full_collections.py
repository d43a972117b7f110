"""No full garbage collection while a turn runs; the process's own threshold after it.

A step of a thousand calls met two or three full collections of 15-35 ms,
the GIL held, keys and frames waiting (issue 22, item 21). The young
generations are still collected during the turn.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.agent_kit import open_agent

from koroku_tui.agent.loop import full_collections
from koroku_tui.agent.tools import ToolRegistry
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(30)


@pytest.fixture(autouse=True)
def given_back_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # An earlier test's turn may have ended less than RELEASE_AFTER ago.
    assert full_collections.restored.wait(10)
    monkeypatch.setattr(full_collections, "RELEASE_AFTER", 0.0)


async def given_back() -> None:
    """Wait until the hold a turn left is given back (``RELEASE_AFTER`` after it)."""
    assert await asyncio.to_thread(full_collections.restored.wait, 10)


@pytest.fixture
def collections_seen() -> Iterator[list[int]]:
    """The generation of every collection that runs, as it runs."""
    seen: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)


def heap_growing_registry(kept: list[object]) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    def grow() -> str:
        """Make many objects that live on, as a step of a thousand calls does."""
        kept.extend([n] for n in range(400_000))
        return "grown"

    return registry


async def test_a_turn_that_grows_the_heap_meets_no_full_collection(
    fake: FakeGemini, tmp_path: Path, collections_seen: list[int]
) -> None:
    kept: list[object] = []
    before = gc.get_threshold()
    fake.add(call_reply(("grow", {}), ("grow", {})), text_reply("Grown."))
    async with open_agent(fake, tmp_path, tools=heap_growing_registry(kept)) as agent:
        gc.collect()  # the heap's survivors counted: what comes later is new
        collections_seen.clear()
        assert await agent.run_turn("grow") == "Grown."
        during = list(collections_seen)
        await given_back()
        assert gc.get_threshold() == before  # the process's own again, once the turn ended
    assert 2 not in during  # 800,000 lists kept, and no full collection among them
    assert 0 in during  # young ones still run
    kept.clear()


async def test_a_cancelled_turn_gives_the_threshold_back(fake: FakeGemini, tmp_path: Path) -> None:
    before = gc.get_threshold()
    running = asyncio.Event()
    registry = ToolRegistry()

    @registry.register
    async def wait_here() -> str:
        """Wait until cancelled."""
        running.set()
        await asyncio.Event().wait()
        return "never"

    fake.add(call_reply(("wait_here", {})))
    async with open_agent(fake, tmp_path, tools=registry) as agent:
        turn = asyncio.create_task(agent.run_turn("wait"))
        await running.wait()
        assert gc.get_threshold() != before
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        await given_back()
        assert gc.get_threshold() == before


async def test_the_hold_outlasts_the_turn_while_its_end_is_drawn(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given back at once, the collection the turn put off ran while the app
    # drew the step's last rows and answer (38 and 70 ms after 1,000 calls).
    monkeypatch.setattr(full_collections, "RELEASE_AFTER", 3600.0)
    fake.add(text_reply("Done."))
    try:
        async with open_agent(fake, tmp_path) as agent:
            assert await agent.run_turn("hi") == "Done."
            assert gc.get_threshold()[2] == full_collections.HELD_THRESHOLD
    finally:
        full_collections._restore()
    assert full_collections.restored.is_set()
