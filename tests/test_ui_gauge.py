"""The context gauge in the real app: the compaction trigger's figure, and its warning states."""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, plain, send, settle

from koroku_tui.agent import AgentConfig
from koroku_tui.agent.context.budget import BudgetPolicy
from koroku_tui.fake_gemini import FakeGemini, Usage, text_reply
from koroku_tui.ui.main.gauge import ContextGauge

pytestmark = pytest.mark.timeout(60)

STATES = ("-warn", "-critical")


def small_window(tmp_path: Path) -> AgentConfig:
    """A 10,000-token window compacting at 8,000 tokens, so a reply can fill it."""
    return AgentConfig(
        memory_dir=tmp_path / "memory",
        context_window=10_000,
        budget=BudgetPolicy(threshold_share=0.8, event_limit=None),
        auto_compact=False,
    )


@pytest.mark.parametrize(
    ("prompt_tokens", "headline", "state"),
    [
        # 2,010 of the 8,000-token threshold: 74.875% left, shown rounded up.
        (2_000, "75% context remaining", None),
        # 6,010 of 8,000: 24.875% left, under the 30% warning mark.
        (6_000, "25% context remaining", "-warn"),
        # 7,510 of 8,000: 6.125% left, under the 10% critical mark.
        (7_500, "7% context remaining", "-critical"),
        # At the threshold: compaction is due, and the gauge says 0.
        (7_990, "0% context remaining", "-critical"),
    ],
)
async def test_the_gauge_shows_the_context_remaining_and_its_state(
    fake: FakeGemini,
    client: genai.Client,
    tmp_path: Path,
    prompt_tokens: int,
    headline: str,
    state: str | None,
) -> None:
    fake.add(text_reply("Noted.", usage=Usage(prompt_tokens=prompt_tokens, candidates_tokens=10)))
    app = build(tmp_path, client, config=small_window(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        gauge = app.query_one(ContextGauge)
        calm_colour = gauge.styles.color
        assert not any(gauge.has_class(name) for name in STATES)
        await send(pilot, app, "fill it")
        await settle(pilot, app)
        text = plain(gauge)
        assert text.startswith(headline + " · "), text
        assert app.agent is not None
        # One number: the gauge's headline is the trigger's own figure.
        assert f"{app.agent.budget.context_remaining_percent}% context remaining" in text
        assert app.agent.budget.should_summarise == headline.startswith("0%")
        assert f"{prompt_tokens + 10:,} / 10,000 tokens" in text
        assert [name for name in STATES if gauge.has_class(name)] == ([state] if state else [])
        if state is not None:
            assert gauge.styles.color != calm_colour  # the class is styled, not just set

        await pilot.press("ctrl+l")  # a fresh session: the gauge calms down again
        await settle(pilot, app)
        assert not any(gauge.has_class(name) for name in STATES)
