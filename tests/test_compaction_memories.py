"""Memories suggested at compaction: the same summary request proposes lasting facts.

The strict fake scripts a summary reply ending in a "Lasting facts:" section;
the facts wait as suggestions (never sent) until the user accepts one.
"""

from __future__ import annotations

from pathlib import Path

from helpers.agent_kit import open_agent, sent_instructions
from test_compaction import NOW, add_turns

from koroku_tui.agent.context.compaction import SummaryCompactor
from koroku_tui.agent.context.lasting_facts import split_reply
from koroku_tui.agent.wire.client import close_client, make_client
from koroku_tui.events import CompactionEvent
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.store import SessionManager

SUMMARY = "The user asked what notes.txt says; it says to buy milk."
REPLY = (
    f"{SUMMARY}\n\n**Lasting facts:**\n- The user is vegetarian.\n"
    "- The user has a cat named Miso.\n- The user is vegetarian."
)


async def test_the_summary_reply_s_lasting_facts_wait_as_suggestions_at_the_summary(
    fake: FakeGemini, store: SessionManager, tmp_path: Path
) -> None:
    await add_turns(store)
    fake.add(text_reply(REPLY))
    client = make_client(base_url=fake.base_url, api_key="test-key")
    try:
        compactor = SummaryCompactor(client, store, tmp_path / "memory", suggestions=store)
        result = await compactor.compact(await store.context_messages(), now=NOW)
    finally:
        await close_client(client)
    assert result is not None and result.suggested == 2
    [request] = fake.generate_requests  # one request for the summary and the facts
    assert "Lasting facts:" in request.body["systemInstruction"]["parts"][0]["text"]
    context = await store.load_messages()
    assert isinstance(context[0], CompactionEvent) and context[0].summary == SUMMARY
    assert (tmp_path / "memory" / "02-12-2026.md").read_text() == f"[14:05]: {SUMMARY}\n"
    suggested = await store.list_memories()
    assert [(m.text, m.state) for m in suggested] == [
        ("The user has a cat named Miso.", "suggestion"),
        ("The user is vegetarian.", "suggestion"),
    ]
    assert {(m.session_id, m.message_id) for m in suggested} == {
        (store.session_id, result.message_id)
    }
    assert (await store.memories_for_prompt("cat", 4_000)).memories == []


async def test_suggestions_reach_the_prompt_only_once_accepted(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(
        text_reply("It says to buy milk. " * 40),
        text_reply("The car needs oil."),
        text_reply(REPLY),  # the summary
        text_reply("Soup."),
        text_reply("Lentil soup."),
    )
    async with open_agent(fake, tmp_path, auto_compact=True, context_window=1_000_000) as agent:
        await agent.run_turn("What is in notes.txt? " + "please " * 100)
        await agent.run_turn("And the car?")
        assert await agent.compact() is not None
        await agent.run_turn("What should I cook?")
        store = agent.session_manager
        assert store is not None
        [_cat, vegetarian] = await store.list_memories()
        await store.accept_memory(vegetarian.id)
        await agent.run_turn("Something warmer?")
    said = sent_instructions(fake)
    assert "Lasting facts:" not in said[3]  # the chat's instruction is not the summariser's
    assert "vegetarian" not in said[3] and "Miso" not in said[3]
    assert f"[{vegetarian.id}] The user is vegetarian." in said[4]
    assert "Miso" not in said[4]  # still a suggestion


def test_a_reply_without_the_section_is_all_summary_and_none_proposes_nothing() -> None:
    assert split_reply("Just prose. Lasting facts about gardens matter.") == (
        "Just prose. Lasting facts about gardens matter.",
        [],
    )
    assert split_reply("Prose.\n\nLasting facts: none") == ("Prose.", [])
    assert split_reply("Prose.\n## Lasting facts\n1. Lives in Lyon.\n* - none") == (
        "Prose.",
        ["Lives in Lyon."],
    )
    many = "P.\nLasting facts:\n" + "\n".join(f"- fact {n}" for n in range(30))
    assert len(split_reply(many)[1]) == 10


def test_prose_after_the_heading_stays_in_the_summary() -> None:
    """A model that went on summarising after the heading: its paragraphs are not lost."""
    reply = (
        "The user plans a trip.\n\nLasting facts: The user lives in Lyon.\n- Likes tea.\n"
        "They still have to book the train.\n\nNext: compare fares.\n- none"
    )
    assert split_reply(reply) == (
        "The user plans a trip.\n\nThey still have to book the train.\n\nNext: compare fares.",
        ["The user lives in Lyon.", "Likes tea."],
    )
