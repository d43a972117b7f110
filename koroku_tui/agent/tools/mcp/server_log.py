"""A stdio server's stderr: every line into ``koroku.log``, the last one kept for its sentence.

The server writes its log (and its traceback, when it dies) on stderr. Its
stderr is a pipe whose read end Koroku's event loop follows, line by line:
each goes to the log under the server's name, and the last one is what the
failure sentence quotes ("it stopped; last on its stderr: ...").

One start of a server logs at most :data:`LOGGED_BYTES`: the log keeps a few
megabytes (rotated), and a server writing a hundred would leave none of
Koroku's own lines in it (and keep Koroku busy logging for half a minute).
Its last line is still followed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import IO, TextIO

from koroku_tui.text.safety import escape_hidden

__all__ = ["LAST_LINE_CHARS", "LOGGED_BYTES", "ServerLog", "with_stderr_line"]

logger = logging.getLogger("koroku_tui.mcp.stderr")

LAST_LINE_CHARS = 200
"""The last line is quoted at most this long."""
LOGGED_BYTES = 1_000_000
"""What one start of a server may put in ``koroku.log`` (the rest of its stderr is not)."""
_LONGEST_LINE = 8192
"""A line longer than this is logged in pieces (a server that never writes a newline)."""


def with_stderr_line(clause: str, line: str) -> str:
    """``clause`` and, if there is one, the last line the server wrote on stderr."""
    return f"{clause}; the last line on its stderr: {line}" if line else clause


class _Lines(asyncio.Protocol):
    def __init__(self, log: ServerLog) -> None:
        self._log = log
        self._partial = b""

    def data_received(self, data: bytes) -> None:
        *lines, self._partial = (self._partial + data).split(b"\n")
        while len(self._partial) > _LONGEST_LINE:
            lines.append(self._partial[:_LONGEST_LINE])
            self._partial = self._partial[_LONGEST_LINE:]
        for line in lines:
            self._log.add(line)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._partial:
            self._log.add(self._partial)
        self._partial = b""
        self._log.ended.set()


class ServerLog:
    """The stderr pipe of one server process (one start of it)."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._last = b""
        self._logged = 0
        self.ended = asyncio.Event()
        """Set once every process holding the pipe's write end is gone."""
        read_end, write_end = os.pipe()
        self._reader: IO[bytes] | None = os.fdopen(read_end, "rb", buffering=0)
        self.errlog: TextIO = os.fdopen(write_end, "w")
        """What the server's stderr is (the SDK's ``errlog``): closed here once it started."""
        self._transport: asyncio.BaseTransport | None = None

    @property
    def last_line(self) -> str:
        """The last line it wrote that was not blank (hidden characters escaped, cut)."""
        line = self._last.decode(errors="replace").strip()
        return escape_hidden(line)[:LAST_LINE_CHARS]

    def add(self, raw: bytes) -> None:
        """Log one line the server wrote (up to :data:`LOGGED_BYTES`), and keep it if it
        says something."""
        if raw.strip():
            self._last = raw
        if self._logged >= LOGGED_BYTES:
            return
        self._logged += len(raw) + 1
        logger.info("[%s] %s", self.server, raw.decode(errors="replace").rstrip("\r"))
        if self._logged >= LOGGED_BYTES:
            cap = f"{LOGGED_BYTES:,}"
            logger.info(
                "[%s] (the rest of its stderr is not logged: over %s bytes)", self.server, cap
            )

    async def follow(self) -> None:
        """Read the pipe in the event loop (the server holds the write end now)."""
        self.errlog.close()
        if self._reader is None:
            return
        loop = asyncio.get_running_loop()
        reader, self._reader = self._reader, None
        self._transport, _ = await loop.connect_read_pipe(lambda: _Lines(self), reader)

    def close(self) -> None:
        """Stop following (what is still in the pipe is dropped) and release both ends."""
        with contextlib.suppress(OSError):
            self.errlog.close()
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._transport is not None:
            self._transport.close()
            self._transport = None
