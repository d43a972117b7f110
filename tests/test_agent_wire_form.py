"""The agent sends bodies it built from wire forms; a part the backend refuses is one sentence."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.genai import types
from helpers.agent_kit import open_agent

from koroku_tui.agent.wire.errors import AgentError, ErrorKind
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.store import SessionManager


async def test_a_stored_part_the_gemini_api_refuses_is_told_in_one_sentence(
    fake: FakeGemini, tmp_path: Path
) -> None:
    # A call part only Vertex AI takes (e.g. a session carried over from Vertex).
    call = types.FunctionCall(name="read_file", args={}, will_continue=True)
    async with SessionManager(tmp_path / "koroku.db") as store:
        await store.add_message(
            SessionEvent.from_content(types.Content(role="user", parts=[types.Part(text="Hi")]))
        )
        await store.add_message(
            SessionEvent.from_content(
                types.Content(role="model", parts=[types.Part(function_call=call)])
            )
        )
    fake.add(text_reply("unused"))
    async with open_agent(fake, tmp_path) as agent:
        with pytest.raises(AgentError) as raised:
            await agent.run_turn("again")
    assert raised.value.kind is ErrorKind.BAD_REQUEST
    assert raised.value.user_message.startswith(
        "A stored message holds a part the Gemini API does not accept (will_continue"
    )
    assert raised.value.user_message.endswith("rewind to before it or start a new conversation.")
    assert fake.generate_requests == []
