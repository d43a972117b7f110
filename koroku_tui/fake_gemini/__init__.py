"""A local fake of the Gemini REST API, for tests and the ``--demo`` mode.

Standard library only (plus nothing from the SDK): the real ``google-genai``
client talks to it over HTTP exactly as it talks to Google. See
``/work/shared/docs/gemini-wire.md`` for the protocol it follows.

Typical use::

    with FakeGemini([call_reply(("read_file", {"path": "a.txt"})), text_reply("done")]) as fake:
        client = genai.Client(api_key="test-key", http_options=types.HttpOptions(
            base_url=fake.base_url, api_version="v1beta"))
        ...
        assert fake.generate_requests[-1].contents[-1]["parts"][0]["functionResponse"]
"""

from __future__ import annotations

from koroku_tui.fake_gemini.recording import RecordedRequest
from koroku_tui.fake_gemini.script import (
    Call,
    ErrorReply,
    Hang,
    Part,
    Reply,
    Responder,
    ScriptItem,
    Text,
    Usage,
    blocked_prompt,
    call_reply,
    echo_responder,
    error_reply,
    last_user_text,
    stream_cut,
    stream_error,
    text_reply,
    thoughts_only,
)
from koroku_tui.fake_gemini.server import FakeGemini
from koroku_tui.fake_gemini.state import SIGNATURE_PREFIX, ModelInfo
from koroku_tui.fake_gemini.wire import (
    PLACEHOLDER_SIGNATURE,
    decode_signature,
    encode_signature,
)

__all__ = [
    "PLACEHOLDER_SIGNATURE",
    "SIGNATURE_PREFIX",
    "Call",
    "ErrorReply",
    "FakeGemini",
    "Hang",
    "ModelInfo",
    "Part",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ScriptItem",
    "Text",
    "Usage",
    "blocked_prompt",
    "call_reply",
    "decode_signature",
    "echo_responder",
    "encode_signature",
    "error_reply",
    "last_user_text",
    "stream_cut",
    "stream_error",
    "text_reply",
    "thoughts_only",
]
