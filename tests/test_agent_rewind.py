"""Rewind and fork through the agent, on the strict fake Gemini (signatures checked).

The real agent, the real SDK and a real SQLite store: after a rewind the next
request holds exactly the turns before M; a fork's first request holds the
copied prefix with its signatures, and the strict fake accepts it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.agent_kit import open_agent, wire_signature

from koroku_tui.agent import Agent
from koroku_tui.events import CompactionEvent, SessionEvent
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.store import SessionManager

pytestmark = pytest.mark.timeout(30)


def _store(agent: Agent) -> SessionManager:
    store = agent.session_manager
    assert isinstance(store, SessionManager)
    return store


def _signatures(contents: list[dict[str, Any]]) -> list[bytes]:
    return [s for c in contents for p in c["parts"] if (s := wire_signature(p)) is not None]


async def _three_turns(fake: FakeGemini, agent: Agent, tmp_path: Path) -> list[int]:
    """Three turns (the second calls a tool); returns the ids of the three user messages."""
    (tmp_path / "a.txt").write_text("apples\n")
    fake.add(
        text_reply("One."),
        call_reply(("read_file", {"path": "a.txt"})),
        text_reply("Apples."),
        text_reply("Three."),
    )
    assert await agent.run_turn("first") == "One."
    assert await agent.run_turn("what is in a.txt?") == "Apples."
    assert await agent.run_turn("third") == "Three."
    turns = await _store(agent).user_turns()
    return [m.id for m in reversed(turns)]


async def test_after_a_rewind_the_next_request_holds_the_turns_before_m(
    fake: FakeGemini, tmp_path: Path
) -> None:
    async with open_agent(fake, tmp_path) as agent:
        first, second, _third = await _three_turns(fake, agent, tmp_path)
        store = _store(agent)
        rows_before = [m.id for m in await store.load_all()]
        target = await store.rewind(second)
        assert isinstance(target.event, SessionEvent) and target.event.text == "what is in a.txt?"
        await agent.refresh()
        assert agent.context == await store.load_messages()
        fake.add(text_reply("Again."))
        assert await agent.run_turn("edited") == "Again."
        # Nothing was deleted: every row is still there, plus the rewind and the new turn.
        assert [m.id for m in await store.load_all()][: len(rows_before)] == rows_before
    requests = fake.generate_requests
    first_turn = requests[1].contents[:2]  # "first", "One." (signed)
    assert requests[-1].contents[:-1] == first_turn
    assert requests[-1].contents[-1] == {"role": "user", "parts": [{"text": "edited"}]}
    assert requests[-1].status == 200
    assert first < second


async def test_a_fork_sends_the_copied_prefix_with_its_signatures(
    fake: FakeGemini, tmp_path: Path
) -> None:
    async with open_agent(fake, tmp_path) as agent:
        _first, _second, third = await _three_turns(fake, agent, tmp_path)
        store = _store(agent)
        source = store.session_id
        fork = await store.fork(source, third)
        await store.switch_session(fork.id)
        await agent.refresh()
        fake.add(text_reply("Forked."))
        assert await agent.run_turn("in the fork") == "Forked."
        assert store.session_id == fork.id
    requests = fake.generate_requests
    # The request of the third turn, minus its message: the prefix before M.
    prefix = requests[3].contents[:-1]
    assert _signatures(prefix), "the prefix carries the tool step's signatures"
    assert requests[-1].contents[:-1] == prefix
    assert requests[-1].status == 200  # the strict fake accepted the copied signatures


async def test_a_rewind_past_a_compaction_sends_the_raw_turns_again(
    fake: FakeGemini, tmp_path: Path
) -> None:
    async with open_agent(fake, tmp_path) as agent:
        first, second, third = await _three_turns(fake, agent, tmp_path)
        store = _store(agent)
        await store.add_message(CompactionEvent.from_summary("we read a.txt", kept_from_id=third))
        await agent.refresh()
        assert isinstance(agent.context[0], CompactionEvent)
        await store.rewind(third)
        await agent.refresh()
        fake.add(text_reply("Back."))
        assert await agent.run_turn("again") == "Back."
    requests = fake.generate_requests
    assert requests[-1].contents[:-1] == requests[3].contents[:-1]
    assert not any("we read a.txt" in str(c) for c in requests[-1].contents)
    assert requests[-1].status == 200
    assert first < second < third


async def test_a_refused_rewind_changes_nothing_the_model_sees(
    fake: FakeGemini, tmp_path: Path
) -> None:
    async with open_agent(fake, tmp_path) as agent:
        await _three_turns(fake, agent, tmp_path)
        store = _store(agent)
        answer = next(m for m in await store.load_all() if m.role == "model")
        with pytest.raises(ValueError, match=f"^Message {answer.id} is not a message the user"):
            await store.rewind(answer.id)
        with pytest.raises(ValueError, match=r"^Message 999 is not in session"):
            await store.rewind(999)
        await agent.refresh()
        fake.add(text_reply("Four."))
        assert await agent.run_turn("fourth") == "Four."
    requests = fake.generate_requests
    # The previous request, its answer, the new message: no rewind happened.
    assert requests[-1].contents[:-2] == requests[-2].contents
    assert requests[-1].contents[-2]["role"] == "model"
