"""The compaction seam: when the agent compacts, what it sends after, and failures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from helpers.agent_kit import HookRecorder, open_agent

from koroku_tui.agent import CompactionFailed, CompactionStarted, NoCompactorError
from koroku_tui.agent.context.budget import BudgetPolicy
from koroku_tui.agent.context.compaction import CompactionError
from koroku_tui.events import CompactionEvent, SessionEvent
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.store import SessionManager, StoredMessage

pytestmark = pytest.mark.timeout(30)

TINY = BudgetPolicy(event_limit=3)


class StubCompactor:
    """Keeps only the newest message, behind a fixed summary; stores nothing itself."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.seen: list[list[StoredMessage]] = []

    async def compact(self, messages: Sequence[StoredMessage]) -> CompactionEvent | None:
        self.seen.append(list(messages))
        if self.fail:
            raise CompactionError("Compaction failed: the summariser is down.")
        return CompactionEvent.from_summary(
            "Summary so far.", kept_from_id=messages[-1].id, kept_events=1
        )


def texts(contents: list[dict[str, object]]) -> list[str]:
    return [
        str(part.get("text"))
        for content in contents
        for part in content["parts"]  # type: ignore[attr-defined]
    ]


async def test_compaction_runs_between_turns_never_in_a_tool_loop(
    fake: FakeGemini, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("apples\n")
    fake.add(
        text_reply("first"),
        text_reply("second"),
        call_reply(("read_file", {"path": "a.txt"})),
        text_reply("third"),
    )
    stub = StubCompactor()
    async with open_agent(fake, tmp_path, compactor=stub, budget=TINY) as agent:
        hooks = HookRecorder().attach(agent)
        await agent.run_turn("one")
        assert stub.seen == []  # 1 event when checked: below the limit
        await agent.run_turn("two")
        await agent.run_turn("three")  # compacts once, then its tool step does not

    assert [len(batch) for batch in stub.seen] == [3, 4]
    assert [m.event.text for m in stub.seen[0] if isinstance(m.event, SessionEvent)] == [
        "one",
        "first",
        "two",
    ]
    requests = fake.generate_requests
    assert texts(requests[1].contents) == ["Summary so far.", "two"]
    assert texts(requests[2].contents) == ["Summary so far.", "three"]
    assert all(r.status == 200 for r in requests)
    started: list[CompactionStarted] = hooks.payloads("on_compaction_started")
    assert [s.reason for s in started] == ["threshold", "threshold"]
    assert len(hooks.payloads("on_compaction_finished")) == 2
    # The summary is stored (the stub did not): the file holds it.
    async with SessionManager(tmp_path / "koroku.db") as manager:
        summaries = await manager.compaction_summaries()
    assert [s.summary for s in summaries] == ["Summary so far.", "Summary so far."]


async def test_a_failed_compaction_is_reported_and_not_retried_at_once(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(text_reply("a"), text_reply("b"), text_reply("c"))
    stub = StubCompactor(fail=True)
    async with open_agent(fake, tmp_path, compactor=stub, budget=TINY) as agent:
        hooks = HookRecorder().attach(agent)
        for message in ("one", "two", "three"):
            await agent.run_turn(message)
    assert len(stub.seen) == 1  # tried at "two", skipped at "three"
    failed: list[CompactionFailed] = hooks.payloads("on_compaction_failed")
    assert [f.message for f in failed] == ["Compaction failed: the summariser is down."]
    assert [r.status for r in fake.generate_requests] == [200, 200, 200]


async def test_manual_compaction(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(text_reply("a"))
    async with open_agent(fake, tmp_path) as agent:
        await agent.run_turn("hello")
        with pytest.raises(NoCompactorError):
            await agent.compact()
    stub = StubCompactor()
    async with open_agent(fake, tmp_path, compactor=stub) as agent:
        hooks = HookRecorder().attach(agent)
        event = await agent.compact()
        assert event is not None and agent.context == [event, agent.context[1]]
        kept = agent.context[1]
        assert isinstance(kept, SessionEvent) and kept.text == "a"
    assert [s.reason for s in hooks.payloads("on_compaction_started")] == ["manual"]


async def test_the_standard_compactor_is_wired_in_by_default(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(
        text_reply("I will remember forty-two for you."),
        text_reply("User wants 42 kept."),  # the summariser's answer
        text_reply("It was forty-two."),
    )
    async with open_agent(fake, tmp_path, auto_compact=True, budget=TINY) as agent:
        await agent.run_turn("Please remember the number forty-two for me, it matters.")
        assert await agent.run_turn("Which number was it?") == "It was forty-two."

    summary_request, final_request = fake.generate_requests[1:]
    assert summary_request.model == "gemini-3-pro-preview"
    assert summary_request.action == "generateContent"
    assert texts(final_request.contents) == ["User wants 42 kept.", "Which number was it?"]
    memory_files = list((tmp_path / "memory").glob("*.md"))
    assert len(memory_files) == 1 and "User wants 42 kept." in memory_files[0].read_text()
