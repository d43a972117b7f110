"""File names as text the model can read and hand back: bytes in, escapes out, bytes back.

A POSIX name is bytes and need not be UTF-8. The model sees names as text, and
whatever it sees must go back to Gemini and into the database as valid UTF-8
(a lone surrogate from ``surrogateescape`` breaks both). So a name is shown as
it is, except that a byte that is not part of valid UTF-8, a control character
(which would split the one-name-a-line listing or hide text) and a backslash
are written as escapes:

* a byte ``0xff`` that is not UTF-8, or a control character, becomes ``\\xff``
  (a C1 control such as U+009D as its two UTF-8 bytes ``\\xc2\\x9d``);
* a backslash becomes ``\\\\``.

A path from the model is read back the same way, so every shown name reaches
exactly its file. A backslash followed by anything else stays a backslash:
ordinary paths need no escaping.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from koroku_tui.agent.tools.result import ToolError

__all__ = ["path_bytes", "shown_name", "shown_path"]

_ESCAPE = re.compile(r"\\(\\|x[0-9a-fA-F]{2})")
# Undecodable bytes arrive as U+DC80..U+DCFF (surrogateescape); C0, DEL and C1
# controls are valid UTF-8 but must not reach a line-based listing raw.
_NEEDS_ESCAPE = re.compile("[\\\\\x00-\x1f\x7f-\x9f\udc80-\udcff]")


def path_bytes(text: str) -> bytes:
    """The path the model means by ``text``, as bytes (``\\xNN`` and ``\\\\`` undone).

    Raises ``ToolError`` for a path holding a NUL byte or text that is not
    Unicode (a lone surrogate the model sent as a JSON escape).
    """
    out = bytearray()
    position = 0
    for match in _ESCAPE.finditer(text):
        out += _utf8(text[position : match.start()], text)
        escape = match.group(1)
        out += b"\\" if escape == "\\" else bytes([int(escape[1:], 16)])
        position = match.end()
    out += _utf8(text[position:], text)
    if b"\x00" in out:
        raise ToolError(f"Cannot use the path {text!r}: it holds a NUL byte.")
    return bytes(out)


def _utf8(piece: str, whole: str) -> bytes:
    try:
        # surrogateescape: a U+DC80..U+DCFF the model copied is the byte it stands for.
        return piece.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise ToolError(f"Cannot use the path {whole!r}: it is not valid text.") from None


def shown_name(name: bytes) -> str:
    """``name`` as valid UTF-8 text, escaped so that ``path_bytes`` gives ``name`` back."""
    text = name.decode("utf-8", "surrogateescape")
    if _NEEDS_ESCAPE.search(text) is None:
        return text
    return _NEEDS_ESCAPE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\\":
        return "\\\\"
    code = ord(char)
    if code >= 0xDC80:
        return f"\\x{code - 0xDC00:02x}"
    return "".join(f"\\x{byte:02x}" for byte in char.encode("utf-8"))


def shown_path(parts: Iterable[bytes]) -> str:
    """Path components joined with ``/`` and shown escaped; ``.`` for none (the workspace)."""
    return "/".join(shown_name(part) for part in parts) or "."
