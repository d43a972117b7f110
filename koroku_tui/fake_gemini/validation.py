"""Request checks the real Gemini 3 API makes, with its 400 error texts.

Structural checks (empty parts, roles, call/response pairing) and the checks
of the function declarations (``declarations.py``) always run.
Signature checks run in strict mode: the first functionCall of every model step
in the current turn must be signed, and every signature must be one the server
issued (or the documented placeholder).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from koroku_tui.fake_gemini.declarations import declaration_problem
from koroku_tui.fake_gemini.wire import decode_signature, get_field, has_field

_DATA_FIELDS = (
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
    "toolCall",
    "toolResponse",
)

# What Gemini reads inline besides audio and video (images: PNG, JPEG, WebP, HEIC, HEIF).
_INLINE_TYPES = frozenset(
    {"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif", "application/pdf"}
    | {"text/plain", "text/html", "text/css", "text/csv", "text/xml", "text/rtf"}
)

MISSING_SIGNATURE_MESSAGE = (
    "Function call is missing a thought_signature in functionCall parts. This is required "
    "for tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `default_api:{name}` , position {position}. "
    "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
CORRUPTED_SIGNATURE_MESSAGE = "Corrupted thought signature."
CALL_RESPONSE_MISMATCH_MESSAGE = (
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn."
)
NO_CONTENTS_MESSAGE = "* GenerateContentRequest.contents: contents is not specified\n"
EMPTY_PARTS_MESSAGE = (
    "* GenerateContentRequest.contents[{index}].parts: contents.parts must not be empty.\n"
)
NO_DATA_MESSAGE = (
    "* GenerateContentRequest.contents[{index}].parts[{part}].data: "
    "required oneof field 'data' must have one initialized field\n"
)
BAD_ROLE_MESSAGE = "Please use a valid role: user, model."
MAX_REQUEST_BYTES = 20_971_520
"""The largest request body the Gemini API takes (20 MiB), whatever it holds."""
PAYLOAD_TOO_LARGE_MESSAGE = f"Request payload size exceeds the limit: {MAX_REQUEST_BYTES} bytes."


@dataclass(frozen=True)
class Rejection:
    """Why a request is refused: a 400 INVALID_ARGUMENT with this message."""

    message: str
    code: int = 400
    status: str = "INVALID_ARGUMENT"


def size_problem(body_bytes: int) -> Rejection | None:
    """Gemini's answer to a request body of ``body_bytes``: refused past the limit."""
    return Rejection(PAYLOAD_TOO_LARGE_MESSAGE) if body_bytes > MAX_REQUEST_BYTES else None


def _parts(content: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    parts = get_field(content, "parts")
    if not isinstance(parts, Sequence) or isinstance(parts, str):
        return []
    return [p for p in parts if isinstance(p, Mapping)]


def _count(content: Mapping[str, Any] | None, key: str) -> int:
    return 0 if content is None else sum(1 for p in _parts(content) if has_field(p, key))


def _is_model(content: Mapping[str, Any] | None) -> bool:
    return content is not None and content.get("role") == "model"


def _check_structure(contents: Sequence[Mapping[str, Any]]) -> Rejection | None:
    for index, content in enumerate(contents):
        if content.get("role") not in (None, "", "user", "model"):
            return Rejection(BAD_ROLE_MESSAGE)
        parts = get_field(content, "parts")
        if not parts:
            return Rejection(EMPTY_PARTS_MESSAGE.format(index=index))
        for part_index, part in enumerate(parts):
            if not isinstance(part, Mapping) or not any(has_field(part, f) for f in _DATA_FIELDS):
                return Rejection(NO_DATA_MESSAGE.format(index=index, part=part_index))
            problem = _inline_data_problem(part, f"contents[{index}].parts[{part_index}]")
            if problem is not None:
                return Rejection(problem)
    return None


def _inline_data_problem(part: Mapping[str, Any], where: str) -> str | None:
    """Why Gemini refuses a part's inline data (a MIME type it does not read, bad base64)."""
    blob = get_field(part, "inlineData")
    if not isinstance(blob, Mapping):
        return None
    mime_type = get_field(blob, "mimeType")
    if mime_type not in _INLINE_TYPES and not str(mime_type).startswith(("audio/", "video/")):
        return f"Unsupported MIME type: {mime_type}"
    data = get_field(blob, "data")
    try:
        base64.b64decode(str(data).replace("-", "+").replace("_", "/"), validate=True)
    except ValueError:
        return f"Invalid value at '{where}.inline_data.data' (TYPE_BYTES), Base64 decoding failed"
    return None


def _check_pairing(contents: Sequence[Mapping[str, Any]]) -> Rejection | None:
    """Every model step's calls are answered by the next content, one response each."""
    for index, content in enumerate(contents):
        following = contents[index + 1] if index + 1 < len(contents) else None
        previous = contents[index - 1] if index > 0 else None
        calls = _count(content, "functionCall") if _is_model(content) else 0
        if calls and (_is_model(following) or _count(following, "functionResponse") != calls):
            return Rejection(CALL_RESPONSE_MISMATCH_MESSAGE)
        responses = 0 if _is_model(content) else _count(content, "functionResponse")
        if responses and not (_is_model(previous) and _count(previous, "functionCall")):
            return Rejection(CALL_RESPONSE_MISMATCH_MESSAGE)
    return None


def current_turn_start(contents: Sequence[Mapping[str, Any]]) -> int:
    """Index of the first content of the current turn.

    The turn starts after the last user content that holds anything other than
    function responses (a real user message), or at 0 if there is none.

    Not ``koroku_tui.events.turns.current_turn_opener`` on purpose: this plays
    Gemini's part on wire dicts, so it must check Koroku's rule, not share it.
    """
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        if _is_model(content):
            continue
        if any(not has_field(p, "functionResponse") for p in _parts(content)):
            return index + 1
    return 0


def _check_signatures(
    contents: Sequence[Mapping[str, Any]], is_known: Callable[[bytes], bool]
) -> Rejection | None:
    start = current_turn_start(contents)
    for index in range(start, len(contents)):
        content = contents[index]
        if not _is_model(content):
            continue
        calls = [p for p in _parts(content) if has_field(p, "functionCall")]
        if calls and not has_field(calls[0], "thoughtSignature"):
            name = get_field(get_field(calls[0], "functionCall"), "name")
            return Rejection(MISSING_SIGNATURE_MESSAGE.format(name=name, position=index + 1))
    for content in contents:
        if not _is_model(content):
            continue
        for part in _parts(content):
            raw = get_field(part, "thoughtSignature")
            if raw is None:
                continue
            signature = decode_signature(raw)
            if signature is None or not is_known(signature):
                return Rejection(CORRUPTED_SIGNATURE_MESSAGE)
    return None


def validate_generate_body(
    body: object, *, strict: bool, is_known_signature: Callable[[bytes], bool]
) -> Rejection | None:
    """Check a generate request body; None when the real API would accept it."""
    contents = get_field(body, "contents") if isinstance(body, Mapping) else None
    if not isinstance(contents, Sequence) or isinstance(contents, str) or not contents:
        return Rejection(NO_CONTENTS_MESSAGE)
    if not all(isinstance(c, Mapping) for c in contents):
        return Rejection(NO_CONTENTS_MESSAGE)
    checked: list[Mapping[str, Any]] = list(contents)
    rejection = _check_structure(checked) or _check_pairing(checked)
    if rejection is None and (problem := declaration_problem(body)) is not None:
        rejection = Rejection(problem)
    if rejection is None and strict:
        rejection = _check_signatures(checked, is_known_signature)
    return rejection
