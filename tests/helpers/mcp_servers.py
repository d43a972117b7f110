"""The test MCP servers of ``tests/mcp_servers/``: command lines, config entries, a live HTTP one.

Stdio servers are scripts run by this interpreter::

    server_command("well_behaved", "--tools", "300")
    server_toml("slow", "well_behaved", "--delay-start", "5", startup_timeout_sec=1)
    server_settings("crash", "crashes_mid_call", trust=True)

The HTTP server runs for the length of a ``with http_server() as url`` block,
or of a test taking the ``mcp_http_url`` fixture.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from koroku_tui.config.mcp_servers import McpServerSettings

SERVERS = Path(__file__).resolve().parent.parent / "mcp_servers"
"""The folder holding the servers' scripts."""

NAMES = tuple(sorted(p.stem for p in SERVERS.glob("*.py") if p.stem not in {"__init__", "raw_rpc"}))
"""Every server there is (a script's name without ``.py``)."""

HOST = "127.0.0.1"


def server_path(name: str) -> Path:
    """The script of the server ``name`` (``"well_behaved"``, ``"crashes_mid_call"``...)."""
    if name not in NAMES:
        raise ValueError(f"no test MCP server {name!r}; there are {', '.join(NAMES)}")
    return SERVERS / f"{name}.py"


def server_command(name: str, *args: str) -> list[str]:
    """The command line starting the server ``name`` with ``args``."""
    return [sys.executable, str(server_path(name)), *args]


def server_settings(name: str, *args: str, **keys: Any) -> McpServerSettings:
    """An ``[mcp_servers.X]`` entry starting the server ``name``; ``keys`` are its other keys."""
    command, *arguments = server_command(name, *args)
    return McpServerSettings(command=command, args=arguments, **keys)


def server_toml(key: str, name: str, *args: str, **keys: Any) -> str:
    """The ``[mcp_servers.<key>]`` table of a config file starting the server ``name``."""
    command, *arguments = server_command(name, *args)
    return tomlkit.dumps({"mcp_servers": {key: {"command": command, "args": arguments, **keys}}})


@contextmanager
def http_server(*args: str) -> Iterator[str]:
    """Run ``http_server.py`` with ``args``; yields its URL once it accepts connections.

    The server prints its port on its first line when its socket listens, so
    this waits on that line, not on a sleep. It is stopped when the block ends.
    """
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            server_command("http_server", *args), stdout=subprocess.PIPE, stderr=stderr, text=True
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline().strip()
            if not line.isdigit():
                stderr.seek(0)
                said = stderr.read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"http_server.py never said its port; its stderr:\n{said}")
            yield f"http://{HOST}:{line}/mcp"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()


@pytest.fixture
def mcp_http_url() -> Iterator[str]:
    """The URL of a running ``http_server.py`` (no delay), stopped after the test."""
    with http_server() as url:
        yield url
