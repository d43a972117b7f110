"""The event model round-trips Gemini Content losslessly (property-based)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from koroku_tui.events import (
    CompactionEvent,
    FCMetadata,
    FunctionCallPart,
    FunctionResponsePart,
    OtherPart,
    SessionEvent,
    StoredEventAdapter,
    TextPart,
    decode_signature,
)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=10), json_values, max_size=4)

# Signatures are arbitrary bytes; 0xFB 0xFF encodes to "+/8=" so the standard
# and URL-safe alphabets differ, which is where string comparisons go wrong.
signatures = st.none() | st.binary(max_size=48) | st.just(b"\xfb\xff\xfe\xfb\xef")
thought_flags = st.none() | st.booleans()
ids = st.none() | st.text(min_size=1, max_size=12)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=20)


@st.composite
def text_parts(draw: st.DrawFn) -> types.Part:
    return types.Part(
        text=draw(st.text()), thought=draw(thought_flags), thought_signature=draw(signatures)
    )


@st.composite
def call_parts(draw: st.DrawFn) -> types.Part:
    call = types.FunctionCall(id=draw(ids), name=draw(names), args=draw(st.none() | json_objects))
    return types.Part(function_call=call, thought_signature=draw(signatures))


@st.composite
def response_parts(draw: st.DrawFn) -> types.Part:
    response = types.FunctionResponse(
        id=draw(ids),
        name=draw(names),
        response=draw(
            st.none()
            | st.fixed_dictionaries({"output": json_values})
            | st.fixed_dictionaries({"error": st.text()})
            | json_objects
        ),
    )
    return types.Part(function_response=response, thought_signature=draw(signatures))


@st.composite
def other_parts(draw: st.DrawFn) -> types.Part:
    """Part kinds the seed design rejected; they must round-trip too."""
    signature = draw(signatures)
    choice = draw(st.integers(min_value=0, max_value=4))
    if choice == 0:
        blob = types.Blob(data=draw(st.binary(max_size=64)), mime_type="image/png")
        return types.Part(inline_data=blob, thought_signature=signature)
    if choice == 1:
        file = types.FileData(file_uri="gs://bucket/" + draw(names), mime_type="text/plain")
        return types.Part(file_data=file, thought_signature=signature)
    if choice == 2:
        code = types.ExecutableCode(code=draw(st.text()), language=types.Language.PYTHON)
        return types.Part(executable_code=code, thought_signature=signature)
    if choice == 3:
        result = types.CodeExecutionResult(outcome=types.Outcome.OUTCOME_OK, output=draw(st.text()))
        return types.Part(code_execution_result=result, thought_signature=signature)
    # A function call with a field the typed part does not model.
    call = types.FunctionCall(name=draw(names), args={}, will_continue=True)
    return types.Part(function_call=call, thought_signature=signature)


contents = st.builds(
    lambda role, parts: types.Content(role=role, parts=parts),
    st.sampled_from(["user", "model"]),
    st.lists(text_parts() | call_parts() | response_parts() | other_parts(), max_size=6),
)


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
