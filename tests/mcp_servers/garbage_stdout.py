"""A stdio MCP server that writes garbage on stdout before and between its valid messages.

Usage: python garbage_stdout.py

Before its first answer and after each one it writes the next of
``GARBAGE``: plain text, half a JSON object, JSON that is not JSON-RPC, an
answer to a request nobody sent, a blank line. Each garbage line ends with a
newline, so every valid message still stands on a line of its own.
Tools: ``echo``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: holds mcp_servers.raw_rpc
from mcp_servers.raw_rpc import RawServer, echo_tool

GARBAGE = [
    "Starting garbage server v1.0 (debug build)...",
    '{"jsonrpc": "2.0", "id": 1, "result": {"protoc',
    "\x1b[32mINFO\x1b[0m handled a request",
    '{"hello": "world"}',
    '{"jsonrpc": "2.0", "id": 987654, "result": {}}',
    "",
    "Traceback (most recent call last): not really",
]


def main() -> None:
    """Serve until stdin ends, chattering on stdout."""
    RawServer("garbage-stdout", [echo_tool()], noise=GARBAGE).serve()


if __name__ == "__main__":
    main()
