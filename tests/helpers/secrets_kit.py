"""The live key the secret tests plant, and an agent that authenticates with it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from helpers.agent_kit import fast_config

from koroku_tui.agent import Agent
from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.wire.client import close_client, make_client
from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.store import SessionManager

LIVE_KEY = "AIzaSyD-live-key-for-the-tests-0123456789"
"""Long enough to be redacted (values under 8 characters are not)."""


@asynccontextmanager
async def agent_with_live_key(
    fake: FakeGemini, tmp_path: Path, **config: Any
) -> AsyncIterator[Agent]:
    """An agent whose client authenticates with LIVE_KEY (the fake insists on it)."""
    fake.api_key = LIVE_KEY
    client = make_client(base_url=fake.base_url, api_key=LIVE_KEY)
    agent = Agent(
        session_manager=SessionManager(tmp_path / "koroku.db"),
        client=client,
        tool_settings=ToolSettings(workspace=tmp_path, auto_approve=True),
        config=fast_config(tmp_path, **config),
    )
    try:
        await agent.initialize()
        yield agent
    finally:
        await agent.close()
        await close_client(client)


def database_bytes(folder: Path) -> bytes:
    """The database file and its WAL, raw: the key must be in neither."""
    return b"".join(p.read_bytes() for p in folder.glob("koroku.db*"))
