"""A server's ``CallToolResult`` as the text the model reads, or a failed call.

Text content is the text; embedded text resources are their text under a
line naming them; images, audio, binary resources and links to resources are
one short line each (kind, type, size, address): the model cannot read them
inline through a function response. Structured content is the JSON, when no
text came with it (a server that sends both sends the same JSON as text, by
the protocol's advice). ``is_error`` makes the call a failed one (✗), the
server's text its sentence.

A long answer is cut here to the built-in tools' cap (head and tail, with the
executor's note, which then has nothing left to cut) without joining its
pieces first: a 10 MB answer costs the cut copy, not another 10 MB string.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from koroku_tui.agent.tools.executor import cut_note
from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.tool_settings import MAX_OUTPUT_CHARS
from koroku_tui.privacy.home_files import size_text

if TYPE_CHECKING:
    import mcp_types

__all__ = ["capped_join", "result_text"]


def _base64_size(data: str) -> int:
    """The size of what ``data`` (base64) decodes to, without decoding it."""
    padding = len(data) - len(data.rstrip("="))
    return max(0, len(data) * 3 // 4 - padding)


def _described(kind: str, *facts: str | None) -> str:
    shown = ", ".join(fact for fact in facts if fact)
    return f"[{kind}: {shown}]" if shown else f"[{kind}]"


def _pieces(block: Any) -> list[str]:
    """One content block as lines of text (see the module docstring)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return [str(block.text)]
    if kind in ("image", "audio"):
        return [_described(kind, block.mime_type, size_text(_base64_size(str(block.data))))]
    if kind == "resource_link":
        size = size_text(block.size) if isinstance(block.size, int) else None
        return [_described("resource link", block.name, str(block.uri), block.mime_type, size)]
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return [_described("resource", str(resource.uri), resource.mime_type), text]
        blob = size_text(_base64_size(str(getattr(resource, "blob", ""))))
        return [_described("resource", str(resource.uri), resource.mime_type, blob)]
    return [_described(f"content of type {kind!r}")]


def _chars(pieces: Sequence[str], count: int, *, from_end: bool = False) -> str:
    """The first (or last) ``count`` characters of the pieces joined by newlines."""
    taken: list[str] = []
    ordered: Iterator[str] = reversed(pieces) if from_end else iter(pieces)
    for index, piece in enumerate(ordered):
        if count <= 0:
            break
        if index:
            taken.append("\n")
            count -= 1
        part = (piece[-count:] if count else "") if from_end else piece[:count]
        taken.append(part)
        count -= len(part)
    return "".join(reversed(taken) if from_end else taken)


def capped_join(pieces: Sequence[str], limit: int) -> str:
    """``"\\n".join(pieces)``, cut to at most ``limit`` characters note included (head and
    tail kept, as ``cap_text`` does) without building the whole joined text."""
    total = sum(map(len, pieces)) + max(0, len(pieces) - 1)
    if total <= limit:
        return "\n".join(pieces)
    keep = max(0, limit - len(cut_note(total, limit)))
    head = keep * 3 // 4
    note = cut_note(total - keep, limit)
    return _chars(pieces, head) + note + _chars(pieces, keep - head, from_end=True)


def result_text(result: mcp_types.CallToolResult, limit: int = MAX_OUTPUT_CHARS) -> str:
    """What the model reads of ``result``; raises ``ToolError`` (the server's text) when
    the server says the call failed."""
    pieces = [piece for block in result.content for piece in _pieces(block)]
    has_text = any(getattr(block, "type", None) == "text" for block in result.content)
    if result.structured_content is not None and not has_text:
        try:
            pieces.append(json.dumps(result.structured_content, ensure_ascii=False))
        except (TypeError, ValueError):  # not JSON after all (a NaN is): as Python shows it
            pieces.append(repr(result.structured_content))
    text = capped_join(pieces, limit)
    if result.is_error:
        raise ToolError(text or "The server said the call failed, without saying why.")
    return text
