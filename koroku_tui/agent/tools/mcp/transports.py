"""How Koroku reaches a server: a local process over stdio, or a remote one over streamable HTTP.

- stdio: the server runs under ``guard.py`` (on POSIX), so that it dies with
  Koroku however Koroku ends; in the workspace unless its ``cwd`` says
  otherwise; with Koroku's credential-free tool environment (``child_env.py``,
  as ``run_command`` gets it) plus its own ``env``; its stderr into
  ``koroku.log`` (``server_log.py``).
- streamable HTTP: an httpx2 client sending the ``http_headers`` and the
  entry's ``bearer_token`` (read by the config loader from the variable
  ``bearer_token_env_var`` names) as ``Authorization: Bearer``. A token an
  HTTP header cannot carry is refused before anything is sent: the HTTP
  stack's own error would quote it (in the failure sentence and the log).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator, Collection
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from koroku_tui.agent.tools.child_env import tool_environment
from koroku_tui.agent.tools.mcp import guard
from koroku_tui.agent.tools.mcp.server_log import ServerLog
from koroku_tui.config.mcp_servers import McpServerSettings

__all__ = ["UnsendableToken", "local_streams", "remote_streams", "stdio_parameters"]

CONNECT_TIMEOUT = 30.0
"""Seconds to connect to a remote server (or send it a request)."""
LEAST_READ_TIMEOUT = 300.0
"""Seconds a remote server may stay silent on an open stream (the SDK's default)."""
_SENDABLE_TOKEN = re.compile(r"[\x21-\x7e]+")
"""Visible ASCII: what a bearer token is made of, and what a header carries as it is."""


class UnsendableToken(ValueError):
    """The server's token holds characters an HTTP header cannot carry (its value unsaid)."""


def stdio_parameters(
    settings: McpServerSettings, workspace: Path, env_allow: Collection[str] = ()
) -> StdioServerParameters:
    """How the SDK starts a local server: its command under the guard, its folder, its
    environment."""
    assert settings.command is not None
    command = [settings.command, *settings.args]
    if os.name == "posix":
        # -I -S: the guard is standard library only; ~20 ms instead of a full start.
        command = [
            sys.executable,
            "-I",
            "-S",
            guard.__file__,
            "--parent",
            str(os.getpid()),
            "--",
            *command,
        ]
    # A server inherits Koroku's environment as a command does: without credentials.
    env = tool_environment(env_allow) | dict(settings.env)
    cwd = settings.cwd.expanduser() if settings.cwd is not None else workspace
    # "replace": a byte that is not UTF-8 on its stdout would end the SDK's reader but not
    # the server, and every call would wait out its time limit, answered or not.
    return StdioServerParameters(
        command=command[0], args=command[1:], env=env, cwd=cwd, encoding_error_handler="replace"
    )


@asynccontextmanager
async def local_streams(parameters: StdioServerParameters, log: ServerLog) -> AsyncIterator[Any]:
    """The started server's read and write streams; its stderr followed by ``log``."""
    async with AsyncExitStack() as stack:
        try:
            streams = await stack.enter_async_context(stdio_client(parameters, errlog=log.errlog))
        finally:
            await log.follow()  # the server holds stderr now (or never will)
        yield streams


@asynccontextmanager
async def remote_streams(settings: McpServerSettings) -> AsyncIterator[Any]:
    """The streams of a session with the remote server ``settings.url``."""
    assert settings.url is not None
    headers = dict(settings.http_headers)
    if settings.bearer_token is not None:
        token = settings.bearer_token.get_secret_value()
        if not _SENDABLE_TOKEN.fullmatch(token):
            raise UnsendableToken(
                f"its token (the variable {settings.bearer_token_env_var}) holds characters "
                "an HTTP header cannot carry (only visible ASCII)"
            )
        headers["Authorization"] = f"Bearer {token}"
    read = max(LEAST_READ_TIMEOUT, settings.tool_timeout_sec)
    timeout = httpx2.Timeout(CONNECT_TIMEOUT, read=read)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as client,
        streamable_http_client(settings.url, http_client=client) as streams,
    ):
        yield streams
