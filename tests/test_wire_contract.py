"""The body Koroku sends is, as JSON, the body the SDK's own ``generate_content_stream`` sends.

Koroku builds each request from wire forms it converted once per event
(``agent/wire/body.py``) instead of letting the SDK convert the whole history
on every step. These properties pin that shortcut to the SDK: both bodies are
recorded at the fake Gemini server, for random histories (any parts,
signatures as raw bytes, calls and responses with ids) under the agent's real
config (system instruction, tool declarations, thinking config). An SDK
upgrade that changes the wire fails here rather than in front of the API.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import Sequence
from typing import Any

import pytest
from google import genai
from google.genai import errors, types
from helpers.agent_kit import vertex_client
from helpers.event_strategies import histories
from hypothesis import HealthCheck, given, settings

from koroku_tui.agent.context.history import MemoryHistory
from koroku_tui.agent.hooks import HookEmitter
from koroku_tui.agent.loop.conversation import Conversation
from koroku_tui.agent.tools import default_registry
from koroku_tui.agent.wire.body import WireForm
from koroku_tui.agent.wire.client import make_client
from koroku_tui.agent.wire.errors import AgentError
from koroku_tui.agent.wire.request import (
    ReplyFailed,
    ReplyInFlight,
    RequestSettings,
    request_reply,
)
from koroku_tui.agent.wire.retry import RetryPolicy
from koroku_tui.events import Event, SessionEvent
from koroku_tui.fake_gemini import FakeGemini, RecordedRequest, text_reply

MODEL = "gemini-3-flash-preview"
SYSTEM = "You are Koroku, a careful assistant.\nToday is a Thursday."


async def _drain(stream: Any) -> None:
    try:
        async for _ in stream:
            pass
    except errors.APIError:
        pass  # the fake may refuse a random history; the body was recorded on arrival


async def both_bodies(
    fake: FakeGemini, client: genai.Client, events: Sequence[Event], *, offer_tools: bool
) -> tuple[RecordedRequest, RecordedRequest] | None:
    """What Koroku's path sent and what the SDK's path sent, for the same context and config.

    None when there is nothing to send, or both refused to send it (a part
    the backend does not take).
    """
    form = WireForm(client)
    conversation = Conversation(MemoryHistory(events), wire=form.content)
    await conversation.reload()
    # The SDK's path gets the same repaired Contents, converted by the SDK alone.
    plain = Conversation(MemoryHistory(events))
    await plain.reload()
    contents = plain.request_contents()
    if not contents:
        return None  # the SDK refuses an empty request itself; the agent always sends one
    request_settings = RequestSettings(SYSTEM, default_registry())
    config = request_settings.config(offer_tools=offer_tools)
    before = len(fake.requests)
    try:
        wire = conversation.request_wire()
    except AgentError:
        with pytest.raises(ValueError, match="only supported in"):
            await _drain(
                await client.aio.models.generate_content_stream(
                    model=MODEL, contents=contents, config=config
                )
            )
        assert len(fake.requests) == before
        return None
    request = request_settings.request(form, MODEL, wire, offer_tools=offer_tools)
    with contextlib.suppress(ReplyFailed):  # refused, but recorded on arrival
        await request_reply(
            form,
            request,
            policy=RetryPolicy(attempts=1),
            emitter=HookEmitter(),
            flight=ReplyInFlight(),
        )
    await _drain(
        await client.aio.models.generate_content_stream(
            model=MODEL, contents=contents, config=config
        )
    )
    koroku, sdk = fake.requests[before:]
    return koroku, sdk


def assert_same_wire(pair: tuple[RecordedRequest, RecordedRequest] | None) -> None:
    if pair is None:
        return  # both refused
    koroku, sdk = pair
    assert koroku.path == sdk.path
    assert koroku.query == sdk.query
    assert json.loads(koroku.raw_body) == json.loads(sdk.raw_body)


@pytest.fixture(scope="module")
def fake() -> Any:
    with FakeGemini(on_empty=text_reply("ok"), strict=False) as server:
        yield server


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(histories)
def test_gemini_api_body_equals_the_sdks(fake: FakeGemini, events: list[Event]) -> None:
    async def check() -> None:
        client = make_client(base_url=fake.base_url, api_key="test-key")
        try:
            for offer_tools in (True, False):
                assert_same_wire(await both_bodies(fake, client, events, offer_tools=offer_tools))
        finally:
            await client.aio.aclose()

    asyncio.run(check())


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(histories)
def test_vertex_body_equals_the_sdks(fake: FakeGemini, events: list[Event]) -> None:
    """Vertex AI spells some fields differently; Koroku must follow its backend."""

    async def check() -> None:
        client = vertex_client(fake.base_url)
        try:
            pair = await both_bodies(fake, client, events, offer_tools=True)
            if pair is not None:
                assert "publishers/google/models" in pair[0].path
            assert_same_wire(pair)
        finally:
            await client.aio.aclose()

    asyncio.run(check())


def test_the_body_carries_what_the_agent_configures(fake: FakeGemini) -> None:
    """The fields the contract must cover are really in the body (not vacuously equal)."""
    call = types.FunctionCall(id="c1", name="read_file", args={"path": "a.txt"})
    response = types.FunctionResponse(id="c1", name="read_file", response={"output": "x"})
    signature = b"\xfb\xff\xfe\xfb\xef"
    events: list[Event] = [
        SessionEvent.from_content(types.Content(role="user", parts=[types.Part(text="Hi")])),
        SessionEvent.from_content(
            types.Content(
                role="model",
                parts=[types.Part(function_call=call, thought_signature=signature)],
            )
        ),
        SessionEvent.from_content(
            types.Content(role="user", parts=[types.Part(function_response=response)])
        ),
    ]

    async def check() -> None:
        client = make_client(base_url=fake.base_url, api_key="test-key")
        try:
            pair = await both_bodies(fake, client, events, offer_tools=True)
        finally:
            await client.aio.aclose()
        assert pair is not None
        assert_same_wire(pair)
        body = json.loads(pair[0].raw_body)
        assert body["systemInstruction"]["parts"][0]["text"] == SYSTEM
        assert body["tools"][0]["functionDeclarations"]
        assert body["generationConfig"]["thinkingConfig"] == {
            "include_thoughts": True
        }  # nested: snake_case
        model_part = body["contents"][1]["parts"][0]
        assert model_part["functionCall"]["id"] == "c1"
        # URL-safe base64 with padding, as the SDK sends it ("+/" would be the standard alphabet).
        assert model_part["thoughtSignature"] == base64.urlsafe_b64encode(signature).decode()
        assert body["contents"][2]["parts"][0]["functionResponse"]["id"] == "c1"

    asyncio.run(check())
