"""Streamed chunks fold into one Content, signatures intact."""

from __future__ import annotations

from google.genai import types

from koroku_tui.agent.wire.streaming import StreamAccumulator


def chunk(*parts: types.Part, finish: bool = False) -> types.GenerateContentResponse:
    return types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(role="model", parts=list(parts)),
                finish_reason=types.FinishReason.STOP if finish else None,
            )
        ]
    )


def test_plain_text_is_joined_and_the_empty_signed_part_is_kept() -> None:
    acc = StreamAccumulator()
    acc.add(chunk(types.Part(text="Hel")))
    acc.add(chunk(types.Part(text="lo")))
    acc.add(chunk(types.Part(text="", thought_signature=b"\xfb\xff"), finish=True))
    assert acc.complete
    assert acc.content().parts == [
        types.Part(text="Hello"),
        types.Part(text="", thought_signature=b"\xfb\xff"),
    ]


def test_signed_parts_are_never_merged() -> None:
    acc = StreamAccumulator()
    acc.add(chunk(types.Part(text="a", thought_signature=b"1")))
    acc.add(chunk(types.Part(text="b", thought_signature=b"2")))
    acc.add(chunk(types.Part(text="c")))
    acc.add(chunk(types.Part(text="d")))
    parts = acc.content().parts
    assert parts is not None
    texts = [(p.text, p.thought_signature) for p in parts]
    assert texts == [("a", b"1"), ("b", b"2"), ("cd", None)]


def test_thoughts_and_answers_stay_apart_and_calls_are_kept_whole() -> None:
    acc = StreamAccumulator()
    acc.add(chunk(types.Part(text="think", thought=True)))
    acc.add(chunk(types.Part(text="ing", thought=True)))
    acc.add(chunk(types.Part(text="Answer")))
    call = types.Part(
        function_call=types.FunctionCall(id="c1", name="read_file", args={"path": "a"}),
        thought_signature=b"s",
    )
    acc.add(chunk(call, finish=True))
    assert acc.content().parts == [
        types.Part(text="thinking", thought=True),
        types.Part(text="Answer"),
        call,
    ]


def test_a_cut_stream_keeps_what_arrived() -> None:
    acc = StreamAccumulator()
    acc.add(chunk(types.Part(text="partial ")))
    acc.add(chunk(types.Part(text="answer")))
    assert not acc.complete
    assert acc.content().parts == [types.Part(text="partial answer")]


def test_a_lone_surrogate_from_the_wire_becomes_a_replacement_character() -> None:
    """JSON may carry "\\ud800"; stored as is it would break this turn and every later one."""
    acc = StreamAccumulator()
    call = types.FunctionCall(name="run_command", args={"command": "echo \ud800", "n": ["\udfff"]})
    acc.add(chunk(types.Part(text="half a pair: \ud83d"), types.Part(function_call=call)))
    content = acc.content()
    content.model_dump_json()  # encodable: what the store and the next request do
    assert content.parts is not None
    assert content.parts[0].text == "half a pair: \ufffd"
    assert content.parts[1].function_call is not None
    assert content.parts[1].function_call.args == {"command": "echo \ufffd", "n": ["\ufffd"]}
