"""stdout and stderr that cannot drive the user's terminal, for ``--print``.

Model text and server error messages are untrusted: an OSC 52 sequence in
either would set the clipboard, ``ESC [ 2 J`` would clear the screen. Inside
:func:`cleaned_std_streams` everything written to ``sys.stdout`` and
``sys.stderr`` (by Koroku or anything it calls) goes through
:func:`koroku_tui.text.safety.for_terminal` first, the rule the full-screen
app uses. Only stdout may be left raw, and only when it is not a terminal
and the user asked for it (``--raw``): a pipe into a file or another program
then gets the model's text byte for byte.

Both streams also write what their encoding cannot hold as ``\\xe9``-style
escapes (``errors="backslashreplace"``): with ``PYTHONIOENCODING=ascii`` or a
C locale, one "é" in an answer must not turn into an error and exit 1.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO, cast

from koroku_tui.text.safety import for_terminal

__all__ = ["CleanTextStream", "cleaned_std_streams"]


class CleanTextStream(io.TextIOBase):
    """Writes to ``target`` with escape sequences and control characters taken out.

    Each write is cleaned on its own. A sequence split over two writes loses
    its ESC in the first and shows the rest as plain text: untidy, harmless.
    """

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self.target = target

    def write(self, text: str, /) -> int:
        self.target.write(_encodable(for_terminal(text), self.target))
        return len(text)

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()


def _encodable(text: str, target: TextIO) -> str:
    """``text`` with what ``target``'s encoding cannot hold written as escapes."""
    encoding = getattr(target, "encoding", None)
    if not encoding:
        return text
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:  # an encoding Python does not know: leave it to the stream
        pass
    return text


@contextmanager
def _tolerant(stream: TextIO) -> Iterator[None]:
    """``stream`` writing unencodable characters as escapes within the block."""
    if not isinstance(stream, io.TextIOWrapper) or stream.errors == "backslashreplace":
        yield
        return
    errors = stream.errors
    stream.reconfigure(errors="backslashreplace")
    try:
        yield
    finally:
        stream.reconfigure(errors=errors)


@contextmanager
def cleaned_std_streams(*, raw_stdout: bool = False) -> Iterator[None]:
    """Clean ``sys.stdout`` and ``sys.stderr`` within the block; restore them after.

    ``raw_stdout`` leaves stdout untouched, but only when it is not a
    terminal: on a terminal the bytes would reach the screen just the same.
    """
    saved = sys.stdout, sys.stderr
    # Whatever wrote to the originals before must reach the screen first.
    for stream in saved:
        stream.flush()
    with _tolerant(saved[0]), _tolerant(saved[1]):
        if not (raw_stdout and not sys.stdout.isatty()):
            sys.stdout = cast(TextIO, CleanTextStream(sys.stdout))
        sys.stderr = cast(TextIO, CleanTextStream(sys.stderr))
        try:
            yield
        finally:
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            sys.stdout, sys.stderr = saved
