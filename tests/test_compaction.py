"""Compaction against the real SDK, the fake server and a real SQLite file."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from google.genai import types
from helpers.events import user

from koroku_tui.agent.context.compaction import (
    CompactionError,
    SummaryCompactor,
    split_index,
    transcript,
)
from koroku_tui.agent.wire.client import make_client
from koroku_tui.agent.wire.retry import RetryPolicy
from koroku_tui.events import CompactionEvent, FCMetadata, SessionEvent
from koroku_tui.fake_gemini import FakeGemini, error_reply, text_reply
from koroku_tui.store import SessionManager

NOW = datetime(2026, 12, 2, 14, 5)


def model(*parts: types.Part) -> SessionEvent:
    return SessionEvent.from_content(types.Content(role="model", parts=list(parts)))


async def add_turns(store: SessionManager) -> None:
    """Two finished turns (the first with a tool call) and a new request."""
    call = types.FunctionCall(id="c1", name="read_file", args={"path": "notes.txt"})
    await store.add_message(user("What is in notes.txt? " + "please " * 200))
    await store.add_message(
        model(
            types.Part(text="secret reasoning", thought=True),
            types.Part(function_call=call, thought_signature=b"\xfb\xff"),
        )
    )
    response = types.Part(
        function_response=types.FunctionResponse(
            id="c1", name="read_file", response={"output": "buy milk " * 100}
        )
    )
    await store.add_message(
        SessionEvent.from_content(
            types.Content(role="user", parts=[response]),
            part_metadata=[FCMetadata(name="read_file", args={"path": "notes.txt"})],
        )
    )
    await store.add_message(model(types.Part(text="It says to buy milk. " * 20)))
    await store.add_message(user("Thanks. Now what about the car?"))


def compactor(fake: FakeGemini, store: SessionManager, tmp_path: Path) -> SummaryCompactor:
    client = make_client(base_url=fake.base_url, api_key="test-key")
    return SummaryCompactor(
        client, store, tmp_path / "memory", retry=RetryPolicy(initial_delay=0.01)
    )


async def test_compaction_stores_a_summary_and_keeps_the_newest_request(
    fake: FakeGemini, store: SessionManager, tmp_path: Path
) -> None:
    await add_turns(store)
    before = await store.context_messages()
    fake.add(text_reply("The user wanted their notes read; they say buy milk."))

    result = await compactor(fake, store, tmp_path).compact(before, now=NOW)

    assert result is not None
    # The request: the compaction model, no tools, the instruction, no thoughts.
    (request,) = fake.generate_requests
    assert request.model == "gemini-3-pro-preview"
    assert "tools" not in request.body
    system = request.body["systemInstruction"]["parts"][0]["text"]
    assert "objective" in system and "four paragraphs" in system
    sent = request.contents[0]["parts"][0]["text"]
    assert "read_file" in sent and "buy milk" in sent
    assert "secret reasoning" not in sent
    assert "what about the car" not in sent  # the newest request stays verbatim

    # The store: a CompactionEvent, then the newest request, verbatim.
    context = await store.load_messages()
    assert isinstance(context[0], CompactionEvent)
    assert context[0].summary == "The user wanted their notes read; they say buy milk."
    assert context[1:] == [before[-1].event]
    assert context[0].kept_from_id == before[-1].id
    # Nothing was deleted: the raw history is all there.
    assert len(await store.load_all()) == len(before) + 1

    memory_file = tmp_path / "memory" / "02-12-2026.md"
    assert memory_file.read_text(encoding="utf-8") == (
        "[14:05]: The user wanted their notes read; they say buy milk.\n"
    )
    assert result.memory_file == memory_file


async def test_an_earlier_summary_is_folded_into_the_next(
    fake: FakeGemini, store: SessionManager, tmp_path: Path
) -> None:
    await add_turns(store)
    worker = compactor(fake, store, tmp_path)
    fake.add(text_reply("First summary."))
    await worker.compact(await store.context_messages(), now=NOW)
    await store.add_message(model(types.Part(text="The car needs oil. " * 30)))
    await store.add_message(user("And the bike?"))
    fake.add(text_reply("Second summary."))

    await worker.compact(await store.context_messages(), now=NOW)

    sent = fake.generate_requests[-1].contents[0]["parts"][0]["text"]
    assert "Earlier summary: First summary." in sent
    context = await store.load_messages()
    assert isinstance(context[0], CompactionEvent)
    assert context[0].summary == "Second summary."
    assert [e.text for e in context[1:] if isinstance(e, SessionEvent)] == ["And the bike?"]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (error_reply(400), "answered 400"),
        (text_reply("", signature_chunk=False), "returned no text"),
        (text_reply("x" * 20_000), "longer than the turns"),
    ],
)
async def test_a_failed_compaction_leaves_history_untouched(
    fake: FakeGemini,
    store: SessionManager,
    tmp_path: Path,
    reply: object,
    message: str,
) -> None:
    await add_turns(store)
    before = await store.load_messages()
    fake.add(reply)  # type: ignore[arg-type]

    with pytest.raises(CompactionError, match=message):
        await compactor(fake, store, tmp_path).compact(await store.context_messages())

    assert await store.load_messages() == before
    assert not (tmp_path / "memory").exists()


async def test_thought_only_answer_counts_as_empty(
    fake: FakeGemini, store: SessionManager, tmp_path: Path
) -> None:
    await add_turns(store)
    fake.add(text_reply("", thought="only thinking"))
    with pytest.raises(CompactionError, match="returned no text"):
        await compactor(fake, store, tmp_path).compact(await store.context_messages())


def test_split_is_at_the_newest_real_user_turn_never_inside_a_tool_exchange() -> None:
    call = model(types.Part(function_call=types.FunctionCall(id="c", name="f", args={})))
    answer = SessionEvent.from_content(
        types.Content(
            role="user",
            parts=[
                types.Part(function_response=types.FunctionResponse(id="c", name="f", response={}))
            ],
        )
    )
    events = [user("a"), model(types.Part(text="b")), user("c"), call, answer]
    assert split_index(events) == 2
    assert split_index([user("only request")]) is None
    assert split_index([CompactionEvent.from_summary("s"), user("x")]) is None


def test_transcript_leaves_out_thoughts_and_shortens_tool_output() -> None:
    events = [
        user("hi"),
        model(types.Part(text="ponder", thought=True), types.Part(text="hello")),
    ]
    text = transcript(events)
    assert text == "User: hi\nKoroku: hello"
    big = SessionEvent.from_content(
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        name="read_file", response={"output": "z" * 5_000}
                    )
                )
            ],
        )
    )
    line = transcript([big])
    assert line.startswith("Tool read_file answered: ")
    assert len(line) < 2_200 and "more characters]" in line


async def test_a_transient_failure_is_retried(
    fake: FakeGemini, store: SessionManager, tmp_path: Path
) -> None:
    await add_turns(store)
    fake.add(error_reply(429), error_reply(503), text_reply("Summary after retries."))
    client = make_client(base_url=fake.base_url, api_key="test-key")
    fast = RetryPolicy(attempts=3, initial_delay=0.01, jitter=0)
    worker = SummaryCompactor(client, store, tmp_path / "memory", retry=fast)

    result = await worker.compact(await store.context_messages(), now=NOW)

    assert result is not None and result.event.summary == "Summary after retries."
    assert [r.status for r in fake.generate_requests] == [429, 503, 200]
