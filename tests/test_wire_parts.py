"""A part's wire form built directly (``part_form.py``) is, as JSON bytes, the SDK's own.

Each Content goes through ``WireForm.content`` and through the SDK's
``_Content_to_mldev`` / ``_Content_to_vertex`` alone, on both backends, for
every part kind (text, thoughts, signatures, calls, responses, inline data,
files, code, fields only one backend takes) and for values the SDK copies in
its own way (bytes, dates, tuples, enums, models, non-string keys): the JSON
is the same string, key order included, or both refuse the part. (Values
the SDK leaves unencodable, such as a list of bytes in a call's arguments,
are written with ``repr`` on both sides.)
"""

from __future__ import annotations

import datetime
import enum
import json
import threading
from typing import Any

import pytest
from google.genai import models as sdk_models
from google.genai import types
from helpers.agent_kit import vertex_client
from helpers.event_strategies import (
    call_parts,
    contents,
    other_parts,
    response_parts,
    text_parts,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from koroku_tui.agent.context.history import MemoryHistory
from koroku_tui.agent.loop.conversation import Conversation
from koroku_tui.agent.wire.body import WireForm, _json_ready
from koroku_tui.agent.wire.client import make_client
from koroku_tui.agent.wire.errors import AgentError
from koroku_tui.agent.wire.part_form import plain_part
from koroku_tui.events import SessionEvent

BASE_URL = "http://127.0.0.1:9"  # never reached: nothing is sent


FORMS = [WireForm(make_client(base_url=BASE_URL, api_key="k")), WireForm(vertex_client(BASE_URL))]


def sdk_json(form: WireForm, content: types.Content) -> str | None:
    """The SDK's wire form of ``content`` as JSON; None when the SDK refuses it."""
    convert = sdk_models._Content_to_vertex if form.vertex else sdk_models._Content_to_mldev
    try:
        return json.dumps(_json_ready(convert(content)), default=repr)
    except ValueError:
        return None


def koroku_json(form: WireForm, content: types.Content) -> str | None:
    try:
        return json.dumps(form.content(content), default=repr)
    except AgentError:
        return None


def assert_same_bytes(content: types.Content) -> None:
    for form in FORMS:
        assert koroku_json(form, content) == sdk_json(form, content), form.vertex


class Colour(enum.StrEnum):
    RED = "red"


# Values the SDK's copy does not pass through as they are.
odd_values = st.sampled_from(
    [
        b"\xfb\xff raw",
        [b"a", b"b"],
        [],
        [[b"x"]],
        (1, 2),
        Colour.RED,
        datetime.datetime(2026, 1, 2, 3, 4, 5),
        {1: "int key"},
        types.Blob(data=b"x", mime_type="image/png"),
        float("nan"),
    ]
)
odd_objects = st.dictionaries(st.text(max_size=4), odd_values | st.none(), min_size=1, max_size=3)


@st.composite
def odd_parts(draw: st.DrawFn) -> types.Part:
    """Calls and responses holding odd values, or fields the direct path leaves to the SDK."""
    choice = draw(st.integers(min_value=0, max_value=4))
    if choice == 0:
        return types.Part(function_call=types.FunctionCall(name="f", args=draw(odd_objects)))
    if choice == 1:
        response = types.FunctionResponse(id="c1", name="f", response=draw(odd_objects))
        return types.Part(function_response=response)
    if choice == 2:
        return types.Part(function_response=types.FunctionResponse(name="f", will_continue=True))
    if choice == 3:
        call = types.FunctionCall(name="f", partial_args=[types.PartialArg(json_path="$.a")])
        return types.Part(function_call=call)
    blob = types.Blob(data=b"\x89PNG", mime_type="image/png")
    return types.Part(text="both", inline_data=blob, thought=True)


@settings(max_examples=300, deadline=None)
@given(contents)
def test_every_part_kind_has_the_sdks_bytes(content: types.Content) -> None:
    assert_same_bytes(content)


@settings(max_examples=200, deadline=None)
@given(st.lists(odd_parts() | text_parts() | call_parts(), min_size=1, max_size=4))
def test_values_the_sdk_copies_its_own_way_have_its_bytes(parts: list[types.Part]) -> None:
    assert_same_bytes(types.Content(role="user", parts=parts))


def test_empty_and_roleless_contents_have_the_sdks_bytes() -> None:
    loose: Any = {"name": "f", "args": {"a": 1}}  # a dict, as model_construct leaves it
    unvalidated = types.Part.model_construct(function_call=loose)
    for content in (
        types.Content.model_construct(role="model", parts=[unvalidated]),
        types.Content(),
        types.Content(role="model", parts=[]),
        types.Content(parts=[types.Part()]),
        types.Content(role="user", parts=[types.Part(text="")]),
    ):
        assert_same_bytes(content)


@settings(max_examples=100, deadline=None)
@given(text_parts() | call_parts() | response_parts())
def test_text_calls_and_responses_take_the_direct_path(part: types.Part) -> None:
    """The parts a step of many calls is made of skip the SDK's field-by-field lookups."""
    assert plain_part(part) is not None


@pytest.mark.parametrize("depth", [50, 3_000])
def test_deep_arguments_have_the_sdks_bytes_or_its_refusal(depth: int) -> None:
    args: dict[str, Any] = {}
    node = args
    for _ in range(depth):
        node["a"] = {}
        node = node["a"]
    part = types.Part.model_construct(
        function_call=types.FunctionCall.model_construct(name="f", args=args)
    )
    content = types.Content.model_construct(role="model", parts=[part])
    for form in FORMS:
        try:
            expected: str | None = sdk_json(form, content)
        except RecursionError:
            expected = "RecursionError"
        try:
            got: str | None = koroku_json(form, content)
        except RecursionError:
            got = "RecursionError"
        assert got == expected


@settings(max_examples=20, deadline=None)
@given(st.lists(text_parts() | call_parts() | response_parts() | other_parts(), min_size=1))
def test_a_big_event_prepared_in_slices_has_the_sdks_bytes(kinds: list[types.Part]) -> None:
    """A thousand-call step is converted ``PREPARE_SLICE`` parts at a time, then joined."""
    content = types.Content(role="model", parts=[kinds[i % len(kinds)] for i in range(250)])
    for form in FORMS:
        conversation = Conversation(MemoryHistory([]), wire=form.content)
        conversation.events = [SessionEvent.from_content(content)]
        conversation.prepare(threading.Event())
        event = conversation.events[0]
        assert id(event) in conversation._wires or sdk_json(form, content) is None
        sdk = sdk_json(form, conversation.content_of(event))
        if sdk is not None:
            assert json.dumps(conversation.wire_of(event), default=repr) == sdk
