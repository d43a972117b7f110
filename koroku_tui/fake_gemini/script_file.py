"""Load a script from JSON, for ``python -m koroku_tui.fake_gemini --script FILE``.

The file holds a list; each entry is one of::

    {"text": "hello", "thought": "...", "pieces": 3, "signature_chunk": true}
    {"calls": [{"name": "read_file", "args": {"path": "a.txt"}, "id": "c1"}],
     "text": "optional", "thought": "optional"}
    {"error": 429, "message": "optional", "status": "optional"}
    {"hang": true}
    {"blocked": "SAFETY"}                   (the prompt refused: no candidates)

Text and call entries also take ``finish_reason``, ``delay``, ``chunk_delay``,
``prompt_tokens``, ``stream_error_after`` (+ optional ``stream_error`` code) and
``cut_after``. Every entry takes ``delay``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from koroku_tui.fake_gemini.script import (
    Call,
    ErrorReply,
    Hang,
    Reply,
    ScriptItem,
    Usage,
    blocked_prompt,
    call_reply,
    error_reply,
    stream_cut,
    stream_error,
    text_reply,
)


class ScriptFileError(ValueError):
    """The script file is not in the expected shape."""


def _reply(entry: dict[str, Any]) -> Reply:
    common: dict[str, Any] = {
        "thought": entry.get("thought"),
        "finish_reason": entry.get("finish_reason", "STOP"),
        "delay": float(entry.get("delay", 0.0)),
        "chunk_delay": float(entry.get("chunk_delay", 0.0)),
        "usage": Usage(prompt_tokens=entry.get("prompt_tokens")),
    }
    if "calls" in entry:
        calls = [Call(c["name"], c.get("args", {}), c.get("id")) for c in entry["calls"]]
        reply = call_reply(*calls, text=entry.get("text"), **common)
    else:
        reply = text_reply(
            str(entry["text"]),
            pieces=int(entry.get("pieces", 1)),
            signature_chunk=bool(entry.get("signature_chunk", False)),
            **common,
        )
    if "stream_error_after" in entry:
        error = ErrorReply(int(entry.get("stream_error", 500)))
        reply = stream_error(reply, after=int(entry["stream_error_after"]), error=error)
    if "cut_after" in entry:
        reply = stream_cut(reply, after=int(entry["cut_after"]))
    return reply


def parse_entry(entry: object) -> ScriptItem:
    """One JSON entry to a script item."""
    if not isinstance(entry, dict):
        raise ScriptFileError(f"script entry must be an object, got {entry!r}")
    try:
        if entry.get("hang"):
            return Hang()
        if "blocked" in entry:
            return blocked_prompt(str(entry["blocked"]))
        if "error" in entry:
            return error_reply(
                int(entry["error"]),
                entry.get("message"),
                status=entry.get("status"),
                delay=float(entry.get("delay", 0.0)),
            )
        if "text" in entry or "calls" in entry:
            return _reply(entry)
    except (KeyError, TypeError, ValueError) as exc:
        raise ScriptFileError(f"bad script entry {entry!r}: {exc}") from exc
    raise ScriptFileError(f"script entry needs text, calls, error, blocked or hang: {entry!r}")


def load_script(path: Path) -> list[ScriptItem]:
    """Read a JSON script file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ScriptFileError("a script file holds a JSON list")
    return [parse_entry(entry) for entry in data]
