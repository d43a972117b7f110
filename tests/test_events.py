"""The event model round-trips Gemini Content losslessly (property-based)."""

from __future__ import annotations

import asyncio
import base64
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from helpers.event_strategies import contents
from helpers.events import model, user
from hypothesis import given, settings
from hypothesis import strategies as st

from koroku_tui.agent.context.compaction import split_index
from koroku_tui.events import (
    CompactionEvent,
    Event,
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    OtherPart,
    RewindEvent,
    SessionEvent,
    StoredEventAdapter,
    TextPart,
    decode_signature,
)
from koroku_tui.events.turns import compacted, context_of, current_turn_opener, opens_turn
from koroku_tui.events.views import (
    Attached,
    Called,
    Said,
    ToolResult,
    part_view,
    part_views,
    speaker,
    tool_results,
)
from koroku_tui.store import SessionManager
from koroku_tui.store.context import load_context


def _signatures(content: types.Content) -> list[bytes | None]:
    return [p.thought_signature for p in content.parts or []]


@settings(max_examples=300, deadline=None)
@given(contents)
def test_content_round_trips_through_json(content: types.Content) -> None:
    event = SessionEvent.from_content(content)
    restored = StoredEventAdapter.validate_json(event.model_dump_json())
    assert isinstance(restored, SessionEvent)
    back = restored.to_content()
    assert back == content
    assert _signatures(back) == _signatures(content)


@settings(max_examples=100, deadline=None)
@given(contents)
def test_sdk_wire_form_survives_the_round_trip(content: types.Content) -> None:
    """What the SDK would send for the restored Content equals the original's."""
    event = SessionEvent.from_content(content)
    restored = StoredEventAdapter.validate_json(event.model_dump_json())
    assert isinstance(restored, SessionEvent)
    original_wire = content.model_dump(mode="json", exclude_none=True)
    assert restored.to_content().model_dump(mode="json", exclude_none=True) == original_wire


def test_json_shape_matches_the_seed_design() -> None:
    content = types.Content(
        role="model",
        parts=[
            types.Part(text="thinking", thought=True),
            types.Part(
                function_call=types.FunctionCall(id="c1", name="read_file", args={"path": "a"}),
                thought_signature=b"\xfb\xff",
            ),
        ],
    )
    data = json.loads(SessionEvent.from_content(content).model_dump_json())
    assert data["event_type"] == "session"
    assert [p["kind"] for p in data["parts"]] == ["text", "function_call"]
    call = data["parts"][1]
    assert call["function_call"] == {"name": "read_file", "args": {"path": "a"}, "id": "c1"}
    assert call["thought_signature_b64"] == "+/8="
    compaction = json.loads(CompactionEvent.from_summary("earlier").model_dump_json())
    assert compaction["event_type"] == "compaction"


def test_empty_text_part_carrying_only_a_signature_is_kept() -> None:
    content = types.Content(
        role="model",
        parts=[types.Part(text="Done."), types.Part(text="", thought_signature=b"sig")],
    )
    event = SessionEvent.from_content(content)
    assert isinstance(event.parts[1], TextPart)
    assert event.parts[1].thought_signature == b"sig"
    assert event.to_content() == content


def test_part_metadata_annotates_responses_and_must_match_length() -> None:
    response = types.Part(
        function_response=types.FunctionResponse(id="c1", name="read_file", response={"error": "x"})
    )
    content = types.Content(role="user", parts=[response])
    meta = FCMetadata(name="read_file", args={"path": "a.txt"})
    event = SessionEvent.from_content(content, part_metadata=[meta])
    part = event.parts[0]
    assert isinstance(part, FunctionResponsePart)
    assert part.fc_metadata == meta
    assert part.is_error
    assert not event.is_real_user_turn
    with pytest.raises(ValueError, match="part_metadata has 2 entries for 1 parts"):
        SessionEvent.from_content(content, part_metadata=[meta, meta])


def test_unknown_parts_are_kept_not_rejected() -> None:
    part = types.Part(
        inline_data=types.Blob(data=b"\x89PNG\xfb\xff", mime_type="image/png"),
        thought_signature=b"\x01",
    )
    event = SessionEvent.from_content(types.Content(role="user", parts=[part]))
    assert isinstance(event.parts[0], OtherPart)
    assert event.to_content().parts == [part]


def test_compaction_event_reaches_the_model_as_a_user_message() -> None:
    content = CompactionEvent.from_summary("We fixed the build.").to_content()
    assert content.role == "user"
    assert content.parts == [types.Part(text="We fixed the build.")]


@pytest.mark.parametrize(
    "encoded",
    [
        base64.b64encode(b"\xfb\xff\xfe").decode(),
        base64.urlsafe_b64encode(b"\xfb\xff\xfe").decode(),
    ],
)
def test_signatures_decode_from_either_base64_alphabet(encoded: str) -> None:
    assert decode_signature(encoded) == b"\xfb\xff\xfe"


def test_rows_from_a_newer_koroku_still_load() -> None:
    row: dict[str, Any] = {
        "event_type": "session",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi", "future_field": 1}],
        "another_future_field": True,
    }
    event = StoredEventAdapter.validate_python(row)
    assert isinstance(event, SessionEvent)
    assert event.text == "hi"


def test_function_call_helpers() -> None:
    content = types.Content(
        role="model",
        parts=[types.Part(function_call=types.FunctionCall(name="a", args={}))],
    )
    event = SessionEvent.from_content(content)
    assert [c.function_call.name for c in event.function_calls] == ["a"]
    assert isinstance(event.parts[0], FunctionCallPart)


# -- the vocabulary: turns, the context rule, the part views -----------------

TOOL_CALL = SessionEvent(
    role="model",
    parts=[FunctionCallPart(function_call=FunctionCallData(name="read_file", args={"p": 1}))],
)


def _response(meta: FCMetadata | None, response: dict[str, Any] | None = None) -> SessionEvent:
    data = FunctionResponseData(name="read_file", response=response or {"output": "x"})
    return SessionEvent(
        role="user", parts=[FunctionResponsePart(function_response=data, fc_metadata=meta)]
    )


def test_what_opens_a_turn() -> None:
    assert opens_turn(user("hi"))
    assert opens_turn(CompactionEvent.from_summary("earlier"))  # the model gets it as a user text
    assert not opens_turn(_response(None))  # tool responses continue the turn
    assert not opens_turn(model("answer"))
    assert not opens_turn(SessionEvent(role="user", parts=[]))  # the repair drops it


def test_current_turn_opener() -> None:
    summary = CompactionEvent.from_summary("earlier")
    assert current_turn_opener([]) is None
    assert current_turn_opener([model("a")]) is None
    assert current_turn_opener([user("a"), TOOL_CALL, _response(None), model("b")]) == 0
    assert current_turn_opener([summary, TOOL_CALL, _response(None)]) == 0
    assert current_turn_opener([user("a"), model("b"), user("c"), TOOL_CALL]) == 2


def test_a_summary_opening_the_turn_is_never_a_split_point() -> None:
    """A compaction opens a turn, but splitting there would drop the summary from the context.

    The context keeps no compaction row after the new one, so the summary kept
    "verbatim" would leave the model's view, neither kept nor summarised.
    """
    summary = CompactionEvent.from_summary("earlier")
    events: list[Event] = [user("u0"), model("m0"), user("u1"), model("m1"), summary, TOOL_CALL]
    assert current_turn_opener(events) == 4
    assert split_index(events) is None
    assert split_index([summary, TOOL_CALL, _response(None), model("done")]) is None
    assert split_index([summary, user("u1"), model("m1"), user("u2")]) == 3


@dataclass(frozen=True)
class Row:
    id: int
    event: Event | None
    rewind: RewindEvent | None = None


@st.composite
def session_rows(draw: st.DrawFn) -> list[Row]:
    """Rows of one session in id order: messages, unreadable rows and compactions."""
    rows: list[Row] = []
    for row_id in range(1, draw(st.integers(min_value=0, max_value=14)) + 1):
        kind = draw(st.sampled_from(["user", "model", "unreadable", "compaction"]))
        event: Event | None
        if kind == "compaction":
            kept = draw(st.none() | st.integers(min_value=1, max_value=row_id + 1))
            event = CompactionEvent.from_summary(f"s{row_id}", kept_from_id=kept)
        elif kind == "unreadable":
            event = None
        else:
            event = user(f"u{row_id}") if kind == "user" else model(f"m{row_id}")
        rows.append(Row(row_id, event))
    return rows


@settings(max_examples=200, deadline=None)
@given(session_rows())
def test_context_rule_in_memory_equals_applying_each_row(rows: list[Row]) -> None:
    """``context_of`` over all rows equals the context grown row by row (the in-memory way)."""
    context: list[Row] = []
    history: list[Row] = []
    for row in rows:
        history.append(row)
        if isinstance(row.event, CompactionEvent):
            # Memory may lack rows an earlier compaction dropped: take them from history.
            context = compacted(history, row)
        elif row.event is not None:
            context.append(row)
    assert [r.id for r in context_of(rows)] == [r.id for r in context]


@settings(max_examples=40, deadline=None)
@given(session_rows())
def test_context_rule_equals_what_the_store_loads(rows: list[Row]) -> None:
    """The pure rule, the store's live context and SQLite (two index seeks) agree.

    Unreadable rows are written readable, then broken by a hand edit: the
    live context grew while they were readable, a fresh load skips them.
    """
    written = [Row(r.id, r.event or user("to be broken")) for r in rows]

    async def stored_context() -> tuple[list[int], list[int]]:
        with tempfile.TemporaryDirectory() as folder:
            async with SessionManager(Path(folder) / "k.db") as store:
                for row in written:
                    # A fresh database: row ids count from 1, as in ``session_rows``.
                    assert await store.add_message(row.event) == row.id  # type: ignore[arg-type]
                live = [m.id for m in await store.context_messages()]
                broken = [(r.id,) for r in rows if r.event is None]
                await (await store.db()).executemany(
                    "UPDATE messages SET event_json = '{' WHERE id = ?", broken
                )
                await (await store.db()).commit()
                context, _ = await load_context(await store.db(), store.session_id)
                return live, [m.id for m in context.messages]

    live, loaded = asyncio.run(stored_context())
    assert live == [r.id for r in context_of(written)]
    assert loaded == [r.id for r in context_of(rows)]


def test_part_views_say_what_each_part_holds() -> None:
    event = SessionEvent(
        role="model",
        parts=[
            TextPart(text="hmm", thought=True),
            TextPart(text="Reading."),
            FunctionCallPart(function_call=FunctionCallData(name="read_file")),
            OtherPart(part={"inline_data": {"data": "AA==", "mime_type": "image/png"}}),
        ],
    )
    assert list(part_views(event)) == [
        Said("hmm", thought=True),
        Said("Reading."),
        Called("read_file", {}),  # no arguments sent: none, not unknown
        Attached({"inline_data": {"data": "AA==", "mime_type": "image/png"}}),
    ]


def test_a_tool_result_names_its_call_and_its_outcome() -> None:
    meta = FCMetadata(name="read_file", args={"path": "a.txt"})
    (result,) = tool_results(_response(meta, {"output": "content"}))
    assert result == ToolResult("read_file", {"path": "a.txt"}, {"output": "content"})
    assert (result.failed, result.outcome) == (False, "content")
    (failed,) = tool_results(_response(meta, {"error": "no such file"}))
    assert (failed.failed, failed.outcome) == (True, "no such file")
    (bare,) = tool_results(_response(meta, {"lines": 3}))
    assert bare.outcome == {"lines": 3}  # no "output" key: the whole response


def test_a_result_without_fc_metadata_is_named_by_its_response_args_unknown() -> None:
    (result,) = tool_results(_response(None))
    assert (result.name, result.args, result.failed) == ("read_file", None, False)


def test_an_other_part_holding_a_response_is_a_tool_result() -> None:
    raw = {"function_response": {"name": "run", "response": {"error": "x"}, "will_continue": False}}
    meta = FCMetadata(name="run", args={"cmd": "ls"})
    assert part_view(OtherPart(part=raw, fc_metadata=meta)) == ToolResult(
        "run", {"cmd": "ls"}, {"error": "x"}
    )
    assert part_view(OtherPart(part=raw)) == ToolResult("run", None, {"error": "x"})


def test_speaker() -> None:
    assert speaker(user("hi")) == "you"
    assert speaker(model("hello")) == "model"
    assert speaker(_response(None)) == "tool results"
    assert speaker(CompactionEvent.from_summary("s")) == "compaction"
    assert speaker(SessionEvent(role=None, parts=[TextPart(text="?")])) == "unknown role"
