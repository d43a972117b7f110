"""The agent sends bodies it built from wire forms; a part the backend refuses is one sentence."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from google.genai import types
from helpers.agent_kit import open_agent

from koroku_tui.agent.loop.conversation import Conversation
from koroku_tui.agent.wire.body import WireContent, WireForm
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


async def seed_session(store: SessionManager, questions: int) -> int:
    """A stored session of ``questions`` question-answer pairs; its id."""
    await store.new_session()
    for n in range(questions):
        for role, text in (("user", f"Question {n}?"), ("model", f"Answer {n}.")):
            content = types.Content(role=role, parts=[types.Part(text=text)])
            await store.add_message(SessionEvent.from_content(content))
    return store.session_id


async def test_a_loaded_context_is_converted_off_the_loop_before_the_first_request(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first request after a launch or a switch converts only the new message.

    The stored context is converted for requests in a thread when it is
    loaded: done by the first request instead, it held the event loop (and so
    the screen) for 3.4 s at 10,000 events.
    """
    async with SessionManager(tmp_path / "koroku.db") as store:
        first = await seed_session(store, 30)
        await seed_session(store, 20)  # the newest: the agent opens it
    on_the_loop: list[bool] = []  # one entry per Content converted to its wire form
    convert = WireForm.content

    def recording(self: WireForm, content: types.Content) -> WireContent:
        on_the_loop.append(threading.current_thread() is threading.main_thread())
        return convert(self, content)

    monkeypatch.setattr(WireForm, "content", recording)
    fake.add(text_reply("One."), text_reply("Two."))
    async with open_agent(fake, tmp_path) as agent:
        assert on_the_loop == [False] * 40  # the whole context, in another thread
        on_the_loop.clear()
        await agent.run_turn("And now?")
        assert on_the_loop == [True]  # the new message alone
        on_the_loop.clear()
        assert agent.session_manager is not None
        await agent.session_manager.switch_session(first)
        await agent.refresh()
        assert on_the_loop == [False] * 60
        on_the_loop.clear()
        await agent.run_turn("And here?")
        assert on_the_loop == [True]
    assert [len(r.body["contents"]) for r in fake.generate_requests] == [41, 61]


async def test_a_cancel_stops_the_conversion_and_waits_for_it(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quitting during a long context's conversion ends it at the next event.

    Left running, the thread went on converting beside the loop, and one cut
    off at exit inside pydantic-core aborted the process.
    """
    async with SessionManager(tmp_path / "koroku.db") as store:
        long_one = await seed_session(store, 20)
        await seed_session(store, 1)  # the newest: the agent opens it
    armed, converted, reached, go = False, 0, threading.Event(), threading.Event()
    convert = WireForm.content

    def held_at_the_fifth(self: WireForm, content: types.Content) -> WireContent:
        nonlocal converted
        converted += armed
        if converted == 5:
            reached.set()
            go.wait()
        return convert(self, content)

    ended: list[bool] = []
    stops: list[threading.Event] = []
    prepare = Conversation.prepare

    def recorded(self: Conversation, stop: threading.Event) -> None:
        stops.append(stop)
        prepare(self, stop)
        ended.append(True)

    monkeypatch.setattr(WireForm, "content", held_at_the_fifth)
    monkeypatch.setattr(Conversation, "prepare", recorded)
    async with open_agent(fake, tmp_path) as agent:
        armed, ended[:] = True, []
        assert agent.session_manager is not None
        await agent.session_manager.switch_session(long_one)
        refreshing = asyncio.ensure_future(agent.refresh())
        await asyncio.to_thread(reached.wait)
        refreshing.cancel()
        await asyncio.to_thread(stops[-1].wait)  # the cancel came through: stop is asked
        go.set()
        with pytest.raises(asyncio.CancelledError):
            await refreshing
        assert ended == [True]  # the thread had ended when the cancel came through
        assert converted == 5  # at the event after the cancel, not the 40th
