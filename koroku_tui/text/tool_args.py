"""Tool-call arguments as text a user can check: JSON whose hidden characters stay raw.

The arguments come from the model. Every place that shows them (approval
dialog, transcript, sidebar, history, export) writes them with
:func:`args_text` and then shows hidden characters as visible escapes
(``koroku_tui.text.safety``). The approval dialog and the sidebar use
:func:`args_display`, the same layout as pieces, where a newline inside a
string also breaks the line: ``echo ok # note\\ntouch PWNED`` then reads as
the two lines the shell runs, not as one commented-out line.
Core code: no Textual, no Rich.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from koroku_tui.text.safety import escape_hidden, hidden_characters, hidden_pieces

__all__ = [
    "PieceKind",
    "ShownPiece",
    "args_display",
    "args_hidden_characters",
    "args_multiline",
    "args_shown",
    "args_text",
    "first_shown",
    "line_count",
    "shown_length",
]

PieceKind = Literal["text", "hidden", "break"]
"""``text`` as written; ``hidden``: escapes of hidden characters; ``break``: ``\\n``/``\\t``."""

ShownPiece = tuple[str, PieceKind]


def args_text(args: Any, indent: int | None = None) -> str:
    """``args`` laid out like ``json.dumps`` (``indent`` as there), hidden characters raw.

    Unlike ``json.dumps``, control characters inside strings are left for
    ``escape_hidden`` to show as ``\\u001b``-style escapes like every other
    hidden character (``json.dumps`` would write some as ``\\r`` or ``\\b``).
    Newline and tab are written ``\\n`` and ``\\t`` as in JSON, so a
    multi-line command shows where its lines break. Once escaped, the text
    is JSON that reads back to ``args`` (short of characters above U+FFFF).
    """
    out: list[ShownPiece] = []
    _encode(args, indent, 0, out, line_breaks=False)
    return "".join(text for text, _ in out)


def args_shown(args: Any, indent: int | None = None) -> str:
    """:func:`args_text` with every hidden character as a visible escape."""
    return escape_hidden(args_text(args, indent))


def args_display(args: Any, indent: int = 2) -> list[ShownPiece]:
    """``args`` as :func:`args_shown` lays them out, in pieces a UI can style, lines broken.

    Every ``\\n`` inside a string is written as a ``break`` piece ``\\n``
    followed by a real line break, and a tab as a ``break`` piece ``\\t``;
    hidden characters are ``hidden`` pieces of escapes (a run of them is one
    piece). Joined, the pieces read like JSON whose strings are cut at their
    newlines: the lines of a multi-line command each start a line.
    """
    out: list[ShownPiece] = []
    _encode(args, indent, 0, out, line_breaks=True)
    runs: list[tuple[list[str], PieceKind]] = []
    for text, kind in out:
        if kind == "text":
            for piece, escaped in hidden_pieces(text):
                _add(runs, piece, "hidden" if escaped else "text")
        else:
            _add(runs, text, kind)
    return [("".join(texts), kind) for texts, kind in runs]


def shown_length(pieces: list[ShownPiece]) -> int:
    """How many characters ``pieces`` show."""
    return sum(len(text) for text, _ in pieces)


def first_shown(pieces: list[ShownPiece], limit: int) -> list[ShownPiece]:
    """The pieces that fit in ``limit`` characters; an escape or mark is never cut in half."""
    kept: list[ShownPiece] = []
    room = limit
    for text, kind in pieces:
        if len(text) <= room:
            kept.append((text, kind))
            room -= len(text)
            continue
        if kind == "text":
            kept.append((text[:room], kind))
        elif kind == "hidden":
            # Each escape starts with the run's only backslashes: keep whole ones.
            end = text.rfind("\\", 0, room + 1)
            if end > 0:
                kept.append((text[:end], kind))
        break
    return kept


def args_hidden_characters(args: Any) -> list[str]:
    """``U+XXXX`` of every hidden character in the argument names and values."""
    return hidden_characters(args_text(args))


def line_count(text: str) -> int:
    """Lines the shell would see in ``text``: a final newline ends a line, it starts none."""
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def args_multiline(args: Any) -> list[tuple[str, int]]:
    """``(name, lines)`` of every string value with more than one line, named by its key.

    A list item is named after the key of its list (``"argv"``); a top-level
    value without one, ``""``.
    """
    found: list[tuple[str, int]] = []
    _multiline(args, "", found)
    return found


def _multiline(value: Any, name: str, found: list[tuple[str, int]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _multiline(item, str(key), found)
    elif isinstance(value, list | tuple):
        for item in value:
            _multiline(item, name, found)
    elif isinstance(value, str) and (lines := line_count(value)) > 1:
        found.append((name, lines))


def _add(runs: list[tuple[list[str], PieceKind]], text: str, kind: PieceKind) -> None:
    # Runs are joined once at the end: adding to a string per hidden
    # character would copy it each time (300,000 zero-width spaces: minutes).
    if not text:
        return
    if runs and runs[-1][1] == kind and kind != "break":
        runs[-1][0].append(text)
    else:
        runs.append(([text], kind))


def _encode(
    value: Any, indent: int | None, depth: int, out: list[ShownPiece], *, line_breaks: bool
) -> None:
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
        _container("{", items, "}", indent, depth, out, line_breaks=line_breaks)
    elif isinstance(value, list | tuple):
        _container("[", list(value), "]", indent, depth, out, line_breaks=line_breaks)
    elif value is None or isinstance(value, bool | int | float):
        out.append((json.dumps(value), "text"))
    else:
        _string(str(value), out, line_breaks=line_breaks)


def _container(
    start: str,
    items: list[Any],
    end: str,
    indent: int | None,
    depth: int,
    out: list[ShownPiece],
    *,
    line_breaks: bool,
) -> None:
    if not items:
        out.append((start + end, "text"))
        return
    if indent is None:
        separator, first, last = ", ", start, end
    else:
        inner, outer = " " * indent * (depth + 1), " " * indent * depth
        separator, first, last = f",\n{inner}", f"{start}\n{inner}", f"\n{outer}{end}"
    out.append((first, "text"))
    for number, item in enumerate(items):
        if number:
            out.append((separator, "text"))
        if start == "{":
            key, item = item
            _string(key, out, line_breaks=line_breaks)
            out.append((": ", "text"))
        _encode(item, indent, depth + 1, out, line_breaks=line_breaks)
    out.append((last, "text"))


_NEWLINE_OR_TAB = re.compile(r"([\n\t])")


def _string(text: str, out: list[ShownPiece], *, line_breaks: bool) -> None:
    out.append(('"', "text"))
    for part in _NEWLINE_OR_TAB.split(text):
        if part == "\n":
            out.append(("\\n", "break"))
            if line_breaks:
                out.append(("\n", "text"))
        elif part == "\t":
            out.append(("\\t", "break"))
        elif part:
            out.append((part.replace("\\", "\\\\").replace('"', '\\"'), "text"))
    out.append(('"', "text"))
