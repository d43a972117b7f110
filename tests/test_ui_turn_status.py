"""The status line while a turn runs: what it does, the seconds, "esc to cancel"; gone after."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, plain, polled, send, settle, wait_for_approval, wait_until
from test_ui_answer_burst import burst_answer, held_plans
from textual.pilot import Pilot

from koroku_tui.agent import AgentConfig
from koroku_tui.agent.wire.retry import RetryPolicy
from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, Hang, call_reply, error_reply, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main import answer
from koroku_tui.ui.main.blocks import AnswerBlock
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.turn_status import TurnStatus


def status(app: KorokuApp) -> str:
    """The status line as shown, or "" when it is not on screen."""
    line = app.main.query_one(TurnStatus)
    return plain(line) if line.display else ""


async def shows(pilot: Pilot[None], app: KorokuApp, words: str, within: float = 10.0) -> None:
    """Let the turn run until the status line says ``words``."""
    said = f"the status line saying {words!r}"
    await wait_until(pilot, lambda: words in status(app), said, within)


async def test_waiting_for_gemini_with_the_seconds_until_escape(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(Hang())
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert status(app) == ""
        await send(pilot, app, "hello?")
        await wait_until(pilot, lambda: fake.pending == 0, "the request reaching the model")
        assert status(app) == "● waiting for Gemini · 0 s · esc to cancel"
        await shows(pilot, app, "waiting for Gemini · 1 s · esc to cancel", within=5)
        await pilot.press("escape")
        await settle(pilot, app)
        assert status(app) == ""


async def test_thinking_then_gone_when_the_answer_is_done(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply("Forty-two.", thought="Let me count.", chunk_delay=1.5))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "the answer?")
        await shows(pilot, app, "● thinking · ")
        await wait_until(pilot, lambda: not app.running, "the turn ending")
        await settle(pilot, app)
        assert "Forty-two." in plain(app.query_one(AnswerBlock))
        assert status(app) == ""


async def test_running_a_tool_then_waiting_for_the_next_step(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    # A command that takes a while (approved up front), then a model that hangs.
    fake.add(call_reply(("run_command", {"command": "sleep 3"})), Hang())
    app = build(tmp_path, client, auto_approve=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "wait a bit")
        await shows(pilot, app, "● running run_command · ")
        await wait_until(
            pilot, lambda: app.query_one(ToolSidebar).rows()[0][0] == "✓", "the command ending"
        )
        await shows(pilot, app, "● waiting for Gemini · ")
        await pilot.press("escape")
        await settle(pilot, app)
        assert status(app) == ""


async def test_retrying_counts_down_and_a_cancel_hides_the_line(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(error_reply(503), text_reply("Never reached."))
    settings = Settings(home=tmp_path)
    config = AgentConfig(
        memory_dir=settings.memory_dir,
        context_window=1_000_000,
        retry=RetryPolicy(initial_delay=4.0, jitter=0.0),
    )
    app = build(tmp_path, client, config=config)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hello?")
        await shows(pilot, app, "● retrying in 4 s (2/4): Gemini server error · ")
        await shows(pilot, app, "● retrying in 3 s (2/4): Gemini server error · ", within=3)
        # Said once, on the line that counts down: no toast repeating it.
        assert not [n for n in app._notifications if "retrying" in n.message]
        await pilot.press("escape")
        await settle(pilot, app)
        assert status(app) == ""
        assert len(fake.generate_requests) == 1  # cancelled before the retry went out


async def test_a_remapped_cancel_key_is_the_one_named(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "keymap.toml").write_text('"main.cancel" = "f9"\n')
    fake.add(Hang())
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hello?")
        await shows(pilot, app, "· f9 to cancel")
        await pilot.press("f9")
        await settle(pilot, app)
        assert status(app) == ""


async def test_ctrl_o_shows_summarising_until_cancelled(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    long_answer = "A long answer about the weather. " * 40
    fake.add(text_reply(long_answer), text_reply(long_answer), Hang())
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        for text in ("hello", "hello again"):
            await send(pilot, app, text)
            await settle(pilot, app)
        assert status(app) == ""
        await pilot.press("ctrl+o")
        await shows(pilot, app, "● summarising older turns · ")
        await wait_until(pilot, lambda: fake.pending == 0, "the summary request reaching the model")
        await pilot.press("escape")
        await settle(pilot, app)
        assert status(app) == ""


async def test_the_approval_dialog_is_waiting_for_your_answer(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(call_reply(("run_command", {"command": "sleep 3"})), Hang())
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "wait a bit")
        await wait_for_approval(pilot, app)
        await shows(pilot, app, "● waiting for your answer · ")
        assert "to cancel" not in status(app)  # under the dialog, escape denies
        await pilot.press("y")
        await shows(pilot, app, "● running run_command · ")
        await pilot.press("escape")
        await settle(pilot, app)
        assert status(app) == ""


async def test_the_line_goes_in_the_frame_after_the_answers_last_words(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long answer's last step is planned in a thread. Hidden as the turn ended, the line
    gave its row back in a frame of its own (a whole layout) that the last words waited
    for: it stays until they are drawn, then goes (issue 22, item 21)."""
    text = burst_answer(250)
    fake.add(text_reply(text, delay=1.0))  # after the key press is handled
    finishing, release = held_plans(monkeypatch, growing=False)
    monkeypatch.setattr(answer, "DRAWN_APART_CHARS", 100)  # however short, its last step
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "a long one")
        # Waited for in a thread and by sleeps: the pilot's waits wait for an idle app.
        assert await asyncio.to_thread(finishing.wait, 10), "no last step planned in a thread"
        await polled(lambda: not app.main.prompt.has_class("-running"), "the turn's end")
        await asyncio.sleep(0.2)  # frames meanwhile
        assert status(app).startswith("● ")  # the last words are not drawn yet
        release.set()
        await settle(pilot, app)
        assert status(app) == ""
        assert "Last line of the answer." in plain(app.query(AnswerBlock).last())
