"""Wire-level helpers: JSON field spelling, signature encoding, error bodies, token estimates.

The real Gemini API accepts both camelCase and snake_case keys (the SDK sends
nested objects in snake_case), so every read here goes through :func:`get_field`.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from koroku_tui.fake_gemini import deep_json

JsonObject = dict[str, Any]
"""A decoded JSON object."""

PLACEHOLDER_SIGNATURE: bytes = base64.urlsafe_b64decode("skip_thought_signature_validator")
"""The documented placeholder for calls the model did not produce, as bytes.

On the wire it is the literal string ``skip_thought_signature_validator``.
"""

# Default status string and message per HTTP code, worded like the real API.
DEFAULT_ERRORS: dict[int, tuple[str, str]] = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "Request had invalid authentication credentials."),
    403: ("PERMISSION_DENIED", "The caller does not have permission."),
    404: ("NOT_FOUND", "Requested entity was not found."),
    408: ("DEADLINE_EXCEEDED", "Request timed out."),
    429: (
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details.",
    ),
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in "
        "https://developers.generativeai.google/guide/troubleshooting",
    ),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "The request timed out. Please try again."),
}

_CAMEL_HUMP = re.compile(r"(?<!^)(?=[A-Z])")


def snake_case(camel: str) -> str:
    """``thoughtSignature`` -> ``thought_signature``."""
    return _CAMEL_HUMP.sub("_", camel).lower()


def get_field(obj: Mapping[str, Any], camel: str) -> Any:
    """Read ``camel`` from ``obj`` in either spelling (camelCase wins), else None."""
    if camel in obj:
        return obj[camel]
    return obj.get(snake_case(camel))


def has_field(obj: Mapping[str, Any], camel: str) -> bool:
    """True when ``obj`` holds ``camel`` in either spelling with a non-null value."""
    return get_field(obj, camel) is not None


def encode_signature(signature: bytes) -> str:
    """Standard base64 with padding, as the real API emits signatures."""
    return base64.b64encode(signature).decode("ascii")


def decode_signature(value: object) -> bytes | None:
    """Decode a signature sent by a client, or None when it is not valid base64.

    The SDK sends URL-safe base64; other clients send the standard alphabet. Both
    decode to the same bytes, which is why signatures are compared as bytes.
    """
    if not isinstance(value, str):
        return None
    text = value.strip().replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def error_body(
    code: int,
    message: str | None = None,
    status: str | None = None,
    details: Sequence[JsonObject] | None = None,
) -> JsonObject:
    """The ``{"error": {...}}`` body Google APIs answer with."""
    default_status, default_message = DEFAULT_ERRORS.get(code, ("UNKNOWN", "Unknown error."))
    error: JsonObject = {
        "code": code,
        "message": default_message if message is None else message,
        "status": default_status if status is None else status,
    }
    if details:
        error["details"] = list(details)
    return {"error": error}


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def _part_chars(part: Mapping[str, Any]) -> int:
    """Rough character weight of one part; thought signatures weigh nothing."""
    text = get_field(part, "text")
    if isinstance(text, str):
        return len(text)
    for key in ("functionCall", "functionResponse"):
        value = get_field(part, key)
        if isinstance(value, Mapping):
            return len(deep_json.dumps(value, sort_keys=True))
    if has_field(part, "inlineData") or has_field(part, "fileData"):
        return 258 * 4  # Gemini bills an image as 258 tokens.
    rest = {k: v for k, v in part.items() if k not in ("thoughtSignature", "thought_signature")}
    return len(deep_json.dumps(rest, sort_keys=True))


def estimate_contents_tokens(contents: object) -> int:
    """Deterministic token estimate (about four characters a token) of ``contents``."""
    if not isinstance(contents, Sequence) or isinstance(contents, str):
        return 0
    chars = 0
    for content in contents:
        if not isinstance(content, Mapping):
            continue
        parts = get_field(content, "parts")
        if isinstance(parts, Sequence):
            chars += sum(_part_chars(p) for p in parts if isinstance(p, Mapping))
    return _tokens(chars)


def estimate_request_tokens(body: object) -> int:
    """Estimate of a generate request's prompt: contents, system instruction and tools.

    It grows with the conversation, so a client tracking ``promptTokenCount``
    sees the context fill up like against the real API.
    """
    if not isinstance(body, Mapping):
        return 0
    total = estimate_contents_tokens(get_field(body, "contents"))
    system = get_field(body, "systemInstruction")
    if isinstance(system, Mapping):
        total += estimate_contents_tokens([system])
    tools = get_field(body, "tools")
    if tools:
        total += _tokens(len(json.dumps(tools, sort_keys=True)))
    return total


def estimate_text_tokens(text: str) -> int:
    """Token estimate of generated text."""
    return _tokens(len(text))
