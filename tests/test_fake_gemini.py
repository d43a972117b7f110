"""The fake Gemini server, driven by the real google-genai SDK over HTTP."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import errors, types

from koroku_tui.agent.wire.client import DEFAULT_TIMEOUT_SECONDS, close_client
from koroku_tui.agent.wire.client import make_client as koroku_client
from koroku_tui.fake_gemini import (
    PLACEHOLDER_SIGNATURE,
    SIGNATURE_PREFIX,
    Call,
    ErrorReply,
    FakeGemini,
    Hang,
    ModelInfo,
    RecordedRequest,
    Reply,
    Text,
    Usage,
    call_reply,
    encode_signature,
    error_reply,
    last_user_text,
    stream_cut,
    stream_error,
    text_reply,
)

pytestmark = pytest.mark.timeout(20)

MODEL = "gemini-3-flash-preview"
# Standard base64 of these bytes is "++++////...": a client that treats the
# wire string as URL-safe (or compares strings) cannot round-trip it.
PLUS_SLASH_SIGNATURE = b"\xfb\xef\xbe\xff\xff\xff" * 4


# -- fixtures and helpers ------------------------------------------------------


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in (
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_GENAI_API_VERSION",
    ):
        monkeypatch.delenv(name, raising=False)
    yield
    # Runs after every other fixture's teardown: no server thread may survive.
    leaked = [t.name for t in threading.enumerate() if t.name.startswith("fake-gemini")]
    assert not leaked, f"fake Gemini threads leaked: {leaked}"


def make_client(
    fake: FakeGemini, *, api_key: str = "test-key", timeout_ms: int | None = None
) -> genai.Client:
    """The SDK on Koroku's own transport (``agent.wire.client``), pointed at ``fake``: with
    aiohttp installed (the web mode brings it) a bare client would test another transport."""
    timeout = DEFAULT_TIMEOUT_SECONDS if timeout_ms is None else timeout_ms / 1000
    return koroku_client(base_url=fake.base_url, api_key=api_key, timeout_seconds=timeout)


@pytest.fixture
async def client(fake: FakeGemini) -> AsyncIterator[genai.Client]:
    sdk = make_client(fake)
    yield sdk
    await close_client(sdk)


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def answer_calls(model_content: types.Content) -> types.Content:
    """One user content answering every call of a model step, in call order."""
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                id=p.function_call.id, name=p.function_call.name, response={"output": "ok"}
            )
        )
        for p in model_content.parts or []
        if p.function_call is not None
    ]
    return types.Content(role="user", parts=parts)


def model_content(response: types.GenerateContentResponse) -> types.Content:
    assert response.candidates and response.candidates[0].content
    return response.candidates[0].content


def raw_post(
    fake: FakeGemini, path: str, body: Any, *, key: str | None = "test-key"
) -> tuple[int, Any]:
    """POST JSON with urllib (no SDK): returns (status, decoded JSON body); bytes go as they are."""
    request = urllib.request.Request(
        fake.base_url + path,
        data=body if isinstance(body, bytes) else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **({"x-goog-api-key": key} if key else {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def stream(
    client: genai.Client, contents: str
) -> AsyncIterator[types.GenerateContentResponse]:
    return await client.aio.models.generate_content_stream(model=MODEL, contents=contents)


async def tool_turn(
    client: genai.Client, *steps: str
) -> tuple[list[types.Content], list[types.GenerateContentResponse]]:
    """Run an agent loop: answer each call step, return the history and responses."""
    history = [user("please do it")]
    responses = []
    for _ in steps:
        response = await client.aio.models.generate_content(model=MODEL, contents=history)
        responses.append(response)
        history.append(model_content(response))
        if response.function_calls:
            history.append(answer_calls(model_content(response)))
    return history, responses


# -- plain replies -------------------------------------------------------------


async def test_text_reply_and_recording(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(text_reply("hello", thought="thinking about it"))

    response = await client.aio.models.generate_content(model=MODEL, contents="hi there")

    assert response.text == "hello"
    parts = model_content(response).parts or []
    assert [p.thought for p in parts] == [True, None]
    assert parts[-1].thought_signature in fake.issued_signatures  # text-only: last part
    assert response.candidates and response.candidates[0].finish_reason == "STOP"
    usage = response.usage_metadata
    assert usage and usage.prompt_token_count == 2 and usage.thoughts_token_count
    assert usage.total_token_count == (
        usage.prompt_token_count + (usage.candidates_token_count or 0) + usage.thoughts_token_count
    )
    (request,) = fake.requests
    assert (request.method, request.api_version, request.model) == ("POST", "v1beta", MODEL)
    assert request.action == "generateContent" and not request.stream
    assert request.api_key == "test-key" and request.status == 200
    assert request.contents == [{"role": "user", "parts": [{"text": "hi there"}]}]
    assert fake.last_request is request and fake.requests_for("generateContent") == [request]
    assert fake.pending == 0


def test_sync_client_works(fake: FakeGemini) -> None:
    fake.add(text_reply("from sync"))
    sdk = make_client(fake)
    try:
        assert sdk.models.generate_content(model=MODEL, contents="x").text == "from sync"
    finally:
        sdk.close()


async def test_prompt_tokens_grow_unless_scripted(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(text_reply("a"), text_reply("b"), text_reply("c", usage=Usage(prompt_tokens=1234)))
    history = [user("short question")]
    first = await client.aio.models.generate_content(model=MODEL, contents=history)
    history += [model_content(first), user("a much longer follow-up question " * 10)]
    second = await client.aio.models.generate_content(model=MODEL, contents=history)
    third = await client.aio.models.generate_content(model=MODEL, contents=history)

    counts = [
        r.usage_metadata.prompt_token_count for r in (first, second, third) if r.usage_metadata
    ]
    assert counts[0] is not None and counts[1] is not None
    assert counts[1] > counts[0] > 0
    assert counts[2] == 1234


async def test_responder_callable(fake: FakeGemini, client: genai.Client) -> None:
    seen: list[RecordedRequest] = []

    def shout(request: RecordedRequest) -> Reply:
        seen.append(request)
        return text_reply(last_user_text(request).upper())

    fake.add(shout)
    response = await client.aio.models.generate_content(model=MODEL, contents="quiet please")
    assert response.text == "QUIET PLEASE"
    assert seen == fake.requests


async def test_script_exhausted_is_a_loud_500(fake: FakeGemini, client: genai.Client) -> None:
    with pytest.raises(errors.ServerError) as info:
        await client.aio.models.generate_content(model=MODEL, contents="anyone?")
    assert info.value.code == 500 and info.value.status == "INTERNAL"
    assert "script ran out" in (info.value.message or "")


# -- thought signatures --------------------------------------------------------


async def test_call_signature_round_trips_as_bytes(fake: FakeGemini, client: genai.Client) -> None:
    assert "+" in encode_signature(PLUS_SLASH_SIGNATURE)
    assert "/" in encode_signature(PLUS_SLASH_SIGNATURE)
    fake.add(
        call_reply(Call("read_file", {"path": "a.txt"}, signature=PLUS_SLASH_SIGNATURE)),
        call_reply(("read_file", {"path": "b.txt"})),
        text_reply("done"),
    )

    _, responses = await tool_turn(client, "call", "call", "text")

    explicit = model_content(responses[0]).parts or []
    assert explicit[0].thought_signature == PLUS_SLASH_SIGNATURE
    assert explicit[0].function_call and explicit[0].function_call.args == {"path": "a.txt"}
    auto = (model_content(responses[1]).parts or [])[0]
    assert auto.function_call and auto.function_call.id  # ids are generated
    assert auto.thought_signature in fake.issued_signatures
    assert auto.thought_signature and auto.thought_signature.startswith(SIGNATURE_PREFIX)
    assert responses[2].text == "done"
    # The SDK sent URL-safe base64 ("-", "_"); the server compared bytes.
    last = fake.requests[-1]
    sent = last.contents[1]["parts"][0]["thoughtSignature"]
    assert "-" in sent and base64.urlsafe_b64decode(sent) == PLUS_SLASH_SIGNATURE
    assert [r.status for r in fake.requests] == [200, 200, 200]


async def test_stream_final_empty_part_carries_signature(
    fake: FakeGemini, client: genai.Client
) -> None:
    fake.add(text_reply("hello world", pieces=3, signature_chunk=True))

    chunks = [c async for c in await stream(client, "hi")]

    assert len(chunks) == 4
    assert "".join(c.text or "" for c in chunks[:3]) == "hello world"
    last = chunks[-1]
    assert last.candidates and last.candidates[0].content
    (part,) = last.candidates[0].content.parts or []
    assert part.text == "" and part.thought_signature in fake.issued_signatures
    assert [c.candidates[0].finish_reason for c in chunks if c.candidates] == [None] * 3 + ["STOP"]
    assert all(c.candidates and c.candidates[0].content for c in chunks)
    for chunk in chunks[:3]:
        assert chunk.candidates and chunk.candidates[0].content
        assert all(p.thought_signature is None for p in chunk.candidates[0].content.parts or [])
    assert fake.last_request and fake.last_request.stream
    assert fake.last_request.query.get("alt") == ["sse"]


async def test_unary_merges_streamed_text_pieces(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(text_reply("hello world", pieces=3, signature_chunk=True))
    response = await client.aio.models.generate_content(model=MODEL, contents="hi")
    (part,) = model_content(response).parts or []
    assert part.text == "hello world" and part.thought_signature in fake.issued_signatures


async def test_explicit_chunks_and_signatures(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(
        Reply(
            (
                (Text("plan", thought=True),),
                (Call("ls", id="c1"), Call("pwd", id="c2")),
                (Text("", signature=PLUS_SLASH_SIGNATURE),),
            ),
            finish_reason="MAX_TOKENS",
        )
    )
    chunks = [c async for c in await stream(client, "x")]

    parts = [
        p
        for c in chunks
        if c.candidates
        for p in (c.candidates[0].content or types.Content()).parts or []
    ]
    assert [p.function_call.id for p in parts if p.function_call] == ["c1", "c2"]
    # An explicit signature turns the automatic one off.
    assert [p.thought_signature for p in parts] == [None, None, None, PLUS_SLASH_SIGNATURE]
    assert PLUS_SLASH_SIGNATURE in fake.issued_signatures
    last = chunks[-1]
    assert last.candidates and last.candidates[0].finish_reason == "MAX_TOKENS"
    assert last.usage_metadata and last.usage_metadata.prompt_token_count == 1


async def test_two_step_tool_turn_accepted(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(
        call_reply(("read_file", {"path": "a.txt"}), thought="need the file"),
        call_reply(("write_file", {"path": "b.txt", "text": "x"})),
        text_reply("all done"),
    )
    _, responses = await tool_turn(client, "call", "call", "text")

    assert responses[-1].text == "all done"
    final = fake.requests[-1]
    signed = [
        c["parts"][-1 if i == 1 else 0].get("thoughtSignature")
        for i, c in enumerate(final.contents)
        if c["role"] == "model"
    ]
    assert len(signed) == 2 and all(signed)


async def test_missing_signature_rejected(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(call_reply(("read_file", {"path": "a.txt"})), call_reply(("ls", {})))
    history, _ = await tool_turn(client, "call", "call")
    fake.add(text_reply("never served"))
    stripped = list(history)
    first_step = stripped[1]
    assert first_step.parts and first_step.parts[0].thought_signature
    stripped[1] = types.Content(
        role="model",
        parts=[first_step.parts[0].model_copy(update={"thought_signature": None})],
    )

    with pytest.raises(errors.ClientError) as info:
        await client.aio.models.generate_content(model=MODEL, contents=stripped)

    assert info.value.code == 400 and info.value.status == "INVALID_ARGUMENT"
    message = info.value.message or ""
    assert message.startswith("Function call is missing a thought_signature in functionCall parts")
    assert "function call `default_api:read_file` , position 2." in message
    rejected = fake.requests[-1]
    assert rejected.status == 400 and rejected.error_message == message
    assert fake.pending == 1  # a rejected request consumes no script item
    # The intact history is still accepted.
    response = await client.aio.models.generate_content(model=MODEL, contents=history)
    assert response.text == "never served"


async def test_signatures_of_earlier_turns_are_not_required(
    fake: FakeGemini, client: genai.Client
) -> None:
    fake.add(call_reply(("ls", {})), text_reply("listed"), text_reply("next"))
    history, _ = await tool_turn(client, "call", "text")
    old_call = history[1]
    assert old_call.parts
    history[1] = types.Content(
        role="model", parts=[old_call.parts[0].model_copy(update={"thought_signature": None})]
    )
    history.append(user("a new question starts a new turn"))
    response = await client.aio.models.generate_content(model=MODEL, contents=history)
    assert response.text == "next"


async def test_parallel_calls_only_first_signed(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(
        call_reply(("read_file", {"path": "a"}), ("read_file", {"path": "b"})), text_reply("ok")
    )
    history, responses = await tool_turn(client, "calls", "text")

    first, second = model_content(responses[0]).parts or []
    assert first.thought_signature in fake.issued_signatures
    assert second.thought_signature is None
    assert responses[1].text == "ok"
    assert [len(c.parts or []) for c in history] == [1, 2, 2, 1]


async def test_placeholder_signature_accepted(fake: FakeGemini, client: genai.Client) -> None:
    def injected(signature: bytes) -> list[types.Content]:
        call = types.Part(
            function_call=types.FunctionCall(id="x1", name="remember", args={}),
            thought_signature=signature,
        )
        step = types.Content(role="model", parts=[call])
        return [user("hi"), step, answer_calls(step)]

    fake.add(text_reply("fine"))
    ok = await client.aio.models.generate_content(
        model=MODEL, contents=injected(PLACEHOLDER_SIGNATURE)
    )
    assert ok.text == "fine"
    for bogus in (b"skip_thought_signature_validator", b"\x00" * 32):
        with pytest.raises(errors.ClientError) as info:
            await client.aio.models.generate_content(model=MODEL, contents=injected(bogus))
        assert info.value.code == 400 and info.value.message == "Corrupted thought signature."


def test_signature_secret_makes_signatures_portable() -> None:
    secret = b"demo-secret"
    with FakeGemini(signature_secret=secret) as first:
        signature = first.issue_signature()
    with FakeGemini(signature_secret=secret) as second, FakeGemini() as other:
        assert second.is_known_signature(signature)
        assert not other.is_known_signature(signature)


def test_strict_off_skips_signature_checks(fake: FakeGemini) -> None:
    fake.strict = False
    fake.add(text_reply("lenient"))
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]},
        ]
    }
    status, payload = raw_post(fake, f"/v1beta/models/{MODEL}:generateContent", body)
    assert status == 200
    assert payload["candidates"][0]["content"]["parts"][0]["text"] == "lenient"


def test_snake_case_keys_are_read(fake: FakeGemini) -> None:
    fake.add(text_reply("snakes ok"))
    path = f"/v1/models/{MODEL}:generateContent"
    call_part: dict[str, Any] = {"function_call": {"name": "ls", "args": {}}}
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [call_part]},
            {"role": "user", "parts": [{"function_response": {"name": "ls", "response": {}}}]},
        ]
    }
    status, payload = raw_post(fake, path, body)
    assert status == 400 and "default_api:ls" in payload["error"]["message"]
    call_part["thought_signature"] = "skip_thought_signature_validator"
    status, payload = raw_post(fake, path, body)
    assert status == 200, payload


# -- request shape checks --------------------------------------------------------


async def test_unmatched_call_and_response_counts_rejected(
    fake: FakeGemini, client: genai.Client
) -> None:
    fake.add(call_reply(("a", {}), ("b", {})))
    history, _ = await tool_turn(client, "calls")
    answered = history[-1]
    assert answered.parts
    history[-1] = types.Content(role="user", parts=answered.parts[:1])
    fake.add(text_reply("unused"))

    with pytest.raises(errors.ClientError) as info:
        await client.aio.models.generate_content(model=MODEL, contents=history)

    assert info.value.code == 400
    assert info.value.message == (
        "Please ensure that the number of function response parts is equal to the number "
        "of function call parts of the function call turn."
    )
    orphan = [user("hi"), answer_calls(history[1])]
    with pytest.raises(errors.ClientError):
        await client.aio.models.generate_content(model=MODEL, contents=orphan)
    assert fake.pending == 1


def test_empty_parts_rejected(fake: FakeGemini) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": []}]
    }
    status, payload = raw_post(fake, f"/v1beta/models/{MODEL}:generateContent", body)
    assert status == 400
    assert payload["error"]["message"] == (
        "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.\n"
    )


def test_a_body_nested_past_pythons_json_parser_is_invalid_json(fake: FakeGemini) -> None:
    # Python's parser recurses per level: the request thread used to die
    # with RecursionError, and the client saw the connection drop.
    path = f"/v1beta/models/{MODEL}:generateContent"
    deep = b'{"contents": ' + b"[" * 5_000 + b"]" * 5_000 + b"}"
    status, payload = raw_post(fake, path, deep)
    assert status == 400
    assert payload["error"]["message"] == "Invalid JSON payload received."
    fake.add(text_reply("still here"))
    status, _ = raw_post(fake, path, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    assert status == 200


def test_a_call_nested_past_pythons_json_encoder_is_sent(fake: FakeGemini) -> None:
    # json.dumps recurses per level: the fake could not send (or count the
    # tokens of) a call nested ~1,000 levels deep, which a model can send.
    depth = 3_000
    args: Any = "bottom"
    for _ in range(depth):
        args = {"a": args}
    fake.add(call_reply(("keep", args)))
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    request = urllib.request.Request(
        fake.base_url + f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "x-goog-api-key": "test-key"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200
        sent = response.read()
    assert sent.count(b'{"a": ') == depth and b'"args": {"a": {"a": ' in sent
    assert sent.count(b'"bottom"}') == 1 and sent.count(b"}") >= depth


# -- auth, routing, other endpoints ----------------------------------------------


async def test_wrong_api_key_rejected(fake: FakeGemini) -> None:
    sdk = make_client(fake, api_key="not-the-key")
    try:
        with pytest.raises(errors.ClientError) as info:
            await sdk.aio.models.generate_content(model=MODEL, contents="hi")
    finally:
        await close_client(sdk)
    assert info.value.code == 400 and info.value.status == "INVALID_ARGUMENT"
    assert info.value.message == "API key not valid. Please pass a valid API key."
    assert info.value.details["error"]["details"][0]["reason"] == "API_KEY_INVALID"
    status, _ = raw_post(fake, f"/v1beta/models/{MODEL}:countTokens", {"contents": []}, key=None)
    assert status == 400


def test_every_api_version_and_unknown_paths(fake: FakeGemini) -> None:
    fake.add(text_reply("one"), text_reply("two"), text_reply("three"))
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    for version in ("v1", "v1beta", "v1alpha"):
        status, _ = raw_post(fake, f"/{version}/models/{MODEL}:generateContent", body)
        assert status == 200
    assert [r.api_version for r in fake.requests] == ["v1", "v1beta", "v1alpha"]
    for path in ("/v2/models/x:generateContent", f"/v1beta/models/{MODEL}:explode", "/nope"):
        status, payload = raw_post(fake, path, body)
        assert status == 404 and payload["error"]["status"] == "NOT_FOUND"


async def test_count_tokens_and_model_info(client: genai.Client) -> None:
    short = await client.aio.models.count_tokens(model=MODEL, contents="abcd" * 10)
    longer = await client.aio.models.count_tokens(model=MODEL, contents="abcd" * 100)
    assert (short.total_tokens, longer.total_tokens) == (10, 100)

    info = await client.aio.models.get(model=MODEL)
    assert info.name == f"models/{MODEL}"
    assert (info.input_token_limit, info.output_token_limit) == (1_048_576, 65_536)


async def test_configured_models() -> None:
    with FakeGemini(models={"tiny": ModelInfo(input_token_limit=1000)}) as fake:
        sdk = make_client(fake)
        try:
            info = await sdk.aio.models.get(model="tiny")
            assert (info.input_token_limit, info.output_token_limit) == (1000, 65_536)
            with pytest.raises(errors.ClientError) as exc:
                await sdk.aio.models.get(model=MODEL)
            assert exc.value.code == 404 and MODEL in (exc.value.message or "")
        finally:
            await close_client(sdk)


# -- errors, retries, broken streams ---------------------------------------------


async def test_429_then_success(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(error_reply(429), text_reply("after the storm"))
    with pytest.raises(errors.ClientError) as info:
        await client.aio.models.generate_content(model=MODEL, contents="hi")
    assert info.value.code == 429 and info.value.status == "RESOURCE_EXHAUSTED"
    response = await client.aio.models.generate_content(model=MODEL, contents="hi")
    assert response.text == "after the storm"


async def test_sdk_retry_options_retry_a_503(fake: FakeGemini) -> None:
    fake.add(error_reply(503), text_reply("second time lucky"))
    sdk = genai.Client(
        api_key="test-key",
        http_options=types.HttpOptions(
            base_url=fake.base_url,
            api_version="v1beta",
            retry_options=types.HttpRetryOptions(
                attempts=2, initial_delay=0.01, max_delay=0.01, jitter=0
            ),
        ),
    )
    try:
        response = await sdk.aio.models.generate_content(model=MODEL, contents="hi")
    finally:
        await close_client(sdk)
    assert response.text == "second time lucky"
    assert [r.status for r in fake.requests] == [503, 200]


async def test_429_on_a_stream_raises_on_iteration(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(error_reply(429, "slow down"))
    with pytest.raises(errors.ClientError) as info:
        async for _ in await stream(client, "hi"):
            pass
    assert info.value.code == 429 and info.value.message == "slow down"


async def test_mid_stream_error_after_chunks(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(stream_error(text_reply("abcdef", pieces=3), after=2, error=ErrorReply(503)))
    received: list[str] = []
    with pytest.raises(errors.ServerError) as info:
        async for chunk in await stream(client, "x"):
            received.append(chunk.text or "")
    assert received == ["ab", "cd"]
    assert info.value.code == 503 and info.value.status == "UNAVAILABLE"
    assert fake.last_request and fake.last_request.error
    assert fake.last_request.error["code"] == 503


async def test_stream_cut_aborts_the_body(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(stream_cut(text_reply("abcdef", pieces=3), after=1))
    received: list[str] = []
    with pytest.raises(httpx2.TransportError):
        async for chunk in await stream(client, "x"):
            received.append(chunk.text or "")
    assert received == ["ab"]


async def test_clean_stream_cut_ends_without_finish_reason(
    fake: FakeGemini, client: genai.Client
) -> None:
    fake.add(stream_cut(text_reply("abcdef", pieces=3), after=2, clean=True))
    chunks = [c async for c in await stream(client, "x")]
    assert [c.text for c in chunks] == ["ab", "cd"]
    assert all(c.candidates and c.candidates[0].finish_reason is None for c in chunks)


async def test_chunk_delay_paces_the_stream(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(text_reply("abc", pieces=3, chunk_delay=0.15))
    arrivals: list[float] = []
    async for _ in await stream(client, "x"):
        arrivals.append(time.monotonic())
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert len(gaps) == 2 and min(gaps) >= 0.12


# -- hangs, timeouts, cancellation, shutdown --------------------------------------


async def wait_until(predicate: Any, within: float = 3.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def test_hang_ended_by_client_timeout(fake: FakeGemini) -> None:
    fake.add(Hang())
    sdk = make_client(fake, timeout_ms=300)
    started = time.monotonic()
    try:
        with pytest.raises(httpx2.TimeoutException):
            await sdk.aio.models.generate_content(model=MODEL, contents="hi")
    finally:
        await close_client(sdk)
    assert time.monotonic() - started < 20  # the client's 0.3 s, not the hang's forever
    request = fake.requests[0]
    await wait_until(lambda: request.client_disconnected)
    assert request.status is None


async def test_hang_ended_by_cancellation(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(Hang())
    task = asyncio.create_task(client.aio.models.generate_content(model=MODEL, contents="hi"))
    assert await asyncio.to_thread(fake.wait_for_requests, 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: fake.requests[0].client_disconnected)


async def test_slow_stream_cancelled_mid_way(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(text_reply("abcdef", pieces=3, chunk_delay=10))
    received: list[str] = []

    async def consume() -> None:
        async for chunk in await stream(client, "x"):
            received.append(chunk.text or "")

    task = asyncio.create_task(consume())
    await wait_until(lambda: received == ["ab"])
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: fake.requests[0].client_disconnected)


async def test_hang_released_then_answers(fake: FakeGemini, client: genai.Client) -> None:
    fake.add(Hang(then=text_reply("finally")))
    task = asyncio.create_task(client.aio.models.generate_content(model=MODEL, contents="hi"))
    assert await asyncio.to_thread(fake.wait_for_requests, 1)
    await wait_until(lambda: fake.release() == 1)
    response = await asyncio.wait_for(task, 5)
    assert response.text == "finally"


async def test_stop_does_not_wait_for_a_hang() -> None:
    server = FakeGemini([Hang()]).start()
    sdk = make_client(server)
    try:
        task = asyncio.create_task(sdk.aio.models.generate_content(model=MODEL, contents="hi"))
        assert await asyncio.to_thread(server.wait_for_requests, 1)
        started = time.monotonic()
        await asyncio.to_thread(server.stop)
        assert time.monotonic() - started < 10  # not the hang's forever
        with pytest.raises(httpx2.TransportError):
            await asyncio.wait_for(task, 5)
    finally:
        server.stop()
        await close_client(sdk)


def test_stop_closes_idle_keep_alive_connections(fake: FakeGemini) -> None:
    """A client that keeps its pooled connection open must not block stop()."""
    sdk = make_client(fake)
    fake.add(text_reply("pooled"))
    assert sdk.models.generate_content(model=MODEL, contents="hi").text == "pooled"
    started = time.monotonic()
    fake.stop()  # the sync client still holds the connection
    assert time.monotonic() - started < 10  # not waiting on the idle connection
    sdk.close()


def test_reply_item_types_are_plain_data() -> None:
    reply = call_reply(("a", {"k": 1}), text="calling", thought="hmm")
    assert reply.chunks == (
        (Text("hmm", thought=True),),
        (Text("calling"),),
        (Call("a", {"k": 1}),),
    )
    assert text_reply("abcdefg", pieces=3).chunks == ((Text("abc"),), (Text("de"),), (Text("fg"),))


# -- the command line entry point ------------------------------------------------


def _serve_one_request(tmp_path: Path, *flags: str) -> tuple[str, float, float]:
    """Run the module's command, ask it one generation, stop it: what it printed after
    the base URL, and ``time.monotonic()`` before the request and after the answer."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from the script", "pieces": 2}]))
    command = [sys.executable, "-m", "koroku_tui.fake_gemini", "--script", str(script), *flags]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None
            base_url = proc.stdout.readline().strip()
            assert base_url.startswith("http://127.0.0.1:")
            request = urllib.request.Request(
                f"{base_url}/v1beta/models/{MODEL}:generateContent",
                data=json.dumps(
                    {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
                ).encode(),
                headers={"x-goog-api-key": "test-key", "Content-Type": "application/json"},
            )
            before = time.monotonic()
            with urllib.request.urlopen(request, timeout=5) as response:
                payload = json.loads(response.read())
            after = time.monotonic()
            assert payload["candidates"][0]["content"]["parts"][0]["text"] == "from the script"
        finally:
            proc.terminate()
        rest, stderr = proc.communicate(timeout=5)
    assert proc.returncode == 0, stderr
    return rest, before, after


def test_module_entry_point_serves(tmp_path: Path) -> None:
    rest, _, _ = _serve_one_request(tmp_path)
    assert rest == ""


def test_arrivals_tell_a_bench_when_each_generation_request_came(tmp_path: Path) -> None:
    # stream_input_bench times a reply from its first request: one clock for both processes.
    rest, before, after = _serve_one_request(tmp_path, "--arrivals")
    word, *times = rest.split()
    assert word == "arrivals"
    assert len(times) == 1
    assert before <= float(times[0]) <= after
