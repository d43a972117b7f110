"""stdout and stderr that cannot drive the user's terminal, for ``--print``.

Model text and server error messages are untrusted: an OSC 52 sequence in
either would set the clipboard, ``ESC [ 2 J`` would clear the screen. Inside
:func:`cleaned_std_streams` everything written to ``sys.stdout`` and
``sys.stderr`` (by Koroku or anything it calls) goes through
:func:`koroku_tui.text_safety.for_terminal` first, the rule the full-screen
app uses. Only stdout may be left raw, and only when it is not a terminal
and the user asked for it (``--raw``): a pipe into a file or another program
then gets the model's text byte for byte.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO, cast

from koroku_tui.text_safety import for_terminal

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
        self.target.write(for_terminal(text))
        return len(text)

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()


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
    if not (raw_stdout and not sys.stdout.isatty()):
        sys.stdout = cast(TextIO, CleanTextStream(sys.stdout))
    sys.stderr = cast(TextIO, CleanTextStream(sys.stderr))
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        sys.stdout, sys.stderr = saved
