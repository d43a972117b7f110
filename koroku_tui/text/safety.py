"""Untrusted text made safe to show: visible escapes for what a user approves, clean terminal text.

Core code (no Textual, no Rich): the TUI, the exporter and ``--print`` all use it.

Two rules for two situations:

* What a user *approves* (tool arguments) must show every character that
  is there. :func:`escape_hidden` turns each character a terminal would
  hide, swallow or use to reorder the line into a visible ``\\u009d``-style
  escape. Nothing is dropped and nothing reaches the terminal raw, so
  ``echo hello\\u009d; touch PWNED`` shows in full instead of as ``echo hello``.
* Text that is only *read* (model answers, server messages, history) goes
  through :func:`for_terminal`: :func:`sanitize` removes whole escape
  sequences and other controls, then bidi controls and lone surrogates
  become visible escapes. The full-screen app (``ui.safe_text``) and the
  plain stdout/stderr of ``--print`` use the same function.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterator
from typing import Any, TypeVar

_T = TypeVar("_T")

__all__ = [
    "BIDI_CONTROLS",
    "STRING_SEQUENCE_LIMIT",
    "StreamCleaner",
    "escape_controls",
    "escape_hidden",
    "escape_hidden_within",
    "for_terminal",
    "hidden_characters",
    "hidden_pieces",
    "is_hidden",
    "sanitize",
    "settled_length",
    "unescape_hidden",
    "without_lone_surrogates",
]

BIDI_CONTROLS = frozenset(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x061C]))
"""Embeddings, overrides and isolates, and the Arabic letter mark: they reorder a line."""

# Characters that terminals draw as blank space though they are not
# spaces (Hangul fillers, the Braille blank): they can pad a command out of sight.
_BLANK_GLYPHS = frozenset(map(chr, [0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800]))
# Marks that draw nothing and that Unicode lists as default-ignorable but
# files as "nonspacing marks" (Mn), so the categories below miss them: the
# combining grapheme joiner, the Khmer inherent vowels, the Mongolian free
# variation selectors and the variation selectors (VS1-VS256). Appended to a
# word they change no glyph, but they are bytes the shell sees.
_INVISIBLE_MARKS = frozenset(
    map(
        chr,
        [
            0x034F,
            0x17B4,
            0x17B5,
            *range(0x180B, 0x1810),
            *range(0xFE00, 0xFE10),
            *range(0xE0100, 0xE01F0),
        ],
    )
)
# Cc: C0, DEL, C1. Cf: format characters (zero-width space/joiners, bidi,
# BOM, word joiner, tags...). Zl/Zp: line and paragraph separators, which
# some renderers break on. Cs: lone surrogates, which cannot even be encoded.
# Cn: unassigned code points, which no terminal can be trusted to draw.
# Zs: spaces other than U+0020 (no-break space, en/em/thin spaces, the
# ideographic space...): they look like the space the shell splits words on,
# but to /bin/sh they are part of a word, so "safe\u00a0#; touch X" is no
# comment. The plain space is the one kept.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs", "Cs", "Cn"})
_KEPT = frozenset("\n\t ")
_SHOWN_YET_HIDDEN = _BLANK_GLYPHS | _INVISIBLE_MARKS
# Printable characters (str.isprintable() is True) that are hidden all the same.
_PRINTABLE_BUT_HIDDEN = re.compile("[" + "".join(sorted(_SHOWN_YET_HIDDEN)) + "]")


def is_hidden(char: str) -> bool:
    """True for a character a terminal would not show as itself (``\\n``, ``\\t``, space are shown).

    That is controls, format characters (zero-width, bidi, tags), spaces
    other than U+0020, line/paragraph separators, lone surrogates, unassigned
    code points, blank-looking letters and invisible marks (variation selectors...).
    """
    if char in _KEPT:
        return False
    return unicodedata.category(char) in _HIDDEN_CATEGORIES or char in _SHOWN_YET_HIDDEN


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def hidden_pieces(text: str) -> Iterator[tuple[str, bool]]:
    """``text`` as runs of ``(piece, escaped)``: shown characters, and escapes of hidden ones.

    Joining the pieces gives :func:`escape_hidden`; the flag lets a UI style
    the escapes so they cannot pass for text the model typed.
    """
    start = 0
    for index, char in enumerate(text):
        if is_hidden(char):
            if start < index:
                yield text[start:index], False
            yield _escape(char), True
            start = index + 1
    if start < len(text):
        yield text[start:], False


def escape_hidden(text: str) -> str:
    """``text`` with every hidden character as a visible escape (``\\x9d`` becomes ``\\u009d``).

    Newline and tab stay. ESC becomes ``\\u001b``, so an escape sequence is
    shown, never interpreted. Code points above U+FFFF use ``\\U0001xxxx``.
    """
    if text.isprintable() and not _PRINTABLE_BUT_HIDDEN.search(text):
        # Fast path: isprintable() is False for every Cc/Cf/Zl/Zp/Zs/Cs/Cn
        # character but the plain space, which is not hidden.
        return text
    return "".join(piece for piece, _ in hidden_pieces(text))


_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})")


def unescape_hidden(text: str) -> str:
    """:func:`escape_hidden` undone: each escape of a hidden character is that character again.

    An escape of a shown one (``\\u0041``) is text the user typed, and stays.
    """

    def hidden(found: re.Match[str]) -> str:
        code = int(found.group(1) or found.group(2), 16)
        if code > sys.maxunicode or 0xD800 <= code <= 0xDFFF:
            return found.group(0)
        return chr(code) if is_hidden(chr(code)) else found.group(0)

    return _ESCAPE.sub(hidden, text)


def escape_hidden_within(text: str, limit: int) -> tuple[str, int]:
    """The start of :func:`escape_hidden` ``(text)`` in at most ``limit`` characters, whole escapes.

    Also returns how many characters of ``text`` it shows, so a caller can
    say how many more there are.
    """
    shown: list[str] = []
    room, used = limit, 0
    for piece, escaped in hidden_pieces(text[:limit]):
        if len(piece) > room:
            if not escaped:
                shown.append(piece[:room])
                used += room
            break
        shown.append(piece)
        room -= len(piece)
        used += 1 if escaped else len(piece)
    return "".join(shown), used


def hidden_characters(text: str) -> list[str]:
    """The distinct hidden characters of ``text`` as ``U+XXXX`` names, in order of appearance."""
    seen = dict.fromkeys(f"U+{ord(char):04X}" for char in text if is_hidden(char))
    return list(seen)


STRING_SEQUENCE_LIMIT = 4096
"""Longest body of an OSC/DCS/SOS/PM/APC string that :func:`sanitize` removes whole."""

# One alternative per escape-sequence family (ECMA-48), both the 7-bit "ESC x"
# form and the 8-bit C1 form. Removing the whole sequence rather than only the
# ESC byte keeps "[2J" or "0;title" from showing up as junk in the text.
# A string sequence (OSC, DCS, SOS, PM, APC) is removed whole only when its
# terminator (BEL or ST) follows within STRING_SEQUENCE_LIMIT printable
# characters. Otherwise only its introducer goes (the last alternative for
# "ESC ]", the control-character pass for 8-bit U+009D): a lone U+009D in
# "safe.\x9d WARNING: ..." must not take the warning with it.
_ESCAPE_SEQUENCE = re.compile(
    rf"""
    (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?      # CSI: colours, cursor, clear
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])                     # OSC, DCS, SOS, PM, APC...
      [^\x00-\x1f\x7f-\x9f]{{0,{STRING_SEQUENCE_LIMIT}}}+            # ...a bounded body...
      (?:\x07|\x1b\\|\x9c)                                       # ...and its BEL or ST
    | \x1b [\x20-\x2f]* [\x30-\x7e]?                              # any other ESC sequence
    """,
    re.VERBOSE,
)
# Everything in C0, DEL and C1 except \t (0x09) and \n (0x0a).
_CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def sanitize(text: str) -> str:
    """``text`` without terminal escape sequences or control characters (``\\n``/``\\t`` stay).

    Carriage returns become newlines (``\\r\\n`` becomes one newline), so
    progress-bar style output keeps its lines instead of being glued together.
    An OSC/DCS/SOS/PM/APC string goes whole only when it is terminated
    within :data:`STRING_SEQUENCE_LIMIT` characters; an unterminated one
    loses only its introducer, so no text after it vanishes.
    The result is stable: ``sanitize(sanitize(t)) == sanitize(t)``.
    """
    if text.isprintable():
        # Fast path for the common case; isprintable() is False for \n and \t
        # too, so anything multi-line takes the full path below.
        return text
    text = text.replace("\r\n", "\n")
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = text.replace("\r", "\n")
    return _CONTROL_CHARACTER.sub("", text)


_STRING_INTRODUCER = re.compile(r"\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]")
# A string sequence's body so far, up to the text's end: no terminator yet
# (a lone ESC at the end may be the first half of ST, "ESC \\").
_OPEN_STRING_BODY = re.compile(r"[^\x00-\x1f\x7f-\x9f]*\x1b?")


def settled_length(text: str) -> int:
    """How much of ``text``, a stream so far, :func:`sanitize` cleans the same whatever follows.

    What is left is a trailing ``\r`` (the first half of ``\r\n``?) or an
    escape sequence not finished yet: cleaned alone, ``"\r" | "\n"`` made
    two line ends and ``"ESC[3" | "1m"`` left ``1m`` in the text.
    """
    end = len(text)
    if text.isprintable():
        return end
    settled = end - 1 if text.endswith("\r") else end
    window = max(0, end - STRING_SEQUENCE_LIMIT - 3)
    strings = list(_STRING_INTRODUCER.finditer(text, window))
    if strings and _OPEN_STRING_BODY.fullmatch(text, strings[-1].end()):
        settled = min(settled, strings[-1].start())
    sequences = list(_ESCAPE_SEQUENCE.finditer(text, window))  # as sanitize reads them
    last = sequences[-1] if sequences else None
    if last is not None and last.end() == end:  # it may go on in the next piece
        settled = min(settled, last.start())
    return settled


class StreamCleaner:
    """:func:`for_terminal` over a text that arrives in pieces, as if on the whole text.

    Each piece's settled start (:func:`settled_length`) is cleaned at once;
    the rest waits for the next piece, or for :meth:`flush` at the end.
    """

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """The clean text ``piece`` settles (with what waited before it)."""
        text = self._held + piece
        settled = settled_length(text)
        self._held = text[settled:]
        return for_terminal(text[:settled])

    @property
    def pending(self) -> str:
        """What waits, cleaned as if the text ended here."""
        return for_terminal(self._held)

    def flush(self) -> str:
        """What waits, cleaned: the text ended."""
        held, self._held = self._held, ""
        return for_terminal(held)


_TERMINAL_UNSAFE = re.compile("[" + "".join(sorted(BIDI_CONTROLS)) + "\ud800-\udfff]")


def for_terminal(text: str) -> str:
    """Read-only ``text`` fit for a terminal: :func:`sanitize`, then bidi controls escaped.

    The one rule for text that is only read, in the full-screen app (answers,
    notices, history) and on ``--print``'s stdout/stderr alike.
    Bidi controls could make the line read differently from what it says,
    and a lone surrogate cannot be encoded (writing it would crash); both
    are shown as ``\\u202e``-style escapes. Letters, emoji and joiners stay.
    """
    return _TERMINAL_UNSAFE.sub(lambda match: _escape(match.group()), sanitize(text))


# What a paste may hold that would not show as itself in the prompt: C0 but
# \t and \n, DEL, C1, line/paragraph separators, bidi controls, lone surrogates.
_PASTED_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + "".join(sorted(BIDI_CONTROLS)) + "\ud800-\udfff]"
)


def escape_controls(text: str) -> str:
    """Pasted ``text`` as the prompt takes it: each control as a visible ``\\u0007``-style escape.

    ESC, BEL, backspace, bidi controls (U+202E...) and the other controls
    would be invisible in the prompt, or act on the terminal; as escapes,
    what the prompt shows is what is sent. Line breaks stay (``\\r\\n``
    and ``\\r`` become ``\\n``, as a terminal's paste sends them), and so do
    tabs, letters, emoji, joiners and every space.
    """
    if text.isprintable():
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _PASTED_UNSAFE.sub(lambda match: _escape(match.group()), text)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(value: _T) -> _T:
    """``value`` (a str, or lists/dicts holding them) with each lone surrogate as U+FFFD.

    JSON can carry ``"\\ud800"``, and Python decodes it to a string that
    neither the database (UTF-8) nor the next request can encode: stored as
    is, it would break the turn and every later one. Text the model hands us
    therefore passes through here first. Values without one come back as is
    (the very object). Nesting depth costs no recursion: the model decides it.
    """
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)  # type: ignore[return-value]
    if not isinstance(value, list | dict) or not _holds_lone_surrogate(value):
        return value
    return _rebuilt(value)  # type: ignore[return-value]


def _holds_lone_surrogate(value: list[Any] | dict[Any, Any]) -> bool:
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                return True
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
    return False


def _rebuilt(value: list[Any] | dict[Any, Any]) -> list[Any] | dict[Any, Any]:
    """A copy of ``value`` with strings cleaned, built level by level from a work list."""

    def clean(item: Any) -> Any:
        return _LONE_SURROGATE.sub("\ufffd", item) if isinstance(item, str) else item

    def shell(item: Any) -> Any:
        if isinstance(item, list | dict):
            copy: list[Any] | dict[Any, Any] = [] if isinstance(item, list) else {}
            pending.append((item, copy))
            return copy
        return clean(item)

    root: list[Any] | dict[Any, Any] = [] if isinstance(value, list) else {}
    pending: list[tuple[Any, Any]] = [(value, root)]
    while pending:
        source, target = pending.pop()
        if isinstance(source, list):
            target.extend(shell(item) for item in source)
        else:
            for key, item in source.items():
                target[clean(key)] = shell(item)
    return root
