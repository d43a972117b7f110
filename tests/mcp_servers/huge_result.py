"""A stdio MCP server whose tool answers 10 MB of text.

Usage: python huge_result.py [--megabytes N]

Tools: ``huge`` answers one text block of N MB (10 by default): numbered
lines ``line 0000001: ...`` of 100 bytes each, so a cut shows where it fell.
``echo`` works too.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: holds mcp_servers.raw_rpc
from mcp_servers.raw_rpc import Json, RawServer, RawTool, echo_tool, text_result

LINE_BYTES = 100


def huge_text(megabytes: float) -> str:
    """``megabytes`` MB of numbered 100-byte lines."""
    count = int(megabytes * 1_000_000) // LINE_BYTES
    filler = "x" * (LINE_BYTES - len("line 0000000: ") - 1)
    return "".join(f"line {number:07d}: {filler}\n" for number in range(count))


def main() -> None:
    """Serve until stdin ends."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=10.0)
    text = huge_text(parser.parse_args().megabytes)

    def huge(arguments: Json) -> Json:
        return text_result(text)

    RawServer("huge-result", [echo_tool(), RawTool("huge", huge, "Answer a lot of text.")]).serve()


if __name__ == "__main__":
    main()
