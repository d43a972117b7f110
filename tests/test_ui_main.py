"""The main screen against the real SDK and FakeGemini, with a real store on tmp_path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import (
    asking_to_run,
    build,
    plain,
    seed_session,
    send,
    settle,
    steady,
    texts,
    wait_until,
)
from textual.pilot import Pilot

from koroku_tui.agent import AgentConfig
from koroku_tui.agent.context.budget import BudgetPolicy
from koroku_tui.agent.wire.client import MISSING_KEY_HELP
from koroku_tui.config.settings import Settings
from koroku_tui.events import (
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    TextPart,
)
from koroku_tui.fake_gemini import FakeGemini, Hang, Usage, call_reply, text_reply
from koroku_tui.store import SessionManager
from koroku_tui.ui.history import HistoryScreen, OpenSession
from koroku_tui.ui.main import turn_status
from koroku_tui.ui.main.blocks import AnswerBlock, CompactionBlock, ToolRow, UserBlock
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.session_view import PAGE_SIZE
from koroku_tui.ui.main.sidebar import ToolSidebar

HOSTILE = "[bold red]x[/] [link=file:///etc/passwd]y[/link] \x1b]0;title\x07 \x1b[2J end"


async def test_send_shows_the_streamed_answer(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply("Hello **there**!", thought="pondering", pieces=4))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hi")
        await settle(pilot, app)
        assert texts(app, UserBlock) == ["hi"]
        assert "Hello there!" in texts(app, AnswerBlock)[0]
        assert app.query_one(Prompt).text == ""


async def test_tool_rows_check_and_cross_and_replay(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("content")
    fake.add(
        call_reply(("read_file", {"path": "a.txt"}), ("read_file", {"path": "missing.txt"})),
        text_reply("Read it."),
    )
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "read a.txt")
        await settle(pilot, app)
        rows = app.query_one(ToolSidebar).rows()
        assert [(r[0], r[1]) for r in rows] == [("✓", "read_file"), ("✗", "read_file")]
        live = texts(app, ToolRow)
        assert live[0].startswith("✓ read_file") and live[1].startswith("✗ read_file")
        live_answers = texts(app, AnswerBlock)

    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert again.query_one(ToolSidebar).rows() == rows
        assert texts(again, ToolRow) == live
        assert texts(again, UserBlock) == ["read a.txt"]
        assert texts(again, AnswerBlock) == live_answers


async def test_escape_cancels_a_hung_turn_and_the_next_turn_works(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(Hang(), text_reply("Back again."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hang please")
        await wait_until(pilot, lambda: fake.pending == 1, "the request reaching the model")
        assert app.running
        await send(pilot, app, "too early")  # queued while running (test_ui_queue)
        assert app.query_one(Prompt).text == ""
        await pilot.press("escape")
        await settle(pilot, app)
        assert not app.running
        assert app.query_one(Prompt).text == "too early"  # cancelled: back, not sent
        assert len(fake.generate_requests) == 1
        app.query_one(Prompt).text = ""
        await send(pilot, app, "again")
        await settle(pilot, app)
        assert "Back again." in texts(app, AnswerBlock)[-1]


@pytest.mark.parametrize(("key", "ran"), [("y", True), ("n", False)])
async def test_approval_modal_for_run_command(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, key: str, ran: bool
) -> None:
    async with asking_to_run(fake, client, tmp_path, "echo hi > out.txt", then="Done.") as (
        pilot,
        app,
        dialog,
    ):
        assert dialog.request.tool_name == "run_command"
        await pilot.press(key)
        await settle(pilot, app)
        assert (tmp_path / "out.txt").exists() is ran
        mark = app.query_one(ToolSidebar).rows()[0][0]
        assert mark == ("✓" if ran else "⊘")  # denied: by choice, not a failure


async def test_ctrl_l_new_session_and_ctrl_t_toggles_sidebar(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("buy milk")
    fake.add(call_reply(("list_directory", {"path": "."})), text_reply("First."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "one")
        await settle(pilot, app)
        # The tool ran (an unknown one shows ✗) and its listing reached the model.
        assert [row[:2] for row in app.query_one(ToolSidebar).rows()] == [("✓", "list_directory")]
        assert texts(app, ToolRow)[0].startswith("✓ list_directory")
        assert "notes.txt" in str(fake.generate_requests[-1].contents[-1])
        assert app.store is not None
        first = app.store.session_id
        await pilot.press("ctrl+l")
        await settle(pilot, app)
        assert app.store.session_id != first
        assert texts(app, UserBlock) == [] and app.query_one(ToolSidebar).row_count == 0
        assert len(await app.store.load_all(first)) == 4  # the old session is kept

        sidebar = app.query_one(ToolSidebar)
        assert sidebar.display
        await pilot.press("ctrl+t")
        assert not sidebar.display
        await pilot.press("ctrl+t")
        assert sidebar.display


async def test_ctrl_o_compacts_and_shows_the_marker(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    long_answer = "A long answer about the weather. " * 40
    fake.add(text_reply(long_answer), text_reply(long_answer), text_reply("Said hello twice."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        for text in ("hello", "hello again"):
            await send(pilot, app, text)
            await settle(pilot, app)
        await pilot.press("ctrl+o")
        await settle(pilot, app)
        markers = app.query(CompactionBlock)
        assert len(markers) == 1
        marker = markers.first()
        assert "hello twice" not in plain(marker)  # closed: one line
        await pilot.click(CompactionBlock)
        assert "hello twice" in plain(marker)
        marker.focus()
        await pilot.press("enter")  # the keyboard closes it again
        assert "hello twice" not in plain(marker)
        assert fake.pending == 0


async def test_gauge_estimated_then_warn(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply("Big.", usage=Usage(prompt_tokens=6_000, candidates_tokens=10)))
    policy = BudgetPolicy(threshold_share=0.8, event_limit=None)
    config = AgentConfig(
        memory_dir=tmp_path / "memory",
        context_window=10_000,
        budget=policy,
        auto_compact=False,
    )
    app = build(tmp_path, client, config=config)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        gauge = app.query_one(ContextGauge)
        assert "~" in plain(gauge)
        assert not gauge.has_class("-warn")
        await send(pilot, app, "fill it")
        await settle(pilot, app)
        assert "~" not in plain(gauge)
        assert "6,010 / 10,000" in plain(gauge)
        # 6,010 of an 8,000-token threshold is 75%: past WARN_AT, short of CRITICAL_AT.
        assert gauge.has_class("-warn") and not gauge.has_class("-critical")


async def test_no_key_shows_the_banner_and_refuses_to_send(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.agent is None
        assert MISSING_KEY_HELP in plain(app.query_one("#banner"))
        await send(pilot, app, "hello?")
        await pilot.pause()
        assert texts(app, UserBlock) == []
        assert app.query_one(Prompt).text == "hello?"


async def test_hostile_strings_are_literal_or_stripped(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(call_reply(("read_file", {"path": HOSTILE})), text_reply(HOSTILE))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, HOSTILE)
        await settle(pilot, app)
        shown = [
            *texts(app, UserBlock),
            *texts(app, AnswerBlock),
            *texts(app, ToolRow),
            *(" ".join(r) for r in app.query_one(ToolSidebar).rows()),
        ]
        for text in shown:
            assert "\x1b" not in text and "\x07" not in text
        assert "[bold red]x[/]" in texts(app, UserBlock)[0]
        assert "[link=file:///etc/passwd]y[/link]" in texts(app, AnswerBlock)[-1]
        assert "[bold red]x[/]" in texts(app, AnswerBlock)[-1]
        assert "[bold red]" in texts(app, ToolRow)[0]


async def test_a_tool_result_stored_without_fc_metadata_still_shows_its_row(
    client: genai.Client, tmp_path: Path
) -> None:
    """A response row without FCMetadata (written before Koroku stored it, or by the
    seed program) is shown by the response's own name, its arguments unknown: the
    same row in the transcript and in the sidebar."""

    def result(response: dict[str, Any]) -> FunctionResponsePart:
        return FunctionResponsePart(
            function_response=FunctionResponseData(name="read_file", response=response)
        )

    call = FunctionCallData(name="read_file", args={"path": "a.txt"})
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        for event in (
            SessionEvent(role="user", parts=[TextPart(text="read a.txt")]),
            SessionEvent(role="model", parts=[FunctionCallPart(function_call=call)] * 2),
            SessionEvent(role="user", parts=[result({"output": "x"}), result({"error": "no"})]),
            SessionEvent(role="model", parts=[TextPart(text="Done.")]),
        ):
            await store.add_message(event)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert [row.strip() for row in texts(app, ToolRow)] == ["✓ read_file", "✗ read_file — no"]
        sidebar = app.query_one(ToolSidebar).rows()
        assert sidebar == [("✓", "read_file", ""), ("✗", "read_file", "")]


async def test_replay_mounts_the_tail_and_ctrl_b_loads_older(
    client: genai.Client, tmp_path: Path
) -> None:
    await seed_session(tmp_path, 50)  # 100 messages
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        users = texts(app, UserBlock)
        assert len(users) == PAGE_SIZE // 2 and users[-1] == "question 49"
        await pilot.press("ctrl+b")
        await settle(pilot, app)
        users = texts(app, UserBlock)
        assert len(users) == PAGE_SIZE and users[0] == "question 10"


async def test_ctrl_r_opens_history_and_switches_session(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    await seed_session(tmp_path, 1)
    app = build(tmp_path, client, new_session=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert texts(app, UserBlock) == []
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, HistoryScreen)
        assert app.store is not None
        app.screen.dismiss(OpenSession(1))
        await settle(pilot, app)
        assert app.store.session_id == 1
        assert texts(app, UserBlock) == ["question 0"]


def test_snapshot_mid_turn(
    fake: FakeGemini,
    snapshot_home: Path,
    snap_compare: Any,
    fake_in_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A turn waiting on the model after a tool call: user message, tool row, sidebar, gauge,
    and the status line ("waiting for Gemini · 0 s · esc to cancel", its clock pinned)."""
    monkeypatch.setattr(turn_status, "clock", lambda: 1000.0)
    (snapshot_home / "notes.txt").write_text("buy milk")
    fake.add(
        call_reply(("read_file", {"path": "notes.txt"}), usage=Usage(prompt_tokens=1200)),
        Hang(),
    )
    # The app builds (and closes) its own client from the environment here:
    # snap_compare runs the app on an event loop of its own.
    app = build(snapshot_home, None)

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot, app)
        app.query_one(Prompt).cursor_blink = False
        await send(pilot, app, "What is in **notes.txt**? [bold red]x[/]")

        # Generous: under a loaded machine the tool step can take a while, and
        # the picture must be of the stable state (second request hanging).
        def second_request_hanging() -> bool:
            rows = app.query_one(ToolSidebar).rows()
            return bool(rows) and rows[0][0] == "✓" and len(fake.generate_requests) == 2

        await wait_until(pilot, second_request_hanging, "the second request", within=30)
        await steady(pilot)

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
