"""Hostile servers in the app: what it draws of them is escaped; ctrl+q leaves none running.

The real app (``App.run_test``) on settings naming the servers, as the config
file would, against the strict fake.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google import genai
from helpers.mcp_servers import server_settings
from helpers.processes import kill_leftovers, wait_for_pid, wait_until_gone
from helpers.ui_kit import build, plain, send, settle
from hostile.terminal import FORBIDDEN_IN_OUTPUT
from mcp_servers import escapes

from koroku_tui.agent.tools.mcp.names import tool_name
from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.ui.main.tool_row import ToolRow


async def test_a_sneaky_server_s_calls_and_answers_are_drawn_escaped(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    attacks = [tool.name for tool in escapes.tools()]
    calls: list[tuple[str, dict[str, Any]]] = [
        (tool_name("esc", attack) or "", {}) for attack in attacks[:3] + attacks[-3:]
    ]
    fake.add(call_reply(*calls), text_reply("Read them all."))
    servers = {"esc": server_settings("escapes", trust=True)}
    app = build(tmp_path, client, settings=Settings(home=tmp_path, mcp_servers=servers))
    async with app.run_test(size=(160, 60)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "look")
        await settle(pilot, app)
        for row in app.query(ToolRow):
            row.action_open_or_more()  # open on the answer
        await settle(pilot, app)
        shown = plain(app.screen)
    assert "result of clear-screen:  end" in shown  # the sequence taken out, as a command's
    assert "result of bidi-override: abc\\u202edcb\\u202c end" in shown
    assert not set(shown) & set(FORBIDDEN_IN_OUTPUT)


async def test_ctrl_q_ends_a_server_that_ignores_eof_and_its_regrouped_child(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """It ignores its stdin's end, SIGTERM, SIGHUP and SIGINT, and its child left its
    process group: quitting leaves neither running."""
    pid_file, child_file = tmp_path / "server.pid", tmp_path / "child.pid"
    args = ("--pid-file", str(pid_file), "--child-pid-file", str(child_file), "--child-regroups")
    servers = {"tough": server_settings("ignores_eof", *args)}
    fake.add(text_reply("Hi."))
    app = build(tmp_path, client, settings=Settings(home=tmp_path, mcp_servers=servers))
    left: list[int] = []
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            await send(pilot, app, "hi")  # the turn waits for the server: it is running
            await settle(pilot, app)
            left = [wait_for_pid(pid_file), wait_for_pid(child_file)]
            await pilot.press("ctrl+q")
        assert wait_until_gone(left) == []
    finally:
        kill_leftovers(left)
