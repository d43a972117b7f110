"""Each compaction says what became of it in exactly one notice (issue 12, item 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import build, send, settle
from textual.pilot import Pilot

from koroku_tui.agent import AgentConfig
from koroku_tui.agent.context.budget import BudgetPolicy
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.blocks import CompactionBlock

LONG = "A long answer about the weather. " * 40


def recorded(app: KorokuApp) -> list[str]:
    """Every notice the app shows from now on, in order."""
    notices: list[str] = []
    notify = app.notify

    def record(message: str, **kwargs: Any) -> None:
        notices.append(message)
        notify(message, **kwargs)

    app.notify = record  # type: ignore[method-assign]
    return notices


async def turns(pilot: Pilot[None], app: KorokuApp, *texts: str) -> None:
    await settle(pilot, app)
    for text in texts:
        await send(pilot, app, text)
        await settle(pilot, app)


async def test_success_says_what_it_did_once(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply(LONG * 10), text_reply("Hi again."), text_reply("Said hello twice."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await turns(pilot, app, "hello", "hello again")
        notices = recorded(app)
        await pilot.press("ctrl+o")
        await settle(pilot, app)
        assert len(app.query(CompactionBlock)) == 1
        assert len(notices) == 1, notices
        # user + model of the first turn went into the summary; the tokens fell.
        assert notices[0].startswith("Older turns summarised: 2 messages into one summary")
        before, after = notices[0].split("context ")[1].removesuffix(" tokens.").split(" → ")
        assert int(after.strip("~").replace(",", "")) < int(before.strip("~").replace(",", ""))


@pytest.mark.parametrize(
    ("replies", "said", "notice"),
    [
        (["Hi."], ["hello"], "Nothing to summarise yet"),
        # The case: a summary longer than the turns it would replace.
        (["Hi.", "Hi again.", LONG], ["hello", "hello again"], "Compaction skipped"),
    ],
    ids=["nothing to summarise", "rejected summary"],
)
async def test_a_compaction_that_changes_nothing_is_one_notice(
    fake: FakeGemini,
    client: genai.Client,
    tmp_path: Path,
    replies: list[str],
    said: list[str],
    notice: str,
) -> None:
    fake.add(*(text_reply(text) for text in replies))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await turns(pilot, app, *said)
        notices = recorded(app)
        await pilot.press("ctrl+o")
        await settle(pilot, app)
        assert len(notices) == 1, notices
        assert notices[0].startswith(notice)
        assert len(app.query(CompactionBlock)) == 0


async def test_automatic_compaction_in_a_turn_is_one_notice(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    config = AgentConfig(
        memory_dir=tmp_path / "memory",
        context_window=1_000_000,
        budget=BudgetPolicy(event_limit=3),
    )
    # Turn 2 stores the third event: the summary request comes before its answer.
    fake.add(text_reply(LONG), text_reply("Said hello."), text_reply("Hello again."))
    app = build(tmp_path, client, config=config)
    async with app.run_test(size=(120, 40)) as pilot:
        await turns(pilot, app, "hello")
        notices = recorded(app)
        await turns(pilot, app, "hello again")
        assert len(app.query(CompactionBlock)) == 1
        assert len(notices) == 1, notices
        assert notices[0].startswith("Older turns summarised: 2 messages into one summary")
        assert fake.pending == 0
