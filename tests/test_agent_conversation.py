"""The agent's shortcuts give exactly what the full computations give.

``Conversation.request_contents`` reuses the repaired part before the current
turn and ``Conversation.budget`` reads the context from its end; both are
checked against ``repair_history`` and ``context_budget`` over many random
histories, damaged ones included, as they grow event by event.
"""

from __future__ import annotations

import random

import pytest
from google.genai import types
from helpers.events import user

from koroku_tui.agent.context.budget import BudgetPolicy, context_budget
from koroku_tui.agent.context.history import MemoryHistory
from koroku_tui.agent.context.repair import repair_history
from koroku_tui.agent.loop.conversation import Conversation
from koroku_tui.events import CompactionEvent, Event, SessionEvent, TokenUsage

POLICY = BudgetPolicy(window=10_000, event_limit=50)


def model_text(rng: random.Random, text: str) -> SessionEvent:
    usage = TokenUsage(prompt_token_count=rng.randint(10, 900), candidates_token_count=7)
    content = types.Content(role="model", parts=[types.Part(text=text)])
    return SessionEvent.from_content(content, usage=usage if rng.random() < 0.7 else None)


def model_calls(rng: random.Random, step: int) -> SessionEvent:
    parts = []
    for index in range(rng.randint(1, 3)):
        call = types.FunctionCall(
            id=f"c{step}-{index}" if rng.random() < 0.8 else None,
            name=rng.choice(["read_file", "run_command"]),
            args={"n": index},
        )
        signed = index == 0 and rng.random() < 0.6
        parts.append(types.Part(function_call=call, thought_signature=b"sig" if signed else None))
    usage = TokenUsage(prompt_token_count=rng.randint(10, 900)) if rng.random() < 0.5 else None
    return SessionEvent.from_content(types.Content(role="model", parts=parts), usage=usage)


def responses_to(rng: random.Random, calls: SessionEvent) -> SessionEvent:
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                id=c.function_call.id, name=c.function_call.name, response={"output": "ok"}
            )
        )
        for c in calls.function_calls
        if rng.random() < 0.85  # now and then a result is lost
    ]
    if not parts or rng.random() < 0.05:  # an orphan
        orphan = types.FunctionResponse(id="nobody", name="ghost", response={"output": "?"})
        parts.append(types.Part(function_response=orphan))
    return SessionEvent.from_content(types.Content(role="user", parts=parts))


def random_history(seed: int) -> list[Event]:
    rng = random.Random(seed)
    events: list[Event] = []
    if rng.random() < 0.3:
        summary = CompactionEvent.from_summary("earlier", kept_from_id=None)
        events.append(summary.model_copy(update={"kept_events": rng.randint(0, 4)}))
    for step in range(rng.randint(5, 40)):
        roll = rng.random()
        last = events[-1] if events else None
        open_calls = isinstance(last, SessionEvent) and bool(last.function_calls)
        if open_calls and roll < 0.85:
            assert isinstance(last, SessionEvent)
            events.append(responses_to(rng, last))
            continue
        if roll < 0.3:
            events.append(user(f"question {step}"))
        elif roll < 0.35:
            events.append(SessionEvent(role="user", parts=[]))  # damaged: empty
        elif roll < 0.6:
            events.append(model_text(rng, f"answer {step}"))
        else:
            events.append(model_calls(rng, step))
    return events


def dumped(contents: list[types.Content]) -> list[dict[str, object]]:
    return [c.model_dump(exclude_none=True) for c in contents]


@pytest.mark.parametrize("seed", range(60))
def test_incremental_repair_and_budget_match_the_full_ones(seed: int) -> None:
    events = random_history(seed)
    conversation = Conversation(MemoryHistory())
    for end in range(1, len(events) + 1):
        conversation.events = events[:end]  # grows by appending, as in a session
        expected, _ = repair_history(events[:end])
        got = conversation.request_contents()
        assert dumped(got) == dumped([e.to_content() for e in expected]), end
        assert conversation.budget(POLICY) == context_budget(events[:end], POLICY), end


def test_a_different_context_is_repaired_afresh() -> None:
    first, second = random_history(1), random_history(2)
    conversation = Conversation(MemoryHistory())
    conversation.events = first
    conversation.request_contents()
    conversation.events = second  # e.g. a session switch, or a compaction
    expected, _ = repair_history(second)
    assert dumped(conversation.request_contents()) == dumped([e.to_content() for e in expected])
