"""No silent waits: a silent Gemini is given up after the stall limit, retries are told."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.agent_kit import HookRecorder, open_agent, stored_events

from koroku_tui.agent import AgentError, ErrorKind, RetryNotice
from koroku_tui.agent.wire.errors import ErrorKind as Kind
from koroku_tui.fake_gemini import FakeGemini, Hang, error_reply, text_reply

pytestmark = pytest.mark.timeout(30)


async def test_a_server_that_sends_nothing_is_given_up_after_the_stall_limit(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(Hang(), Hang())
    async with open_agent(fake, tmp_path, stall_timeout=0.4) as agent:
        hooks = HookRecorder().attach(agent)
        with pytest.raises(AgentError) as caught:
            await agent.run("hello")
    assert caught.value.kind is ErrorKind.TIMEOUT
    assert caught.value.user_message.startswith("Gemini sent nothing for 0.4 s; try again")
    assert len(fake.generate_requests) == 1  # not retried: the wait is the bound
    assert fake.generate_requests[0].client_disconnected
    assert hooks.payloads("on_retry") == []
    assert [e.role for e in await stored_events(tmp_path / "koroku.db")] == ["user"]


async def test_a_slow_but_steady_stream_is_never_cut(fake: FakeGemini, tmp_path: Path) -> None:
    # Five chunks 0.15 s apart take longer than the limit, but no gap does.
    fake.add(text_reply("one two three four five", pieces=5, chunk_delay=0.15))
    async with open_agent(fake, tmp_path, stall_timeout=0.5) as agent:
        assert await agent.run_turn("count") == "one two three four five"


async def test_a_stall_after_part_of_the_answer_keeps_that_part(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(text_reply("The beginning and then silence", pieces=2, chunk_delay=2.0))
    async with open_agent(fake, tmp_path, stall_timeout=0.4) as agent:
        with pytest.raises(AgentError) as caught:
            await agent.run("go")
    assert caught.value.kind is ErrorKind.CUT_OFF
    assert "nothing for 0.4 s" in caught.value.user_message
    events = await stored_events(tmp_path / "koroku.db")
    assert [e.role for e in events] == ["user", "model"]
    assert events[1].text == "The beginning a"  # the first of two pieces


@pytest.mark.parametrize(
    ("code", "words"),
    [(429, "rate limited"), (503, "Gemini server error"), (500, "Gemini server error")],
)
async def test_a_retry_is_one_line_saying_when_which_and_why(
    fake: FakeGemini, tmp_path: Path, code: int, words: str
) -> None:
    fake.add(error_reply(code), text_reply("Fine now."))
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        await agent.run_turn("hi")
    [notice] = hooks.payloads("on_retry")
    assert isinstance(notice, RetryNotice)
    assert notice.line == f"retrying in 0 s, 2/3: {words}"


def test_retry_line_rounds_the_wait_for_people() -> None:
    notice = RetryNotice(2, 4, 4.2, "Gemini answered 429 RESOURCE_EXHAUSTED", Kind.RATE_LIMIT)
    assert notice.line == "retrying in 4 s, 2/4: rate limited"
    odd = RetryNotice(3, 4, 0.5, "SomethingOdd", Kind.INTERNAL)
    assert odd.line == "retrying in 0.5 s, 3/4: SomethingOdd"
