"""MCP servers in ``--print``, as a user runs it: approval, ``--verbose``, no orphans.

The installed ``koroku-tui --config FILE --print`` reads its servers from a
real config file (``helpers/mcp_kit.print_with_servers``); they are real
processes.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.mcp_kit import TIME_SERVER, finish, listed_server, print_with_servers
from helpers.processes import kill_leftovers, parent_of, wait_for_pid, wait_until_gone
from test_mcp_agent import responses

from koroku_tui.config.mcp_servers import McpServerSettings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(60)


def start(
    fake: FakeGemini, tmp_path: Path, servers: dict[str, McpServerSettings], *args: str
) -> subprocess.Popen[str]:
    """``--print`` with ``servers`` configured; ``args``: flags, then the text."""
    *flags, text = args
    return print_with_servers(fake, tmp_path, servers, *flags, "--print", text)


def test_an_untrusted_server_s_call_is_refused_without_yes_and_the_model_is_told(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(
        call_reply(("time__get_current_time", {"timezone": "UTC"})),
        text_reply("I may not look."),
    )
    code, out, err = finish(start(fake, tmp_path, {"time": TIME_SERVER}, "what time?"))
    assert (code, out) == (0, "I may not look.\n"), err
    [response] = responses(fake, 1)
    refusal = response["response"]["error"]
    assert refusal.endswith("nothing was done. run koroku-tui --print with --yes to allow it")


def test_verbose_says_which_servers_the_turn_used(fake: FakeGemini, tmp_path: Path) -> None:
    servers = {"time": TIME_SERVER, "idle": listed_server(tmp_path, "idle")}
    fake.add(call_reply(("time__get_current_time", {"timezone": "UTC"})), text_reply("Noon."))
    code, out, err = finish(start(fake, tmp_path, servers, "--yes", "--verbose", "what time?"))
    assert (code, out) == (0, "Noon.\n"), err
    assert "koroku-tui: MCP servers used: time.\n" in err
    [response] = responses(fake, 1)
    assert '"timezone": "UTC"' in response["response"]["output"]


def test_a_server_print_goes_on_without_is_one_line_on_stderr(
    fake: FakeGemini, tmp_path: Path
) -> None:
    broken = McpServerSettings(command=str(tmp_path / "no-such-server"))
    fake.add(text_reply("Hi."))
    code, out, err = finish(start(fake, tmp_path, {"broken": broken}, "hi"))
    assert (code, out) == (0, "Hi.\n"), err
    assert err == (
        "koroku-tui: Went on without the MCP server broken: it ended before it was ready; the "
        f"last line on its stderr: cannot start {tmp_path}/no-such-server: No such file or "
        "directory.\n"
    )


def test_no_server_outlives_a_koroku_killed_with_sigkill(fake: FakeGemini, tmp_path: Path) -> None:
    """Killed while Gemini answers: the servers are ready (each turn waits for them). One
    of them outlives its stdin and has a child: only the guard ends them."""
    pid_file, child_file = tmp_path / "server.pid", tmp_path / "child.pid"
    plan: dict[str, Any] = {"pid_file": str(pid_file), "stubborn": str(child_file)}
    servers = {"kept": listed_server(tmp_path, "kept", **plan), "time": TIME_SERVER}
    fake.add(text_reply("too late", delay=30))
    process = start(fake, tmp_path, servers, "hi")
    left: list[int] = []
    try:
        while not fake.generate_requests:  # each turn waits for its servers first
            assert fake.wait_for_requests(len(fake.requests) + 1, timeout=30)
        server = wait_for_pid(pid_file)
        left = [server, parent_of(server), wait_for_pid(child_file)]  # and its guard, its child
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=10) == -signal.SIGKILL
        assert wait_until_gone(left) == []
    finally:
        kill_leftovers(left)
        process.kill()
        process.communicate()
