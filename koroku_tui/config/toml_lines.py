"""Where things are in a TOML file's text: the line of each key, the place of a syntax error.

``tomllib`` gives values without positions, yet a wrong value must be
named with its line. This reads the lines the way TOML writes keys: a
table header (``[approval]``) sets the table, and ``name = ...`` or
``dotted.name = ...`` sets a key in it. Keys inside an inline table or a
multi-line value are found through the key that holds them.
"""

from __future__ import annotations

import json
import re

__all__ = ["error_place", "key_lines", "line_of"]

_BARE = r"[A-Za-z0-9_-]+"
_QUOTED = r'"(?:[^"\\]|\\.)*"' + r"|'[^']*'"
_PART = rf"\s*(?:{_BARE}|{_QUOTED})\s*"
_DOTTED = rf"{_PART}(?:\.{_PART})*"
_HEADER = re.compile(rf"^\s*\[\[?({_DOTTED})\]\]?\s*(?:#.*)?$")
_ASSIGNMENT = re.compile(rf"^({_DOTTED})=")
_PIECE = re.compile(rf"\s*({_BARE}|{_QUOTED})\s*(?:\.|$)")
_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def _parts(dotted: str) -> tuple[str, ...]:
    """``a."b.c".d`` -> ``("a", "b.c", "d")``."""
    parts = []
    for piece in _PIECE.findall(dotted):
        if piece.startswith('"'):
            try:  # a basic string's escapes are JSON's (``\\u00e9``, ``\\"``)
                piece = json.loads(piece)
            except ValueError:
                piece = piece[1:-1]
        elif piece.startswith("'"):
            piece = piece[1:-1]
        parts.append(piece)
    return tuple(parts)


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Each table and key the text declares -> its first line (from 1)."""
    found: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    in_string: str | None = None
    # TOML ends a line at "\n" only: splitlines() also broke at U+2028, U+0085 or a form
    # feed, which a comment or a string may hold, and every later key's line was off.
    for number, line in enumerate(text.split("\n"), start=1):
        if in_string is not None:  # inside a multi-line string: no keys here
            if line.count(in_string) % 2:
                in_string = None
            continue
        if header := _HEADER.match(line):
            table = _parts(header.group(1))
            found.setdefault(table, number)
            continue
        if assignment := _ASSIGNMENT.match(line):
            found.setdefault(table + _parts(assignment.group(1)), number)
            rest = line[assignment.end() :]
            for quotes in ('"""', "'''"):
                if rest.count(quotes) % 2:
                    in_string = quotes
    return found


def line_of(lines: dict[tuple[str, ...], int], key: tuple[str, ...]) -> int | None:
    """The line of ``key``, else of the nearest key or table that holds it (None: not found)."""
    for end in range(len(key), 0, -1):
        if (line := lines.get(key[:end])) is not None:
            return line
    return None


def error_place(message: str, text: str) -> tuple[str, int, int]:
    """A ``TOMLDecodeError``'s reason, line and column (the error's text holds them)."""
    if match := _AT.search(message):
        return message[: match.start()], int(match.group(1)), int(match.group(2))
    # "(at end of document)": just after the last character (a final "\n" ends no line)
    lines = text.removesuffix("\n").removesuffix("\r").split("\n")
    return message.replace(" (at end of document)", ""), len(lines), len(lines[-1]) + 1
