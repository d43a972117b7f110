"""History repair: make a stored context acceptable to the Gemini API.

A crash, a cancel or a hand edit can leave a history the API rejects for
every later request: a function call without its response, a response
without its call, a model step whose first call lost its thought signature.
``repair_history`` is a pure function run over the context before each
request. It returns new events where a fix was needed and passes the rest
through untouched; the database is never rewritten.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass

from koroku_tui.events import (
    Event,
    EventPart,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
)
from koroku_tui.events.turns import current_turn_opener

#: Documented wire placeholder for a call whose real signature is gone. It is
#: the base64 *text* on the wire, so the bytes are its decoding.
PLACEHOLDER_SIGNATURE = base64.urlsafe_b64decode("skip_thought_signature_validator")
PLACEHOLDER_SIGNATURE_B64 = base64.b64encode(PLACEHOLDER_SIGNATURE).decode("ascii")

LOST_RESULT_ERROR = (
    "The result of this tool call was lost: Koroku stopped before the call finished. "
    "It may or may not have run; check before repeating it."
)


@dataclass
class RepairReport:
    """What ``repair_history`` changed, so callers can log or show it."""

    lost_results: int = 0
    orphan_responses: int = 0
    placeholder_signatures: int = 0
    empty_events: int = 0

    @property
    def changed(self) -> bool:
        return bool(
            self.lost_results
            or self.orphan_responses
            or self.placeholder_signatures
            or self.empty_events
        )


def _is_response_event(event: Event) -> bool:
    return (
        isinstance(event, SessionEvent) and event.role == "user" and bool(event.function_responses)
    )


def _lost_response(call: FunctionCallPart) -> FunctionResponsePart:
    return FunctionResponsePart(
        function_response=FunctionResponseData(
            name=call.function_call.name,
            id=call.function_call.id,
            response={"error": LOST_RESULT_ERROR},
        )
    )


def _match_responses(
    calls: list[FunctionCallPart],
    responses: list[FunctionResponsePart],
    report: RepairReport,
) -> list[FunctionResponsePart]:
    """One response per call, in call order: by id where the call has one, else by name."""
    unused = list(responses)
    answered: list[FunctionResponsePart] = []
    for call in calls:
        call_id, name = call.function_call.id, call.function_call.name
        match = next(
            (r for r in unused if call_id is not None and r.function_response.id == call_id),
            None,
        )
        if match is None:
            match = next(
                (
                    r
                    for r in unused
                    if r.function_response.name == name
                    and (r.function_response.id is None or call_id is None)
                ),
                None,
            )
        if match is None:
            report.lost_results += 1
            answered.append(_lost_response(call))
        else:
            unused.remove(match)
            answered.append(match)
    report.orphan_responses += len(unused)
    return answered


def _answer_calls(
    model_event: SessionEvent, follower: Event | None, report: RepairReport
) -> tuple[SessionEvent, bool]:
    """The user event answering ``model_event``; True when it replaces ``follower``."""
    calls = model_event.function_calls
    if follower is not None and _is_response_event(follower):
        assert isinstance(follower, SessionEvent)
        responses = follower.function_responses
        answered = _match_responses(calls, responses, report)
        others = [p for p in follower.parts if not isinstance(p, FunctionResponsePart)]
        if answered == responses:
            return follower, True
        parts: list[EventPart] = [*answered, *others]
        return follower.model_copy(update={"parts": parts}), True
    report.lost_results += len(calls)
    lost: list[EventPart] = [_lost_response(c) for c in calls]
    return SessionEvent(role="user", parts=lost), False


def _with_placeholder_signature(event: SessionEvent) -> SessionEvent:
    parts = list(event.parts)
    for index, part in enumerate(parts):
        if isinstance(part, FunctionCallPart):
            parts[index] = part.model_copy(
                update={"thought_signature_b64": PLACEHOLDER_SIGNATURE_B64}
            )
            break
    return event.model_copy(update={"parts": parts})


def _sign_current_turn(events: list[Event], report: RepairReport) -> None:
    """Give the first call of each model step after the last user turn a signature."""
    opener = current_turn_opener(events)
    start = 0 if opener is None else opener + 1
    for index in range(start, len(events)):
        event = events[index]
        if not isinstance(event, SessionEvent) or event.role != "model":
            continue
        calls = event.function_calls
        if calls and calls[0].thought_signature_b64 is None:
            events[index] = _with_placeholder_signature(event)
            report.placeholder_signatures += 1


def repair_history(
    events: Sequence[Event],
) -> tuple[list[Event], RepairReport]:
    """Return a context the API accepts, and what had to change.

    * every function call of a model event is answered, in call order, by
      exactly one response in the user event right after it (matched by id
      where present); a missing response becomes an error response saying the
      result was lost;
    * a response that answers no call is dropped, and so is an event (or a
      summary) left with no parts (the API rejects empty contents);
    * in the current turn, the first call of each model step carries a
      thought signature (the documented placeholder when the original is gone).
    """
    report = RepairReport()
    repaired: list[Event] = []
    index = 0
    while index < len(events):
        event = events[index]
        index += 1
        if not event.parts:  # a summary too: a hand-edited row must not make every request fail
            report.empty_events += 1
            continue
        if isinstance(event, SessionEvent) and event.role == "model" and event.function_calls:
            follower = events[index] if index < len(events) else None
            answer, replaces_follower = _answer_calls(event, follower, report)
            repaired.extend((event, answer))
            if replaces_follower:
                index += 1
            continue
        if _is_response_event(event):
            # Reaching a response event here means no call precedes it.
            assert isinstance(event, SessionEvent)
            report.orphan_responses += len(event.function_responses)
            kept = [p for p in event.parts if not isinstance(p, FunctionResponsePart)]
            if not kept:
                continue
            event = event.model_copy(update={"parts": kept})
        repaired.append(event)
    _sign_current_turn(repaired, report)
    return repaired, report
