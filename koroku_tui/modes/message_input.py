"""The message of ``koroku-tui --print``: from the argument or stdin, always valid text.

Bytes that are not UTF-8 (a Latin-1 file piped in, a name pasted from a
listing) must not reach the database or Gemini as lone surrogates, where they
broke the turn with an internal error. They are decoded with replacement
characters, and stderr says so in one line, so the user knows the model did
not see exactly what they sent.
"""

from __future__ import annotations

import os
from typing import BinaryIO, TextIO

__all__ = ["read_message"]


def read_message(argument: str, stdin: BinaryIO | None, stderr: TextIO) -> str:
    """The text of ``--print ARGUMENT`` (``-`` reads all of ``stdin``), UTF-8 decoded."""
    if argument == "-":
        raw = stdin.read() if stdin is not None else b""
        # `echo hi | koroku-tui --print -` ends with the newline echo adds, not the user.
        raw = raw.removesuffix(b"\n").removesuffix(b"\r") if raw.endswith(b"\n") else raw
        source = "standard input"
    else:
        # Python decoded argv with surrogateescape; get the bytes back.
        raw = os.fsencode(argument)
        source = "the --print message"
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        bad = text.count("\ufffd") - raw.decode("utf-8", errors="ignore").count("\ufffd")
        print(
            f"koroku-tui: {source} is not valid UTF-8; {bad:,} invalid byte sequence"
            f"{'s were' if bad != 1 else ' was'} replaced with U+FFFD.",
            file=stderr,
        )
        return text
