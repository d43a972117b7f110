"""The seed design's surface: ``Agent()`` remembers, ``delete()`` clears, the seed's names."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.events import user

from koroku_tui import Agent
from koroku_tui.agent import AgentError, ErrorKind
from koroku_tui.events import Event, SessionEvent
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.store import StoreNotInitializedError

pytestmark = pytest.mark.timeout(30)


def user_texts(contents: list[dict[str, object]]) -> list[str]:
    return [
        part["text"]
        for content in contents
        if content.get("role") == "user"
        for part in content.get("parts", [])  # type: ignore[attr-defined]
        if "text" in part
    ]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KOROKU_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


async def test_agent_without_arguments_remembers_in_the_koroku_home(
    fake: FakeGemini, fake_in_env: None, home: Path
) -> None:
    fake.add(text_reply("Hello."), text_reply("You said hi."))
    agent = Agent()
    assert agent.session_manager is not None
    assert agent.session_manager.path == home / "koroku.db"  # the file koroku-tui opens
    try:
        await agent.initialize()
        assert await agent.run_turn("hi") == "Hello."
    finally:
        await agent.close()

    replayed: list[Event] = []

    async def render_history_event(*, event: Event) -> None:
        replayed.append(event)

    restarted = Agent()
    try:
        await restarted.initialize(replay_handler=render_history_event)
        assert [e.text for e in replayed if isinstance(e, SessionEvent)] == ["hi", "Hello."]
        assert await restarted.run_turn("what did I say?") == "You said hi."
    finally:
        await restarted.close()
    assert user_texts(fake.generate_requests[-1].contents) == ["hi", "what did I say?"]


async def test_delete_is_the_seeds_clear_for_the_store_and_the_agent(
    fake: FakeGemini, fake_in_env: None, home: Path
) -> None:
    fake.add(text_reply("Noted."), text_reply("Fresh."))
    agent = Agent()
    try:
        await agent.initialize()
        await agent.run_turn("remember the milk")
        assert agent.session_manager is not None
        await agent.session_manager.delete()
        assert await agent.run("hi") is None
    finally:
        await agent.close()
    # The old turn is not sent again: the agent's context went with the store's.
    assert user_texts(fake.generate_requests[-1].contents) == ["hi"]
    assert len(fake.generate_requests[-1].contents) == 1

    replayed: list[Event] = []

    async def replay(*, event: Event) -> None:
        replayed.append(event)

    restarted = Agent()
    try:
        await restarted.initialize(replay_handler=replay)
    finally:
        await restarted.close()
    assert [e.text for e in replayed if isinstance(e, SessionEvent)] == ["hi", "Fresh."]


async def test_an_explicit_context_keeps_the_agent_in_memory(
    fake: FakeGemini, fake_in_env: None, home: Path
) -> None:
    fake.add(text_reply("Ok."))
    agent = Agent(context=[])
    try:
        await agent.initialize()
        await agent.run_turn("hi")
    finally:
        await agent.close()
    assert agent.session_manager is None
    assert not await asyncio.to_thread(home.exists)


async def test_db_is_awaited_as_in_the_seed(fake_in_env: None, home: Path) -> None:
    agent = Agent()
    assert agent.session_manager is not None
    with pytest.raises(StoreNotInitializedError):
        await agent.session_manager.db()
    try:
        await agent.initialize()
        conn = await agent.session_manager.db()
        rows = list(await conn.execute_fetchall("SELECT count(*) FROM sessions"))
        assert rows[0][0] == 0  # a session is stored with its first message
    finally:
        await agent.close()


def test_without_a_key_agent_says_how_to_get_one_and_touches_no_home(home: Path) -> None:
    with pytest.raises(AgentError) as caught:
        Agent()
    assert caught.value.kind is ErrorKind.AUTH
    assert not home.exists()


def test_a_bad_setting_is_one_sentence(fake_in_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOROKU_STALL_TIMEOUT", "soon")
    with pytest.raises(AgentError) as caught:
        Agent()
    assert caught.value.kind is ErrorKind.STORE
    assert caught.value.user_message.startswith("KOROKU_STALL_TIMEOUT is not usable")


@pytest.mark.parametrize("value", ["inf", "1e999", "nan"])
def test_a_stall_limit_that_is_no_number_is_named_not_blamed_on_the_key(
    fake_in_env: None, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """``inf`` parses as a float above 0: it must not reach the client, whose error says
    to check GEMINI_API_KEY."""
    monkeypatch.setenv("KOROKU_STALL_TIMEOUT", value)
    with pytest.raises(AgentError) as caught:
        Agent()
    assert caught.value.user_message == (
        "KOROKU_STALL_TIMEOUT is not usable (input should be a finite number); fix or unset it."
    )


async def test_the_seeds_agent_takes_every_setting_from_the_environment(
    fake_in_env: None, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Agent()`` is assembled as ``koroku-tui`` is: the same ``KOROKU_*`` reach it."""
    monkeypatch.setenv("KOROKU_STALL_TIMEOUT", "42")
    monkeypatch.setenv("KOROKU_COMPACT_AT", "0.5")
    monkeypatch.setenv("KOROKU_TOOL_ENV_ALLOW", "FOO_TOKEN")
    agent = Agent()
    try:
        assert agent.config.stall_timeout == 42
        assert agent.config.budget.threshold_share == 0.5
        assert agent.config.memory_dir == home / "memory"
        assert agent.tool_settings.env_allow == {"FOO_TOKEN"}
        assert agent.tool_settings.history is agent.session_manager
    finally:
        await agent.close()


def test_the_agent_below_the_seeds_reads_no_setting(fake_in_env: None, home: Path) -> None:
    """``koroku_tui.agent.Agent`` is given its store: it never opens a home on its own."""
    from koroku_tui.agent import Agent as PlainAgent

    with pytest.raises(ValueError, match="either a starting context or a session manager"):
        PlainAgent()
    assert not home.exists()


def test_agent_and_session_part_come_from_the_package_lazily() -> None:
    code = (
        "import sys, koroku_tui\n"
        "assert 'google.genai' not in sys.modules, 'import koroku_tui pulled in the SDK'\n"
        "from koroku_tui import Agent, SessionPart\n"
        "from koroku_tui.agent import Agent as A\n"
        "from koroku_tui.events import EventPart\n"
        "assert issubclass(Agent, A) and SessionPart is EventPart\n"
        "assert 'Agent' in koroku_tui.__all__ and 'SessionPart' in koroku_tui.__all__\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


async def test_after_a_compaction_the_seeds_replay_handler_sees_every_event(
    fake_in_env: None, home: Path
) -> None:
    """The seed's handler reads ``event.role``; a summary (the context's first event) has one,
    and one event the handler cannot draw does not hide the events after it."""
    from koroku_tui.events import CompactionEvent
    from koroku_tui.store import SessionManager

    async with SessionManager(home / "koroku.db") as store:
        await store.add_message(user("old question"))
        await store.add_message(CompactionEvent.from_summary("We talked about apples."))
        await store.add_message(user("boom"))
        await store.add_message(user("after the summary"))

    roles: list[str | None] = []
    errors: list[str] = []

    async def render_history_event(*, event: Event) -> None:
        if getattr(event, "text", "") == "boom":
            raise RuntimeError("cannot draw this one")
        roles.append(event.role)

    agent = Agent()
    agent.on("on_error", lambda notice: errors.append(notice.message))
    try:
        await agent.initialize(replay_handler=render_history_event)
    finally:
        await agent.close()
    assert roles == ["user", "user"]  # the summary, then the message after the failing one
    assert len(errors) == 1 and "Showing the history failed" in errors[0]
