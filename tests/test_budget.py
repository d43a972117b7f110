"""The context budget: the one set of numbers behind the trigger and the gauge."""

from __future__ import annotations

import logging

import pytest
from google.genai import types
from helpers.events import user

from koroku_tui.agent.context.budget import BudgetPolicy, context_budget, should_summarise
from koroku_tui.events import CompactionEvent, Event, SessionEvent, TokenUsage


def reply(text: str, prompt_tokens: int, reply_tokens: int = 10) -> SessionEvent:
    usage = TokenUsage(prompt_token_count=prompt_tokens, candidates_token_count=reply_tokens)
    content = types.Content(role="model", parts=[types.Part(text=text)])
    return SessionEvent.from_content(content, usage=usage)


def test_measured_usage_plus_an_estimate_of_what_followed() -> None:
    events = [user("hi"), reply("hello", prompt_tokens=1_000), user("x" * 400)]
    budget = context_budget(events, BudgetPolicy(window=10_000))
    assert budget.tokens_used == 1_000 + 10 + 400 // 4 + 4
    assert not budget.estimated
    assert abs(budget.remaining_share - (1 - budget.tokens_used / 10_000)) < 1e-9


def test_threshold_on_tokens_and_the_gauge_agree() -> None:
    policy = BudgetPolicy(window=10_000, threshold_share=0.5, event_limit=None)
    below = [user("a"), reply("b", prompt_tokens=4_000)]
    above = [user("a"), reply("b", prompt_tokens=5_000)]
    assert not should_summarise(below, policy)
    assert should_summarise(above, policy)
    assert context_budget(above, policy).threshold_share_used == 1.0


def test_event_limit_triggers_whichever_comes_first() -> None:
    policy = BudgetPolicy(window=1_000_000, event_limit=4)
    events = [user("a"), reply("b", 10), user("c"), reply("d", 20)]
    assert should_summarise(events, policy)
    assert not should_summarise(events[:3], policy)


def test_after_a_compaction_the_old_usage_is_not_trusted() -> None:
    kept = [user("latest request"), reply("answer", prompt_tokens=900_000)]
    compaction = CompactionEvent.from_summary("summary", kept_from_id=7, kept_events=len(kept))
    budget = context_budget([compaction, *kept], BudgetPolicy(window=1_048_576))
    assert budget.estimated
    assert budget.tokens_used < 5_000
    fresh: list[Event] = [compaction, *kept, user("next"), reply("ok", prompt_tokens=3_000)]
    measured = context_budget(fresh, BudgetPolicy(window=1_048_576))
    assert not measured.estimated
    assert measured.tokens_used == 3_010


def test_should_summarise_logs_the_context_remaining_against_the_threshold(
    caplog: pytest.LogCaptureFixture,
) -> None:
    policy = BudgetPolicy(window=10_000, threshold_share=0.5, event_limit=None)
    caplog.set_level(logging.INFO, logger="koroku_tui.agent.context.budget")
    # 2,500 of a 5,000-token threshold: half the room before compaction is left.
    assert not should_summarise([user("a"), reply("b", prompt_tokens=2_490)], policy)
    assert should_summarise([user("a"), reply("b", prompt_tokens=5_000)], policy)
    assert [r.getMessage() for r in caplog.records] == [
        "50% context remaining",
        "0% context remaining",
    ]


def test_the_percent_reaches_zero_only_when_compaction_is_due() -> None:
    policy = BudgetPolicy(window=10_000, threshold_share=0.5, event_limit=None)
    almost = context_budget([user("a"), reply("b", prompt_tokens=4_989)], policy)
    assert (almost.context_remaining_percent, almost.should_summarise) == (1, False)
    due = context_budget([user("a"), reply("b", prompt_tokens=4_990)], policy)
    assert (due.context_remaining_percent, due.should_summarise) == (0, True)
    empty = context_budget([], BudgetPolicy(window=10_000_000))
    assert empty.context_remaining_percent == 100
