"""A turn's error is stored as a row the model never sees, unless writing is not the agent's."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from helpers.agent_kit import open_agent

from koroku_tui.agent import AgentError, ErrorKind, ErrorNotice
from koroku_tui.fake_gemini import FakeGemini, error_reply, text_reply
from koroku_tui.store import SessionManager


async def test_the_error_row_is_stored_and_the_model_never_sees_it(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(error_reply(400, "Request contains an invalid argument."), text_reply("Hi."))
    async with open_agent(fake, tmp_path) as agent:
        with pytest.raises(AgentError) as failed:
            await agent.run_turn("hello")
        assert failed.value.kind is ErrorKind.BAD_REQUEST
        assert await agent.run_turn("hello again") == "Hi."
        sent = fake.generate_requests[-1].contents
        assert [c["role"] for c in sent] == ["user", "user"]  # no error in between
        assert agent.session_manager is not None
        rows = await agent.session_manager.load_all()
    [error_row] = [row for row in rows if row.kind == "error"]
    assert error_row.turn_error is not None
    assert error_row.turn_error.message == failed.value.user_message
    assert error_row.turn_error.kind == "bad_request"


async def test_no_error_row_while_another_process_holds_the_session(
    fake: FakeGemini, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Another Koroku took the session as the turn failed: nothing is written, it is logged."""
    fake.add(error_reply(400, "Request contains an invalid argument."))
    async with (
        SessionManager(tmp_path / "koroku.db") as other,
        open_agent(fake, tmp_path) as agent,
    ):
        store = agent.session_manager
        assert store is not None

        async def other_takes_the_session(notice: ErrorNotice) -> None:
            # The session exists from its first message: the turn's stored it.
            await other.switch_session(store.session_id)
            await other.begin_turn()

        agent.on("on_error", other_takes_the_session)
        with caplog.at_level(logging.WARNING), pytest.raises(AgentError) as failed:
            await agent.run_turn("hello")
        # The turn's own sentence, not the store's refusal.
        assert failed.value.kind is ErrorKind.BAD_REQUEST
        assert "could not store the turn's error" in caplog.text
        await other.end_turn()
        assert agent.session_manager is not None
        rows = await agent.session_manager.load_all()
    assert [row.kind for row in rows] == ["session"]
