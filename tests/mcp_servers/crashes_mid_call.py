"""A stdio MCP server that answers ``initialize`` and ``tools/list``, then dies inside a call.

Usage: python crashes_mid_call.py

Tools: ``echo`` works; ``boom`` writes ``fatal: boom`` on stderr and exits
with status 1 without answering.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: holds mcp_servers.raw_rpc
from mcp_servers.raw_rpc import Json, RawServer, RawTool, echo_tool

STDERR_LINE = "fatal: boom"


def boom(arguments: Json) -> Json:
    """Die the way a server with a bug does: a last word on stderr, no answer."""
    print(STDERR_LINE, file=sys.stderr, flush=True)
    os._exit(1)


def main() -> None:
    """Serve until stdin ends or ``boom`` is called."""
    RawServer("crashes-mid-call", [echo_tool(), RawTool("boom", boom, "Crash the server.")]).serve()


if __name__ == "__main__":
    main()
