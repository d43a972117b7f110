"""A stdio MCP server with a tool that never answers, while the rest still does.

Usage: python hangs_in_call.py

Tools: ``echo`` works; ``hang`` is read and never answered (``ping`` and
other calls keep working). It exits when stdin ends.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: holds mcp_servers.raw_rpc
from mcp_servers.raw_rpc import RawServer, RawTool, echo_tool


def main() -> None:
    """Serve until stdin ends."""
    hang = RawTool("hang", lambda arguments: None, "Never answers.")
    RawServer("hangs-in-call", [echo_tool(), hang]).serve()


if __name__ == "__main__":
    main()
