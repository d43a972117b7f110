"""``McpServers`` with real server processes: parallel starts, failures, restarts, new lists.

Servers are the SDK-built fixture (``mcp_fixtures/listed_server.py``) and
plain commands that fail; every wait is on the server set's own events.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.mcp_kit import ECHO_TOOL, failing_command, listed_server
from helpers.processes import wait_for_pid
from helpers.tool_kit import fcall

from koroku_tui.agent.tools import ToolRegistry, ToolSettings
from koroku_tui.agent.tools.mcp.names import tool_name
from koroku_tui.agent.tools.mcp.server_log import LOGGED_BYTES
from koroku_tui.agent.tools.mcp.servers import MAX_RESTARTS, McpServers
from koroku_tui.agent.tools.mcp.status import ServerState, ServerStatus
from koroku_tui.config.mcp_servers import McpServerSettings


async def call(registry: ToolRegistry, name: str, workspace: Path, **args: Any) -> str:
    """Run one call the way the agent does (auto-approved); its output or error text."""
    result = await registry.execute(fcall(name, args), ToolSettings(workspace, auto_approve=True))
    return result.text


async def test_a_stdio_server_gets_the_tool_environment_and_its_own_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Koroku's credentials and secret-looking variables stay out (as for run_command); the
    server's ``env`` is added; it runs in the workspace."""
    monkeypatch.setenv("GEMINI_API_KEY", "the-key")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-secret")
    monkeypatch.setenv("ALLOWED_TOKEN", "shared")
    monkeypatch.setenv("KOROKU_MCP_TEST_PLAIN", "plain")
    names = ["GEMINI_API_KEY", "GITHUB_TOKEN", "ALLOWED_TOKEN", "KOROKU_MCP_TEST_PLAIN", "TZ"]
    tools = [{**ECHO_TOOL, "name": "environment"}]
    own = {"env": {"TZ": "Europe/Berlin"}}
    server = listed_server(tmp_path, "env", tools=tools, show_env=names, settings=own)
    registry = ToolRegistry()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    servers = McpServers(
        {"env": server}, registry, workspace=workspace, env_allow={"ALLOWED_TOKEN"}
    )
    try:
        await servers.ready_for_turn()
        seen = json.loads(await call(registry, "env__environment", tmp_path))
    finally:
        await servers.close()
    assert seen == {
        "env": {
            "GEMINI_API_KEY": None,
            "GITHUB_TOKEN": None,
            "ALLOWED_TOKEN": "shared",
            "KOROKU_MCP_TEST_PLAIN": "plain",
            "TZ": "Europe/Berlin",
        },
        "cwd": str(workspace),
    }


async def test_a_server_whose_folder_is_missing_says_which_folder(tmp_path: Path) -> None:
    """ "No such file or directory" alone read as a missing command."""
    gone = tmp_path / "gone"
    server = listed_server(tmp_path, "lost", settings={"cwd": gone})
    servers = McpServers({"lost": server}, ToolRegistry(), workspace=tmp_path)
    try:
        said = await servers.ready_for_turn()
    finally:
        await servers.close()
    why = f"it could not be started (No such file or directory: {gone})"
    assert said == [f"Went on without the MCP server lost: {why}."]


async def test_a_flood_on_stderr_is_logged_up_to_a_megabyte_and_its_last_line_quoted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every line went to koroku.log: a server writing 100 MB pushed all of Koroku's own
    lines out of it (and kept Koroku logging for half a minute)."""
    code = "import sys; sys.stderr.write(('x' * 999 + '\\n') * 3000 + 'gave up\\n'); sys.exit(2)"
    flood = McpServerSettings(command=sys.executable, args=["-c", code])
    caplog.set_level(logging.INFO, logger="koroku_tui.mcp.stderr")
    servers = McpServers({"flood": flood}, ToolRegistry(), workspace=tmp_path)
    try:
        said = await servers.ready_for_turn()
    finally:
        await servers.close()
    why = "it ended before it was ready; the last line on its stderr: gave up"
    assert said == [f"Went on without the MCP server flood: {why}."]
    lines = [r.getMessage() for r in caplog.records if r.name == "koroku_tui.mcp.stderr"]
    assert LOGGED_BYTES <= sum(map(len, lines)) < LOGGED_BYTES + 20_000  # "[flood] " each
    assert lines[-1] == "[flood] (the rest of its stderr is not logged: over 1,000,000 bytes)"


async def test_ten_servers_start_in_parallel(tmp_path: Path) -> None:
    """Each waits, before answering anything, until all ten have started: one after the
    other, the first would wait for ever and fail at its start-up time."""
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    plan: dict[str, Any] = {"barrier": {"dir": str(barrier), "count": 10}}
    configured = {f"s{i}": listed_server(tmp_path, f"s{i}", **plan) for i in range(10)}
    registry = ToolRegistry()
    servers = McpServers(configured, registry, workspace=tmp_path)
    try:
        assert await servers.ready_for_turn() == []
        assert {status.state for status in servers.statuses()} == {ServerState.READY}
        assert sorted(registry.names) == sorted(f"s{i}__echo" for i in range(10))
    finally:
        await servers.close()


async def test_a_failed_server_is_started_again_at_most_three_times(tmp_path: Path) -> None:
    registry = ToolRegistry()
    servers = McpServers({"crash": failing_command("cannot open db")}, registry, workspace=tmp_path)
    seen: list[tuple[ServerStatus, ...]] = []
    servers.listen(seen.append)
    try:
        said = [await servers.ready_for_turn() for _ in range(MAX_RESTARTS + 2)]
        [status] = servers.statuses()
    finally:
        await servers.close()
    assert status.state is ServerState.FAILED
    assert status.restarts == MAX_RESTARTS
    line = (
        "Went on without the MCP server crash: it ended before it was ready; "
        "the last line on its stderr: cannot open db."
    )
    # A line per start that failed; none once it is not started again.
    assert said == [[line]] * (MAX_RESTARTS + 1) + [[]]
    starts = [s for (s,) in seen if s.state is ServerState.STARTING]
    assert [s.restarts for s in starts] == list(range(MAX_RESTARTS + 1))


async def test_a_server_that_dies_mid_call_fails_the_call_and_starts_again_next_turn(
    tmp_path: Path,
) -> None:
    plan: dict[str, Any] = {"tools": [ECHO_TOOL, {**ECHO_TOOL, "name": "die"}]}
    server = listed_server(tmp_path, "fragile", exit_on_call="die", **plan)
    registry = ToolRegistry()
    servers = McpServers({"fragile": server}, registry, workspace=tmp_path)
    try:
        assert await servers.ready_for_turn() == []
        answer = await call(registry, "fragile__die", tmp_path)
        assert answer == (
            "server fragile stopped during the call; the last line on its stderr: dying."
        )
        assert servers.statuses()[0].state is ServerState.FAILED
        again = await call(registry, "fragile__echo", tmp_path, text="hi")
        assert again == (
            "server fragile is not running: it stopped; the last line on its stderr: dying."
        )
        said = await servers.ready_for_turn()  # the next turn: started again
        assert said == []
        assert servers.statuses()[0].state is ServerState.READY
        assert (
            await call(registry, "fragile__echo", tmp_path, text="hi") == 'echo got {"text": "hi"}'
        )
    finally:
        await servers.close()


async def test_a_server_that_stops_answering_fails_the_call_then_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("koroku_tui.agent.tools.mcp.servers.PING_WITHIN", 0.2)
    plan: dict[str, Any] = {"tools": [{**ECHO_TOOL, "name": "freeze"}]}
    quick = {"tool_timeout_sec": 0.5}
    server = listed_server(tmp_path, "frozen", freeze_on_call="freeze", settings=quick, **plan)
    registry = ToolRegistry()
    servers = McpServers({"frozen": server}, registry, workspace=tmp_path)
    failed = asyncio.Event()
    servers.listen(lambda s: failed.set() if s[0].state is ServerState.FAILED else None)
    try:
        await servers.ready_for_turn()
        answer = await call(registry, "frozen__freeze", tmp_path)
        assert answer == "frozen__freeze timed out after 0.5 s and was stopped."
        await failed.wait()  # it did not answer the ping that followed
        [status] = servers.statuses()
        assert status.reason == "frozen stopped answering (no answer to a ping in 0.2 s)."
    finally:
        await servers.close()


async def test_servers_named_alike_never_share_a_tool_name_whichever_starts_first(
    tmp_path: Path,
) -> None:
    """``my docs`` and ``my_docs`` both clean to ``my_docs``: the first ready took
    ``my_docs__echo``, so a rule written for one allowed the other's tool in the run where
    the other started first. Both get their stable suffix instead."""
    alike = {
        name: listed_server(tmp_path, name.replace(" ", "-")) for name in ("my docs", "my_docs")
    }
    registry = ToolRegistry()
    servers = McpServers(alike, registry, workspace=tmp_path)
    try:
        await servers.ready_for_turn()
    finally:
        await servers.close()
    expected = [tool_name(name, "echo", suffixed=True) or "" for name in alike]
    assert sorted(registry.names) == sorted(expected)
    assert "my_docs__echo" not in registry.names


async def test_a_new_tool_list_is_offered_from_the_next_turn(tmp_path: Path) -> None:
    later = {**ECHO_TOOL, "name": "shout"}
    server = listed_server(tmp_path, "grow", grow_on_call="echo", later_tools=[later])
    registry = ToolRegistry()
    servers = McpServers({"grow": server}, registry, workspace=tmp_path)
    relisted = asyncio.Event()
    servers.listen(lambda statuses: relisted.set() if len(statuses[0].tools) == 2 else None)
    try:
        await servers.ready_for_turn()
        version = registry.version
        await call(registry, "grow__echo", tmp_path, text="more")
        await relisted.wait()
        assert registry.names == ["grow__echo"]  # not in the middle of a turn
        await servers.ready_for_turn()
        assert registry.names == ["grow__echo", "grow__shout"]
        assert registry.version > version  # the declarations are built again, once
    finally:
        await servers.close()


@pytest.mark.parametrize("trust", [False, True])
async def test_only_a_trusted_server_s_calls_run_without_asking(
    tmp_path: Path, trust: bool
) -> None:
    server = listed_server(tmp_path, "t", settings={"trust": trust})
    registry = ToolRegistry()
    servers = McpServers({"t": server}, registry, workspace=tmp_path)
    try:
        await servers.ready_for_turn()
        headless = ToolSettings(tmp_path, opt_in_hint="Use --yes.")
        result = await registry.execute(fcall("t__echo", {"text": "x"}), headless)
    finally:
        await servers.close()
    if trust:
        assert result.output == 'echo got {"text": "x"}'
    else:
        assert result.error is not None and result.error.endswith("nothing was done. Use --yes.")
        assert servers.used == set()


async def test_the_config_chooses_which_tools_are_offered(tmp_path: Path) -> None:
    tools = [ECHO_TOOL, {**ECHO_TOOL, "name": "shout"}, {**ECHO_TOOL, "name": "whisper"}]
    chosen = {"enabled_tools": ["echo", "shout"], "disabled_tools": ["shout"]}
    server = listed_server(tmp_path, "pick", tools=tools, settings=chosen)
    registry = ToolRegistry()
    servers = McpServers({"pick": server}, registry, workspace=tmp_path)
    try:
        await servers.ready_for_turn()
    finally:
        await servers.close()
    assert registry.names == ["pick__echo"]
    off = {tool.tool for tool in servers.statuses()[0].tools if tool.left_out}
    assert off == {"shout", "whisper"}


async def test_restart_starts_a_server_again_at_once(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    server = listed_server(tmp_path, "again", pid_file=str(pid_file))
    servers = McpServers({"again": server}, ToolRegistry(), workspace=tmp_path)
    try:
        await servers.ready_for_turn()
        first = wait_for_pid(pid_file)
        await servers.restart("again")
        [status] = servers.statuses()
        assert status.state is ServerState.READY and status.restarts == 1
        assert wait_for_pid(pid_file) != first
    finally:
        await servers.close()


def test_nothing_starts_without_servers(tmp_path: Path) -> None:
    servers = McpServers({}, ToolRegistry(), workspace=tmp_path)
    assert servers.statuses() == ()


async def test_a_closed_set_starts_nothing(tmp_path: Path) -> None:
    config = {"x": McpServerSettings(command="true")}
    servers = McpServers(config, ToolRegistry(), workspace=tmp_path)
    await servers.close()
    assert await servers.ready_for_turn() == []
    assert servers.statuses()[0].state is ServerState.STARTING


async def test_an_entry_with_a_problem_stays_failed_when_restarted(tmp_path: Path) -> None:
    """Starting it again would not set the variable its token comes from."""
    problem = "[mcp_servers.docs] takes its token from the variable T, which is not set."
    entry = McpServerSettings(url="http://127.0.0.1:9/mcp", problem=problem)
    servers = McpServers({"docs": entry}, ToolRegistry(), workspace=tmp_path)
    try:
        assert await servers.ready_for_turn() == [f"Went on without the MCP server docs: {problem}"]
        await servers.restart("docs")
        assert await servers.ready_for_turn() == []  # said once
        [status] = servers.statuses()
    finally:
        await servers.close()
    assert (status.state, status.reason, status.restarts) == (ServerState.FAILED, problem, 0)
