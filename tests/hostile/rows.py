"""Stored rows that parse as JSON but cannot be sent back to Gemini.

Each is ``(kind column, event_json)``, written into a real database with
sqlite3 as a hand edit, a newer Koroku or an older SDK might leave it. Each
must be left out of the model's context with a reason, while the session goes
on working and the history still shows the raw row.
"""

from __future__ import annotations

import json
from typing import Any


def _session(role: str, *parts: dict[str, Any]) -> str:
    return json.dumps({"event_type": "session", "role": role, "parts": list(parts)})


def _text(text: str, signature: str) -> dict[str, Any]:
    return {"kind": "text", "text": text, "thought_signature_b64": signature}


UNSENDABLE_ROWS: list[tuple[str, str]] = [
    ("session", _session("model", _text("hi", "not base64!!"))),  # signature with spaces and "!"
    ("session", _session("model", _text("hi", "abc"))),  # signature with broken padding
    ("session", _session("model", _text("", "é"))),  # signature that is not even ASCII
    (
        "session",
        _session(
            "model",
            {
                "kind": "function_call",
                "function_call": {"name": "read_file", "args": {"path": "a"}, "id": "c1"},
                "thought_signature_b64": "@@@@",
            },
        ),
    ),  # a call whose signature is not base64
    ("session", _session("user", {"kind": "other", "part": {"bogus": 1}})),  # unknown field
    ("session", _session("user", {"kind": "other", "part": {"text": 5}})),  # wrong type
    (
        "session",
        _session("user", {"kind": "other", "part": {"inline_data": {"data": "@@@"}}}),
    ),  # inline data that is not base64
    ("session", _session("system", {"kind": "text", "text": "x"})),  # a role Gemini refuses
    ("session", _session("function", {"kind": "text", "text": "x"})),  # an old API's role
    ("session", _session("user", {"kind": "other", "part": {}})),  # no data field at all
    ("session", _session("user", {"kind": "other", "part": {"thought": True}})),  # only a flag
    (
        "session",
        _session(
            "user",
            {
                "kind": "other",
                "part": {"text": "a", "inline_data": {"data": "AAAA", "mime_type": "image/png"}},
            },
        ),
    ),  # two data fields: Gemini's oneof takes exactly one
    (
        "compaction",
        json.dumps(
            {"event_type": "compaction", "parts": [_text("summary", "!!")], "kept_from_id": None}
        ),
    ),  # a summary with a bad signature
]
