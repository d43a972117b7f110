"""A stdio MCP server whose tool names Gemini cannot take as they are, or that collide.

Usage: python bad_names.py

It declares one tool per entry of ``NAMES``, in that order: names that
collide once cleaned (``get-time``, ``get.time``, ``get time``, ``get_time``),
with spaces, slashes, non-ASCII letters, only non-ASCII, an emoji, a leading
digit, the ``__`` separator, 200 characters (twice, differing only at the
end), an empty name, and ``twin`` declared twice. Each call answers
``called <name>`` with the exact name the server declared, so a test can
tell which tool a cleaned name reached.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: holds mcp_servers.raw_rpc
from mcp_servers.raw_rpc import RawServer, RawTool, says

LONG = "a" * 200

NAMES = [
    "get-time",
    "get.time",
    "get time",
    "get_time",
    "list all files",
    "files/read",
    "wetter_für_köln",
    "天気",
    "🔥hot",
    "3d_render",
    "tool__with__separator",
    LONG,
    LONG[:-1] + "b",
    "",
    "twin",
]
"""Every name declared, in order (``twin`` is then declared a second time)."""


def main() -> None:
    """Serve until stdin ends."""
    tools = [RawTool(name, says(f"called {name}"), f"A tool named {name!r}.") for name in NAMES]
    tools.append(RawTool("twin", says("called twin"), "Another tool named 'twin'."))
    RawServer("bad-names", tools).serve()


if __name__ == "__main__":
    main()
