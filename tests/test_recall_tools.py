"""Total recall: search_history and read_session, alone and in a real ``--print`` turn.

Real SQLite in ``tmp_path`` through the real ``SessionManager``; the ``--print``
turn runs the installed command against the fake Gemini server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from helpers.events import model, user
from test_headless import run

from koroku_tui import recall
from koroku_tui.agent.tools import ToolRegistry, ToolResult, ToolSettings, default_registry
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.store import SessionManager

PLANTED = "The staging backup server listens on port 7412; we agreed to keep it there."


async def plant_four_sessions(db: Path) -> dict[str, int]:
    """Four earlier sessions; the second holds the planted fact. Returns the ids that matter."""
    store = SessionManager(db)
    await store.initialize()
    try:
        await store.add_message(user("Plan a trip to Kyoto in spring"))
        await store.add_message(model("Go in early April for the cherry blossoms."))
        second = await store.new_session()
        await store.add_message(user("Which port should the staging backup server use?"))
        fact = await store.add_message(model(PLANTED))
        await store.new_session()
        await store.add_message(user("Tidy up my shell aliases"))
        await store.add_message(model("Done: grouped by tool."))
        await store.new_session()
        await store.add_message(user("What is a good name for a cat?"))
        await store.add_message(model("Mochi."))
    finally:
        await store.close()
    return {"session": second.id, "fact": fact}


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SessionManager]:
    manager = SessionManager(tmp_path / "koroku.db")
    await manager.initialize()
    yield manager
    await manager.close()


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()


async def call(
    registry: ToolRegistry, settings: ToolSettings, name: str, **args: Any
) -> ToolResult:
    return await registry.execute(types.FunctionCall(id="c1", name=name, args=args), settings)


def function_responses(fake: FakeGemini, index: int) -> list[dict[str, Any]]:
    """The function responses the model received in the ``index``-th generate request."""
    contents = fake.generate_requests[index].contents
    return [
        part["functionResponse"]
        for content in contents
        for part in content.get("parts", [])
        if "functionResponse" in part
    ]


# --- the done-when scenario ---------------------------------------------------


def test_print_turn_searches_reads_and_answers_from_three_sessions_back(
    fake: FakeGemini, tmp_path: Path
) -> None:

    ids = asyncio.run(plant_four_sessions(tmp_path / "koroku.db"))
    session, fact = ids["session"], ids["fact"]
    fake.add(
        call_reply(("search_history", {"query": "staging backup port"})),
        call_reply(("read_session", {"session_id": session, "around_message_id": fact})),
        text_reply(f"Port 7412, as decided in session {session}."),
    )
    done = run(fake, tmp_path, "--new", "--print", "Which port did we pick for staging backups?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Port 7412, as decided in session {session}.\n"

    declared = fake.generate_requests[0].body["tools"][0]["functionDeclarations"]
    assert {"search_history", "read_session", "read_memory"} <= {d["name"] for d in declared}
    # The search's answer reached the model: the hit names its session and message.
    searched = function_responses(fake, 1)[-1]
    assert searched["name"] == "search_history"
    found = searched["response"]["output"]
    assert recall.matches_in(found) is not None and recall.matches_in(found) >= 1
    assert f'session {session} "Which port should the staging backup server use?"' in found
    assert f"message {fact}" in found
    assert f"{recall.MARK_START}backup{recall.MARK_END}" in found
    # Then the session three back, read around the hit, with the planted fact in it.
    read = function_responses(fake, 2)[-1]
    assert read["name"] == "read_session"
    text = read["response"]["output"]
    assert text.startswith(f'session {session} "Which port should')
    assert f"#{fact} model" in text and PLANTED in text
    assert "Kyoto" not in text and "Mochi" not in text
    # The new session (the fifth) is three sessions after the one answered from.
    assert session == 2
