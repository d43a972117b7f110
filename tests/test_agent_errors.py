"""Retries, and failures told in one sentence with the user's message kept."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import httpx2
import pytest
from google.genai import errors
from helpers.agent_kit import HookRecorder, open_agent, stored_events

from koroku_tui.agent import Agent, AgentError, ErrorKind, ErrorNotice, RetryNotice, RetryPolicy
from koroku_tui.agent.wire.client import MISSING_KEY_HELP
from koroku_tui.agent.wire.errors import describe_failure
from koroku_tui.agent.wire.retry import is_retryable, server_retry_delay
from koroku_tui.fake_gemini import (
    FakeGemini,
    Hang,
    Reply,
    error_reply,
    stream_cut,
    stream_error,
    text_reply,
)

pytestmark = pytest.mark.timeout(30)


def is_one_sentence(text: str) -> bool:
    return "\n" not in text and "Traceback" not in text and text.endswith(".") and len(text) < 400


def errors_told(hooks: HookRecorder) -> list[ErrorNotice]:
    notices: list[ErrorNotice] = hooks.payloads("on_error")
    return notices


async def test_a_429_is_retried_and_announced(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(error_reply(429), text_reply("Here you are."))
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        assert await agent.run_turn("hello") == "Here you are."

    assert [r.status for r in fake.generate_requests] == [429, 200]
    retries: list[RetryNotice] = hooks.payloads("on_retry")
    assert len(retries) == 1
    assert retries[0].attempt == 2 and retries[0].max_attempts == 3
    assert retries[0].kind is ErrorKind.RATE_LIMIT
    assert retries[0].reason == "Gemini answered 429 RESOURCE_EXHAUSTED"
    assert 0 <= retries[0].delay < 0.1
    assert not errors_told(hooks)
    events = await stored_events(tmp_path / "koroku.db")
    assert [e.role for e in events] == ["user", "model"]


async def test_a_400_is_one_sentence_and_the_message_stays(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(error_reply(400, "Unsupported thing in the request."), text_reply("Now it works."))
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        with pytest.raises(AgentError) as caught:
            await agent.run("Do the thing.")
        assert caught.value.kind is ErrorKind.BAD_REQUEST
        assert "Unsupported thing in the request" in caught.value.user_message
        assert is_one_sentence(caught.value.user_message)
        assert [n.message for n in errors_told(hooks)] == [caught.value.user_message]
        assert len(fake.generate_requests) == 1  # a 400 is not retried

        # The message was stored before the request; retry() resends it as is.
        assert await agent.retry() is None
        assert agent.last_text == "Now it works."

    events = await stored_events(tmp_path / "koroku.db")
    assert [(e.role, e.text) for e in events] == [
        ("user", "Do the thing."),
        ("model", "Now it works."),
    ]
    assert fake.generate_requests[1].contents == fake.generate_requests[0].contents


async def test_a_bad_key_is_told_as_such(fake: FakeGemini, tmp_path: Path) -> None:
    fake.api_key = "another-key"  # the agent sends test-key
    async with open_agent(fake, tmp_path) as agent:
        with pytest.raises(AgentError) as caught:
            await agent.run("hello")
    assert caught.value.kind is ErrorKind.AUTH
    assert "API key" in caught.value.user_message and is_one_sentence(caught.value.user_message)
    assert [r.status for r in fake.generate_requests] == [400]


async def test_server_errors_outlasting_the_retries(fake: FakeGemini, tmp_path: Path) -> None:
    fake.add(error_reply(503), error_reply(500), error_reply(503), text_reply("Back."))
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        with pytest.raises(AgentError) as caught:
            await agent.run("hello")
        assert caught.value.kind is ErrorKind.SERVER
        assert len(hooks.payloads("on_retry")) == 2
        # A new message after a failure is fine: two user messages in a row.
        assert await agent.run_turn("still there?") == "Back."
    assert [r.status for r in fake.generate_requests] == [503, 500, 503, 200]
    assert [c["role"] for c in fake.generate_requests[-1].contents] == ["user", "user"]


async def test_a_connection_dropped_before_any_chunk_is_retried(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(stream_cut(text_reply("lost"), after=0), text_reply("Second try."))
    async with open_agent(fake, tmp_path) as agent:
        assert await agent.run_turn("hello") == "Second try."
    assert len(fake.generate_requests) == 2


@pytest.mark.parametrize(
    "broken",
    [
        stream_error(text_reply("Partial answer that breaks", pieces=4), after=2),
        stream_cut(text_reply("Partial answer that breaks", pieces=4), after=2),
        stream_cut(text_reply("Partial answer that breaks", pieces=4), after=2, clean=True),
    ],
    ids=["error-event", "aborted", "clean-end"],
)
async def test_a_stream_broken_after_output_keeps_the_partial_text(
    fake: FakeGemini, tmp_path: Path, broken: Reply
) -> None:
    fake.add(broken, text_reply("Continuing."))
    async with open_agent(fake, tmp_path) as agent:
        hooks = HookRecorder().attach(agent)
        with pytest.raises(AgentError) as caught:
            await agent.run("Tell me a story.")
        assert caught.value.kind is ErrorKind.CUT_OFF and is_one_sentence(str(caught.value))
        deltas = "".join(d.text for d in hooks.payloads("on_text_delta"))
        assert deltas == "Partial answer"
        assert len(fake.generate_requests) == 1  # output arrived: never resent
        assert await agent.run_turn("go on") == "Continuing."

    events = await stored_events(tmp_path / "koroku.db")
    assert [(e.role, e.text) for e in events] == [
        ("user", "Tell me a story."),
        ("model", "Partial answer"),
        ("user", "go on"),
        ("model", "Continuing."),
    ]
    assert fake.generate_requests[1].status == 200


async def test_a_silent_server_is_given_up_after_the_read_timeout_not_retried(
    fake: FakeGemini, tmp_path: Path
) -> None:
    # The transport's read timeout is the same silence as the stall limit:
    # retrying it is what once held a turn for 4 x 120 s.
    fake.add(Hang(), Hang())
    retry = RetryPolicy(attempts=2, initial_delay=0.001, jitter=0)
    async with open_agent(fake, tmp_path, timeout_seconds=0.3, retry=retry) as agent:
        with pytest.raises(AgentError) as caught:
            await agent.run("hello")
    assert caught.value.kind is ErrorKind.TIMEOUT
    assert re.match(r"Gemini sent nothing for 0\.[34] s; try again", caught.value.user_message)
    assert len(fake.generate_requests) == 1


async def test_an_unreachable_server_is_a_network_error(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a free port, closed again: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with open_agent(f"http://127.0.0.1:{port}", tmp_path, store=False) as agent:
        with pytest.raises(AgentError) as caught:
            await agent.run("hello")
    assert caught.value.kind is ErrorKind.NETWORK
    assert is_one_sentence(caught.value.user_message)


def test_without_a_key_the_agent_says_how_to_get_one() -> None:
    with pytest.raises(AgentError) as caught:
        Agent(context=[])
    assert caught.value.user_message == MISSING_KEY_HELP
    assert caught.value.kind is ErrorKind.AUTH


def api_error(code: int, body: dict[str, object]) -> errors.APIError:
    return errors.APIError(code, {"error": body})


def test_the_server_asked_delay_wins_within_the_cap() -> None:
    retry_info = {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "7s",
    }
    exc = api_error(429, {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [retry_info]})
    assert server_retry_delay(exc) == 7.0
    policy = RetryPolicy(max_server_delay=5.0)
    assert policy.delay(1, server_retry_delay(exc)) == 5.0
    assert server_retry_delay(api_error(429, {"code": 429})) is None
    backoff = RetryPolicy(initial_delay=1.0, multiplier=2.0, max_delay=3.0, jitter=0.0)
    assert [backoff.delay(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 3.0, 3.0]


def test_a_retry_after_header_is_read() -> None:
    response = httpx2.Response(503, headers={"Retry-After": "3"})
    exc = errors.APIError(503, {"error": {"code": 503}}, response=response)
    assert server_retry_delay(exc) == 3.0


def test_retryable_failures() -> None:
    assert all(is_retryable(api_error(code, {"code": code})) for code in (408, 429, 500, 503))
    assert not any(is_retryable(api_error(code, {"code": code})) for code in (400, 401, 404))
    assert is_retryable(httpx2.ConnectError("refused"))
    assert is_retryable(TimeoutError())
    assert not is_retryable(ValueError("bug"))


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (api_error(429, {"code": 429, "message": "Quota exceeded."}), ErrorKind.RATE_LIMIT),
        (api_error(401, {"code": 401, "message": "No."}), ErrorKind.AUTH),
        (api_error(403, {"code": 403, "message": "Denied."}), ErrorKind.AUTH),
        (api_error(404, {"code": 404, "message": "No such\nmodel."}), ErrorKind.BAD_REQUEST),
        (api_error(500, {"code": 500, "message": "Oops."}), ErrorKind.SERVER),
        (httpx2.ReadTimeout("slow"), ErrorKind.TIMEOUT),
        (httpx2.ConnectError("refused"), ErrorKind.NETWORK),
        (RuntimeError("a bug\nwith lines"), ErrorKind.INTERNAL),
    ],
)
def test_every_failure_is_one_sentence(exc: BaseException, kind: ErrorKind) -> None:
    described = describe_failure(exc)
    assert described.kind is kind
    assert is_one_sentence(described.message), described.message
