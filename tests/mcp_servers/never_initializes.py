"""A stdio MCP server that reads every request and answers none, ``initialize`` included.

Usage: python never_initializes.py

It writes one line on stderr first (``waiting for a database that never
comes``: the last line a client can quote) and exits when stdin ends.
"""

from __future__ import annotations

import sys

STDERR_LINE = "waiting for a database that never comes"


def main() -> None:
    """Swallow stdin until it ends."""
    print(STDERR_LINE, file=sys.stderr, flush=True)
    for _ in sys.stdin.buffer:
        pass


if __name__ == "__main__":
    main()
