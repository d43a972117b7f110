"""The test MCP servers behave as designed, driven by the official SDK's own client.

The MCP client tests build on these servers (``helpers.mcp_servers``); if one
stopped misbehaving the way its docstring says, the tests using it would
pass for the wrong reason. Here each is checked with ``stdio_client`` and
``ClientSession`` (the HTTP one with ``streamable_http_client``), except
``ignores_eof``, driven by hand so that outliving its client is observed
rather than waited out.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import tomllib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any, TextIO

import anyio
import httpx2
import mcp_types as types
import pytest
from helpers.mcp_servers import NAMES, http_server, server_command, server_toml
from helpers.processes import kill_leftovers, process_gone, wait_for_pid, wait_until_gone
from hostile.terminal import TERMINAL_ATTACKS
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_servers import bad_names, bad_schema, huge_result, never_initializes

from koroku_tui.config.mcp_servers import McpServerSettings

SILENT = 0.5
"""How long a test lets a server that must never answer stay silent (it is never waited out)."""


@pytest.fixture
def stderr_log(tmp_path: Path) -> Iterator[TextIO]:
    """The file a server's stderr goes to (the SDK needs one with a file descriptor)."""
    with (tmp_path / "server-stderr.log").open("w+") as log:
        yield log


@asynccontextmanager
async def connected(
    name: str, *args: str, stderr: TextIO, initialize: bool = True, **session: Any
) -> AsyncIterator[ClientSession]:
    """A client session with the server ``name`` (initialized unless told otherwise)."""
    command, *arguments = server_command(name, *args)
    parameters = StdioServerParameters(command=command, args=arguments)
    async with (
        stdio_client(parameters, errlog=stderr) as (read, write),
        ClientSession(read, write, **session) as client,
    ):
        if initialize:
            await client.initialize()
        yield client


def text_of(result: types.CallToolResult) -> str:
    """The one text block of a result."""
    [block] = result.content
    assert isinstance(block, types.TextContent), block
    return block.text


async def said_on_stderr(log: TextIO, line: str) -> None:
    """Wait until the server has written ``line`` to its stderr ``log``."""
    while True:
        log.seek(0)
        if line in log.read().splitlines():
            return
        await anyio.sleep(0.02)


async def tool_names(client: ClientSession) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


def test_the_helpers_name_every_server_and_write_config_the_settings_take() -> None:
    assert set(NAMES) >= {"well_behaved", "http_server", "ignores_eof", "bad_schema"}
    with pytest.raises(ValueError, match="no test MCP server 'nope'"):
        server_command("nope")
    toml = server_toml("crash", "crashes_mid_call", "--x", trust=True)
    entry = McpServerSettings(**tomllib.loads(toml)["mcp_servers"]["crash"])
    assert entry.args[0].endswith("crashes_mid_call.py") and entry.args[1:] == ["--x"]
    assert entry.trust


async def test_well_behaved_answers_with_each_kind_of_content(stderr_log: TextIO) -> None:
    async with connected(
        "well_behaved", "--log-stderr", "hello from the server", stderr=stderr_log
    ) as client:
        names = await tool_names(client)
        echoed = await client.call_tool("echo", {"text": "hi"})
        added = await client.call_tool("add", {"a": 2, "b": 3})
        forecast = await client.call_tool("forecast", {"city": "Köln"})
        picture = await client.call_tool("picture", {})
        sound = await client.call_tool("sound", {})
        document = await client.call_tool("document", {})
        failed = await client.call_tool("fail", {"reason": "no luck today"})
    assert sorted(names) == ["add", "document", "echo", "fail", "forecast", "picture", "sound"]
    assert text_of(echoed) == "hi" and echoed.structured_content is None
    assert text_of(added) == "5"
    assert forecast.structured_content == {"city": "Köln", "celsius": 21, "sky": "clear"}
    [image] = picture.content
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG")
    [audio] = sound.content
    assert isinstance(audio, types.AudioContent) and audio.mime_type == "audio/wav"
    [embedded] = document.content
    assert isinstance(embedded, types.EmbeddedResource)
    assert str(embedded.resource.uri) == "file:///notes/todo.md"
    assert failed.is_error and "no luck today" in text_of(failed)
    assert not echoed.is_error
    stderr_log.seek(0)
    assert stderr_log.read().splitlines()[0] == "hello from the server"


async def test_well_behaved_serves_n_generated_tools_instead(stderr_log: TextIO) -> None:
    async with connected("well_behaved", "--tools", "300", stderr=stderr_log) as client:
        names = await tool_names(client)
        last = await client.call_tool("tool_299", {"text": "x"})
    assert names == [f"tool_{i}" for i in range(300)]
    assert text_of(last) == "tool_299: x"


async def test_a_delayed_server_does_not_answer_during_its_delay(stderr_log: TextIO) -> None:
    flags = ["--log-stderr", "imported", "--delay-start", "60"]
    async with connected("well_behaved", *flags, stderr=stderr_log, initialize=False) as client:
        await said_on_stderr(
            stderr_log, "imported"
        )  # from here it serves in milliseconds, undelayed
        with anyio.move_on_after(SILENT) as silence:
            await client.initialize()
    assert silence.cancelled_caught, "it answered during its delay"


def test_a_delayed_server_leaves_as_soon_as_its_stdin_closes() -> None:
    # Status 0: it left by itself, not by the SDK's SIGTERM two seconds after the close.
    command = server_command("well_behaved", "--delay-start", "60")
    process = subprocess.Popen(command, stdin=subprocess.PIPE)
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(timeout=30) == 0


async def test_the_http_server_reports_the_headers_it_was_sent() -> None:
    headers = {"Authorization": "Bearer tok-123", "X-Team": "blue", "Accept-Language": "de"}
    with http_server() as url:
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            names = await tool_names(client)
            seen = await client.call_tool("seen_headers", {})
    assert sorted(names) == ["echo", "seen_headers"]
    assert seen.structured_content == {"authorization": "Bearer tok-123", "x-team": "blue"}


async def test_a_delayed_http_server_says_its_port_but_does_not_answer() -> None:
    with http_server("--delay-start", "60") as url:
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as client,
        ):
            with anyio.move_on_after(SILENT) as silence:
                await client.initialize()
    assert silence.cancelled_caught, "it answered during its delay"


async def test_never_initializes_stays_silent(stderr_log: TextIO) -> None:
    async with connected("never_initializes", stderr=stderr_log, initialize=False) as client:
        with anyio.move_on_after(SILENT) as silence:
            await client.initialize()
    assert silence.cancelled_caught, "it answered initialize"
    stderr_log.seek(0)
    assert stderr_log.read().strip() == never_initializes.STDERR_LINE


async def test_crashes_mid_call_dies_in_the_call_with_a_last_word(stderr_log: TextIO) -> None:
    async with connected("crashes_mid_call", stderr=stderr_log) as client:
        assert await tool_names(client) == ["echo", "boom"]
        assert text_of(await client.call_tool("echo", {"text": "still fine"})) == "still fine"
        with pytest.raises(MCPError, match="Connection closed"):
            await client.call_tool("boom", {})
    stderr_log.seek(0)
    assert stderr_log.read().splitlines()[-1] == "fatal: boom"


async def test_garbage_stdout_still_answers_between_its_garbage(stderr_log: TextIO) -> None:
    unreadable: list[object] = []

    async def collect(message: object) -> None:
        if isinstance(message, Exception):
            unreadable.append(message)

    async with connected("garbage_stdout", stderr=stderr_log, message_handler=collect) as client:
        assert await tool_names(client) == ["echo"]
        assert text_of(await client.call_tool("echo", {"text": "through"})) == "through"
    assert len(unreadable) >= 3, "it wrote no garbage the client could not read"


async def test_huge_result_answers_ten_megabytes(stderr_log: TextIO) -> None:
    async with connected("huge_result", stderr=stderr_log) as client:
        text = text_of(await client.call_tool("huge", {}))
    assert len(text.encode()) == 10_000_000
    lines = text.splitlines()
    assert lines[0].startswith("line 0000000: ") and lines[-1].startswith("line 0099999: ")
    assert huge_result.huge_text(0.001).count("\n") == 10


async def test_bad_names_declares_each_name_as_is_and_answers_it(stderr_log: TextIO) -> None:
    async with connected("bad_names", stderr=stderr_log) as client:
        names = await tool_names(client)
        answers = {name: text_of(await client.call_tool(name, {})) for name in set(names)}
    assert names == [*bad_names.NAMES, "twin"]
    assert answers == {name: f"called {name}" for name in names}
    assert {"", "get time", "天気", bad_names.LONG} <= set(names)


async def test_escapes_puts_terminal_attacks_in_names_descriptions_and_results(
    stderr_log: TextIO,
) -> None:
    async with connected("escapes", stderr=stderr_log) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        clear = await client.call_tool("clear-screen\x1b[2J\x1b[3J\x1b[H", {})
    for label, attack in TERMINAL_ATTACKS:
        assert f"{label}{attack}" in tools
        assert attack in (tools[f"{label}{attack}"].description or "")
    assert "\x1b]52;c;" in (tools["plain_name"].description or "")
    assert "\u202e" in (tools["plain_name"].description or "")
    assert text_of(clear) == "result of clear-screen: \x1b[2J\x1b[3J\x1b[H end"


async def test_hangs_in_call_never_answers_that_call_but_the_rest(stderr_log: TextIO) -> None:
    async with connected("hangs_in_call", stderr=stderr_log) as client:
        with pytest.raises(MCPError, match="timed out"):
            await client.call_tool("hang", {}, read_timeout_seconds=SILENT)
        assert text_of(await client.call_tool("echo", {"text": "alive"})) == "alive"


async def test_bad_schema_lists_schemas_as_given(stderr_log: TextIO) -> None:
    async with connected("bad_schema", stderr=stderr_log) as client:
        tools = (await client.list_tools()).tools
        called = await client.call_tool("ref_cycle", {})
    assert {tool.name: tool.input_schema for tool in tools} == bad_schema.SCHEMAS
    assert text_of(called) == "called ref_cycle"


async def test_bad_schema_flags_spoil_the_whole_listing(stderr_log: TextIO) -> None:
    async with connected("bad_schema", "--not-object", stderr=stderr_log) as client:
        with pytest.raises(ValueError, match=r"inputSchema\.type"):
            await client.list_tools()
    async with connected("bad_schema", "--too-deep-to-parse", stderr=stderr_log) as client:
        with anyio.move_on_after(SILENT) as silence:
            await client.list_tools()
    assert silence.cancelled_caught, "the client read a listing past its parser's depth"


def _rpc(process: subprocess.Popen[bytes], *requests: dict[str, Any]) -> list[Any]:
    """Send JSON-RPC requests by hand; the answers, in order."""
    assert process.stdin is not None and process.stdout is not None
    for request in requests:
        process.stdin.write(json.dumps({"jsonrpc": "2.0", **request}).encode() + b"\n")
    process.stdin.flush()
    return [json.loads(process.stdout.readline()) for _ in requests]


def _wait_for_lines(stream: IO[bytes], *wanted: str) -> None:
    """Read ``stream`` until every wanted line has come."""
    missing = set(wanted)
    while missing:
        line = stream.readline()
        assert line, f"the stream ended before {sorted(missing)}"
        missing.discard(line.decode().strip())


@pytest.mark.parametrize("regroups", [False, True], ids=["same-group", "own-group"])
def test_ignores_eof_outlives_stdin_and_sigterm_with_its_child(
    tmp_path: Path, regroups: bool
) -> None:
    pid_files = ["--pid-file", str(tmp_path / "server.pid")]
    pid_files += ["--child-pid-file", str(tmp_path / "child.pid")]
    command = server_command("ignores_eof", *pid_files, *(["--child-regroups"] if regroups else []))
    pipe = subprocess.PIPE
    process = subprocess.Popen(
        command, stdin=pipe, stdout=pipe, stderr=pipe, start_new_session=True
    )
    server, child = wait_for_pid(tmp_path / "server.pid"), wait_for_pid(tmp_path / "child.pid")
    try:
        assert process.stdin is not None and process.stderr is not None
        _, pids = _rpc(
            process,
            {"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
            {"id": 2, "method": "tools/call", "params": {"name": "pids", "arguments": {}}},
        )
        said = json.loads(pids["result"]["content"][0]["text"])
        assert said == {"server": server, "child": child}
        assert (os.getpgid(child) == child) is regroups and os.getsid(child) == server
        process.stdin.close()
        _wait_for_lines(process.stderr, "server ignored EOF on stdin")
        os.kill(server, signal.SIGTERM)
        os.kill(child, signal.SIGTERM)
        _wait_for_lines(process.stderr, "server ignored SIGTERM", "child ignored SIGTERM")
        assert not process_gone(server) and not process_gone(child)
        os.killpg(server, signal.SIGKILL)
        os.kill(child, signal.SIGKILL)
        assert wait_until_gone([server, child]) == []
    finally:
        kill_leftovers([server, child])
        process.wait()
