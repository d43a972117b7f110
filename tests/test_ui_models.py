"""The palette's "Change model…" (issue 24, section 1): the API's models with their windows,
the session switched from its next turn on, its gauge following, a restart keeping it.

The real app under Pilot against a fake Gemini that knows a few models, one
of them an embedding model (listed by the API, not offered: it cannot
generate), and the real SDK's ``models.list``.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, plain, run_command, send, settle, wait_until
from textual.pilot import Pilot
from textual.widgets import OptionList

from koroku_tui.agent import AgentConfig
from koroku_tui.agent.model_choices import CACHE_FILENAME
from koroku_tui.agent.wire.client import close_client, make_client
from koroku_tui.config.settings import DEFAULT_MODEL, Settings
from koroku_tui.fake_gemini import FakeGemini, ModelInfo, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.model_picker import ModelPicker
from koroku_tui.ui.main.screen import MainScreen

MODELS = {
    DEFAULT_MODEL: ModelInfo(input_token_limit=1_048_576, display_name="Gemini 3 Flash Preview"),
    "gemini-small": ModelInfo(input_token_limit=32_768, display_name="Small"),
    "gemini-embedding-001": ModelInfo(input_token_limit=2048, methods=("embedContent",)),
}


@pytest.fixture
def gemini() -> Iterator[FakeGemini]:
    """A fake Gemini that knows ``MODELS`` (and nothing else)."""
    with FakeGemini(models=MODELS) as server:
        yield server


def app_on(home: Path, client: genai.Client, **values: str) -> KorokuApp:
    """The app on ``home``; its window is Gemini's for the model (``models.get``)."""
    settings = Settings(home=home, **values)
    config = AgentConfig(memory_dir=settings.memory_dir)  # no window of its own
    return build(home, client, settings=settings, config=config)


async def picker(pilot: Pilot[None], app: KorokuApp) -> OptionList:
    """The list of models, once loaded."""
    await run_command(pilot, app, "change model", "Change model…")
    await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), "the model list")
    listed = app.screen.query_one(OptionList)
    await wait_until(pilot, lambda: listed.option_count > 0, "the models listed")
    return listed


async def choose(pilot: Pilot[None], app: KorokuApp, listed: OptionList, name: str) -> None:
    listed.highlighted = next(
        i for i in range(listed.option_count) if listed.get_option_at_index(i).id == name
    )
    await pilot.press("enter")
    await settle(pilot, app)


def lines(listed: OptionList) -> list[str]:
    return [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]


async def test_choosing_a_model_switches_the_session_and_a_restart_keeps_it(
    gemini: FakeGemini, tmp_path: Path
) -> None:
    client = make_client(base_url=gemini.base_url, api_key="test-key")
    gemini.add(text_reply("small answer"), text_reply("still small"))
    app = app_on(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        assert app.sub_title == DEFAULT_MODEL
        listed = await picker(pilot, app)
        assert lines(listed) == [
            f"{DEFAULT_MODEL} · 1,048,576 tokens · Gemini 3 Flash Preview (in use)",
            "gemini-small · 32,768 tokens · Small",
        ]  # the embedding model cannot generate: not offered
        assert "The models Gemini offers for this key" in plain(app.screen)
        await choose(pilot, app, listed, "gemini-small")
        assert isinstance(app.screen, MainScreen)
        assert app.sub_title == "gemini-small"
        assert "/ 32,768 tokens" in plain(app.screen.query_one(ContextGauge))  # its window
        said = app._notifications  # the last one: what the choice did
        assert [n.message for n in said][-1] == (
            "This session now uses gemini-small (32,768-token window), from your next message."
        )
        await send(pilot, app, "hello")
        await settle(pilot, app)
        assert gemini.generate_requests[-1].model == "gemini-small"
        await picker(pilot, app)  # asked once: the list is cached in the home
        await pilot.press("escape")
        await settle(pilot, app)
    listings = [r for r in gemini.requests if r.action == "list"]
    assert len(listings) == 1
    assert stat.S_IMODE((tmp_path / CACHE_FILENAME).stat().st_mode) == 0o600

    again = app_on(tmp_path, client)  # a restart on the same home
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert again.sub_title == "gemini-small"
        assert "/ 32,768 tokens" in plain(again.screen.query_one(ContextGauge))
        await send(pilot, again, "and now?")
        await settle(pilot, again)
    assert gemini.generate_requests[-1].model == "gemini-small"
    await close_client(client)


async def test_without_the_api_the_configured_models_are_offered(tmp_path: Path) -> None:
    client = make_client(base_url="http://127.0.0.1:9", api_key="test-key")  # nothing listens
    app = app_on(tmp_path, client, model="gemini-configured")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        listed = await picker(pilot, app)
        assert lines(listed) == [
            "gemini-configured · window not known (in use)",
            f"{DEFAULT_MODEL} · window not known",
        ]
        assert "The configured models; their windows are not known (the API could not be " in (
            plain(app.screen)
        )
        await choose(pilot, app, listed, DEFAULT_MODEL)
        assert app.sub_title == DEFAULT_MODEL
        assert app.store is not None
        assert (await app.store.current_session()).model == DEFAULT_MODEL
    await close_client(client)
