"""Compaction is driven by tokens (a share of the window); an event count only if asked for."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from google.genai import types
from helpers.agent_kit import open_agent
from pydantic import ValidationError

from koroku_tui.config.settings import Settings, settings_problem
from koroku_tui.events import CompactionEvent, SessionEvent
from koroku_tui.fake_gemini import FakeGemini, Usage, text_reply
from koroku_tui.modes.wiring import assemble
from koroku_tui.store import SessionManager, StoredMessage

pytestmark = pytest.mark.timeout(60)


class StubCompactor:
    """Keeps only the newest message behind a fixed summary, and remembers each call."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    async def compact(self, messages: Sequence[StoredMessage]) -> CompactionEvent | None:
        self.seen.append(len(messages))
        return CompactionEvent.from_summary(
            "Summary so far.", kept_from_id=messages[-1].id, kept_events=1
        )


async def store_chat(db: Path, events: int) -> None:
    async with SessionManager(db) as store:
        for index in range(events):
            role = "user" if index % 2 == 0 else "model"
            content = types.Content(role=role, parts=[types.Part(text=f"note {index}")])
            await store.add_message(SessionEvent.from_content(content))


async def test_a_long_context_of_few_tokens_is_kept_whole(fake: FakeGemini, tmp_path: Path) -> None:
    """600 short events are a sliver of a 1M-token window: every one still reaches Gemini."""
    await store_chat(tmp_path / "koroku.db", 600)
    stub = StubCompactor()
    fake.add(text_reply("Still here."))
    async with open_agent(fake, tmp_path, compactor=stub, context_window=1_048_576) as agent:
        assert await agent.run_turn("next") == "Still here."
    assert stub.seen == []
    assert len(fake.generate_requests[-1].contents) == 601


async def test_the_measured_tokens_past_the_threshold_compact(
    fake: FakeGemini, tmp_path: Path
) -> None:
    stub = StubCompactor()
    fake.add(
        text_reply("Long answer.", usage=Usage(prompt_tokens=790_000, candidates_tokens=20_000)),
        text_reply("After the summary."),
    )
    async with open_agent(fake, tmp_path, compactor=stub, context_window=1_000_000) as agent:
        await agent.run_turn("first")
        assert stub.seen == []
        # 810,000 of 1,000,000 tokens: past the default 80% share.
        assert await agent.run_turn("second") == "After the summary."
    assert stub.seen == [3]
    texts = [p.get("text") for c in fake.generate_requests[-1].contents for p in c["parts"]]
    assert texts == ["Summary so far.", "second"]


def test_the_threshold_and_an_event_count_are_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KOROKU_HOME", str(tmp_path))
    default = assemble(Settings()).agent_parts().config.budget
    assert (default.threshold_share, default.event_limit) == (0.8, None)

    monkeypatch.setenv("KOROKU_COMPACT_AT", "0.5")
    monkeypatch.setenv("KOROKU_COMPACT_AFTER_EVENTS", "300")
    chosen = assemble(Settings()).agent_parts().config.budget
    assert (chosen.threshold_share, chosen.event_limit) == (0.5, 300)

    monkeypatch.setenv("KOROKU_COMPACT_AT", "2")
    with pytest.raises(ValidationError) as raised:
        Settings()
    assert settings_problem(raised.value).startswith("KOROKU_COMPACT_AT is not usable")

    # An empty variable is how a shell turns a setting back off: the default.
    monkeypatch.setenv("KOROKU_COMPACT_AT", "")
    monkeypatch.setenv("KOROKU_COMPACT_AFTER_EVENTS", " ")
    cleared = assemble(Settings()).agent_parts().config.budget
    assert (cleared.threshold_share, cleared.event_limit) == (0.8, None)
