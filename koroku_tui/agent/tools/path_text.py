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

Only what ``shown_name`` itself escapes may be escaped. ``\\x2f`` for ``/``
or ``\\x2e`` for ``.`` is refused: ``notes.git\\x2f..\\x2f.git\\x2fconfig``
would look like one odd name in the approval dialog and write ``.git/config``.
A printable character is written as itself, so what the user approves reads
as the path that is used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from koroku_tui.agent.tools.result import ToolError

__all__ = ["is_plain_name", "path_bytes", "shown_name", "shown_path"]

_ESCAPE = re.compile(r"\\(\\|x[0-9a-fA-F]{2})")
# Undecodable bytes arrive as U+DC80..U+DCFF (surrogateescape); C0, DEL and C1
# controls are valid UTF-8 but must not reach a line-based listing raw.
_NEEDS_ESCAPE = re.compile("[\\\\\x00-\x1f\x7f-\x9f\udc80-\udcff]")
# What a \xNN escape may stand for: exactly the characters shown_name escapes
# that way (the backslash has its own escape).
_ESCAPED_AS_BYTES = re.compile("[\x00-\x1f\x7f-\x9f\udc80-\udcff]")


def path_bytes(text: str) -> bytes:
    """The path the model means by ``text``, as bytes (``\\xNN`` and ``\\\\`` undone).

    Raises ``ToolError`` for a path holding a NUL byte, text that is not
    Unicode (a lone surrogate the model sent as a JSON escape), or an escape
    of a character ``shown_name`` shows as itself (``\\x2f`` for ``/``).
    """
    out = bytearray()
    escaped: set[int] = set()  # offsets in ``out`` of the bytes given as \xNN
    position = 0
    for match in _ESCAPE.finditer(text):
        out += _utf8(text[position : match.start()], text)
        escape = match.group(1)
        if escape == "\\":
            out += b"\\"
        else:
            escaped.add(len(out))
            out.append(int(escape[1:], 16))
        position = match.end()
    out += _utf8(text[position:], text)
    if b"\x00" in out:
        raise ToolError(f"Cannot use the path {text!r}: it holds a NUL byte.")
    if escaped:
        _refuse_needless_escapes(bytes(out), escaped, text)
    return bytes(out)


def _refuse_needless_escapes(data: bytes, escaped: set[int], text: str) -> None:
    """Refuse an escape that spells a character ``shown_name`` would show as itself."""
    offset = 0
    for char in data.decode("utf-8", "surrogateescape"):
        size = 1 if "\udc80" <= char <= "\udcff" else len(char.encode("utf-8"))
        spelled = escaped.intersection(range(offset, offset + size))
        if spelled and _ESCAPED_AS_BYTES.fullmatch(char) is None:
            escapes = "".join(f"\\x{byte:02x}" for byte in data[offset : offset + size])
            raise ToolError(
                f"Cannot use the path {text!r}: {escapes} stands for {char!r}, which is "
                "written as itself; \\xNN escapes are only for control characters and "
                "bytes that are not UTF-8, as list_directory shows them."
            )
        offset += size


def is_plain_name(name: bytes) -> bool:
    """True when ``shown_name(name)`` is ``name`` itself: UTF-8 without control characters.

    New files and folders get only such names: a name with an ESC byte or
    bytes that are not UTF-8 would act on, or garble, the user's terminal in
    every later ``ls``.
    """
    text = name.decode("utf-8", "surrogateescape")
    return _ESCAPED_AS_BYTES.search(text) is None


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
