"""History repair keeps every context acceptable to the API, without touching storage."""

from __future__ import annotations

from typing import Any

from google.genai import types
from helpers.events import user

from koroku_tui.agent.context.repair import (
    LOST_RESULT_ERROR,
    PLACEHOLDER_SIGNATURE,
    repair_history,
)
from koroku_tui.events import (
    CompactionEvent,
    Event,
    FunctionResponsePart,
    SessionEvent,
)

SIG = b"\xfb\xff-signature"


def model_calls(*calls: tuple[str, str | None], signed: bool = True) -> SessionEvent:
    parts = [
        types.Part(
            function_call=types.FunctionCall(id=call_id, name=name, args={}),
            thought_signature=SIG if signed and index == 0 else None,
        )
        for index, (name, call_id) in enumerate(calls)
    ]
    return SessionEvent.from_content(types.Content(role="model", parts=parts))


def responses(*answers: tuple[str, str | None, dict[str, Any]]) -> SessionEvent:
    parts = [
        types.Part(function_response=types.FunctionResponse(id=i, name=n, response=r))
        for n, i, r in answers
    ]
    return SessionEvent.from_content(types.Content(role="user", parts=parts))


def model_text(text: str) -> SessionEvent:
    return SessionEvent.from_content(
        types.Content(role="model", parts=[types.Part(text=text, thought_signature=SIG)])
    )


def answered(event: SessionEvent) -> list[tuple[str, str | None, dict[str, Any] | None]]:
    return [
        (p.function_response.name, p.function_response.id, p.function_response.response)
        for p in event.parts
        if isinstance(p, FunctionResponsePart)
    ]


def test_a_valid_history_passes_through_unchanged() -> None:
    events = [
        user("read a"),
        model_calls(("read_file", "c1")),
        responses(("read_file", "c1", {"output": "A"})),
        model_text("A says A."),
    ]
    repaired, report = repair_history(events)
    assert not report.changed
    assert all(a is b for a, b in zip(repaired, events, strict=True))


def test_unanswered_call_after_a_crash_gets_a_lost_result_error() -> None:
    events = [user("run it"), model_calls(("run_command", "c1"))]
    repaired, report = repair_history(events)
    assert report.lost_results == 1
    assert len(repaired) == 3
    last = repaired[2]
    assert isinstance(last, SessionEvent) and last.role == "user"
    assert answered(last) == [("run_command", "c1", {"error": LOST_RESULT_ERROR})]


def test_lost_result_goes_before_the_next_user_message() -> None:
    events = [user("run it"), model_calls(("run_command", "c1")), user("hello again")]
    repaired, _ = repair_history(events)
    kinds = [(e.role, bool(e.function_responses)) for e in repaired if isinstance(e, SessionEvent)]
    assert kinds == [("user", False), ("model", False), ("user", True), ("user", False)]


def test_responses_are_reordered_to_call_order_and_matched_by_id() -> None:
    events = [
        user("two"),
        model_calls(("read_file", "c1"), ("read_file", "c2")),
        responses(("read_file", "c2", {"output": "two"}), ("read_file", "c1", {"output": "one"})),
    ]
    repaired, _ = repair_history(events)
    fixed = repaired[2]
    assert isinstance(fixed, SessionEvent)
    assert answered(fixed) == [
        ("read_file", "c1", {"output": "one"}),
        ("read_file", "c2", {"output": "two"}),
    ]
    # The input events are not modified: storage stays as it was.
    original = events[2]
    assert isinstance(original, SessionEvent)
    assert [r[1] for r in answered(original)] == ["c2", "c1"]


def test_partial_answers_are_completed_and_extras_dropped() -> None:
    events = [
        user("go"),
        model_calls(("a", "c1"), ("b", "c2")),
        responses(("a", "c1", {"output": 1}), ("zzz", "c9", {"output": "orphan"})),
    ]
    repaired, report = repair_history(events)
    assert report.lost_results == 1 and report.orphan_responses == 1
    fixed = repaired[2]
    assert isinstance(fixed, SessionEvent)
    assert answered(fixed) == [
        ("a", "c1", {"output": 1}),
        ("b", "c2", {"error": LOST_RESULT_ERROR}),
    ]


def test_calls_without_ids_match_by_name_in_order() -> None:
    events = [
        user("go"),
        model_calls(("a", None), ("a", None)),
        responses(("a", None, {"output": 1}), ("a", None, {"output": 2})),
    ]
    repaired, report = repair_history(events)
    assert not report.changed
    assert repaired[2] is events[2]


def test_orphan_response_event_is_dropped() -> None:
    events = [user("hi"), responses(("a", "c1", {"output": 1})), model_text("hello")]
    repaired, report = repair_history(events)
    assert report.orphan_responses == 1
    assert len(repaired) == 2


def test_current_turn_calls_get_the_placeholder_signature_only_where_missing() -> None:
    events = [
        user("old turn"),
        model_calls(("a", "c0"), signed=False),
        responses(("a", "c0", {"output": 0})),
        model_text("done"),
        user("new turn"),
        model_calls(("a", "c1"), ("b", "c2"), signed=False),
        responses(("a", "c1", {"output": 1}), ("b", "c2", {"output": 2})),
        model_calls(("c", "c3")),
        responses(("c", "c3", {"output": 3})),
    ]
    repaired, report = repair_history(events)
    assert report.placeholder_signatures == 1
    old_step, new_step, signed_step = repaired[1], repaired[5], repaired[7]
    assert isinstance(old_step, SessionEvent)
    assert old_step.function_calls[0].thought_signature is None  # outside the current turn
    assert isinstance(new_step, SessionEvent)
    first, second = new_step.function_calls
    assert first.thought_signature == PLACEHOLDER_SIGNATURE
    assert second.thought_signature is None  # parallel calls: only the first is signed
    assert isinstance(signed_step, SessionEvent)
    assert signed_step.function_calls[0].thought_signature == SIG


def test_a_compaction_starts_the_turn_for_signature_purposes() -> None:
    events: list[Event] = [
        CompactionEvent.from_summary("before"),
        model_calls(("a", "c1"), signed=False),
    ]
    repaired, report = repair_history(events)
    assert report.placeholder_signatures == 1
    step = repaired[1]
    assert isinstance(step, SessionEvent)
    assert step.function_calls[0].thought_signature == PLACEHOLDER_SIGNATURE


def test_placeholder_is_the_decoded_wire_string() -> None:
    part = types.Part(
        function_call=types.FunctionCall(name="a", args={}),
        thought_signature=PLACEHOLDER_SIGNATURE,
    )
    wire = part.model_dump(mode="json", exclude_none=True)
    assert wire["thought_signature"] == "skip_thought_signature_validator"


def test_empty_events_are_dropped() -> None:
    empty = SessionEvent(role="model", parts=[])
    repaired, report = repair_history([user("hi"), empty, model_text("x")])
    assert report.empty_events == 1
    assert len(repaired) == 2


def test_an_empty_summary_is_dropped_not_sent() -> None:
    """A hand-edited compaction row with no parts would make every request a 400."""
    repaired, report = repair_history([CompactionEvent(), user("hi")])
    assert report.empty_events == 1
    assert repaired == [user("hi")]
