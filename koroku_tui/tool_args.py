"""Tool-call arguments as text a user can check: JSON whose hidden characters stay raw.

The arguments come from the model. Every place that shows them (approval
dialog, transcript, sidebar, history, export) writes them with
:func:`args_text` and then shows hidden characters as visible escapes
(``koroku_tui.text_safety``). Core code: no Textual, no Rich.
"""

from __future__ import annotations

import json
from typing import Any

from koroku_tui.text_safety import escape_hidden, hidden_characters

__all__ = ["args_hidden_characters", "args_shown", "args_text"]


def args_text(args: Any, indent: int | None = None) -> str:
    """``args`` laid out like ``json.dumps`` (``indent`` as there), hidden characters raw.

    Unlike ``json.dumps``, control characters inside strings are left for
    ``escape_hidden`` to show as ``\\u001b``-style escapes like every other
    hidden character (``json.dumps`` would write some as ``\\r`` or ``\\b``).
    Newline and tab are written ``\\n`` and ``\\t`` as in JSON, so a
    multi-line command shows where its lines break. Once escaped, the text
    is JSON that reads back to ``args`` (short of characters above U+FFFF).
    """
    return _encode(args, indent, 0)


def args_shown(args: Any, indent: int | None = None) -> str:
    """:func:`args_text` with every hidden character as a visible escape."""
    return escape_hidden(args_text(args, indent))


def args_hidden_characters(args: Any) -> list[str]:
    """``U+XXXX`` of every hidden character in the argument names and values."""
    return hidden_characters(args_text(args))


def _encode(value: Any, indent: int | None, depth: int) -> str:
    if isinstance(value, dict):
        items = [f"{_string(str(k))}: {_encode(v, indent, depth + 1)}" for k, v in value.items()]
        return _container("{", items, "}", indent, depth)
    if isinstance(value, list | tuple):
        return _container("[", [_encode(v, indent, depth + 1) for v in value], "]", indent, depth)
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return _string(str(value))


def _container(start: str, items: list[str], end: str, indent: int | None, depth: int) -> str:
    if not items:
        return start + end
    if indent is None:
        return start + ", ".join(items) + end
    inner, outer = " " * indent * (depth + 1), " " * indent * depth
    return f"{start}\n{inner}" + f",\n{inner}".join(items) + f"\n{outer}{end}"


def _string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\t", "\\t") + '"'
