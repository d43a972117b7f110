"""JSON text of values nested past Python's recursion limit, as ``json.dumps`` writes it.

A model can send call arguments nested thousands of levels deep (Koroku
answers them "nested too deeply", ``koroku_tui.agent.wire.call_depth``). The
fake must be able to send such a reply and count its tokens: ``json.dumps``
recurses once per level and raises ``RecursionError`` some 1,000 levels down.
:func:`dumps` writes the same text with an explicit stack instead.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps", "loads"]


class _Token(str):
    """Literal JSON text on the stack (brackets, separators, a key), never a value."""


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """``json.dumps(value, sort_keys=sort_keys)``, at any depth."""
    try:
        return json.dumps(value, sort_keys=sort_keys)
    except RecursionError:
        return _dumps_flat(value, sort_keys=sort_keys)


def loads(raw: bytes | str) -> Any:
    """``json.loads``; text nested too deeply for Python's parser is a ``ValueError`` too.

    Gemini answers such a body 400 as invalid JSON; the fake does the same
    instead of failing its request thread.
    """
    try:
        return json.loads(raw)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply to parse") from exc


def _dumps_flat(value: Any, *, sort_keys: bool) -> str:
    out: list[str] = []
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, _Token):
            out.append(item)
        elif isinstance(item, dict):
            keys = sorted(item) if sort_keys else list(item)
            pieces: list[Any] = [_Token("{")]
            for index, key in enumerate(keys):
                if index:
                    pieces.append(_Token(", "))
                pieces += [_Token(json.dumps(key) + ": "), item[key]]
            pending.extend(reversed([*pieces, _Token("}")]))
        elif isinstance(item, list | tuple):
            pieces = [_Token("[")]
            for index, element in enumerate(item):
                if index:
                    pieces.append(_Token(", "))
                pieces.append(element)
            pending.extend(reversed([*pieces, _Token("]")]))
        else:
            out.append(json.dumps(item))
    return "".join(out)
