"""Turning stored rows into events, tolerating anything a person or a crash left behind.

A row that cannot be read is never fatal and never rewritten: it becomes a
``StoredMessage`` with ``event=None``, its raw text and a one-line reason.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from koroku_tui.events import (
    CompactionEvent,
    Event,
    RewindEvent,
    SessionEvent,
    StoredEventAdapter,
    TurnErrorEvent,
)
from koroku_tui.store.records import StoredMessage

__all__ = [
    "MESSAGE_COLUMNS",
    "TITLE_LENGTH",
    "decode_event",
    "decode_rewind",
    "decode_turn_error",
    "derive_title",
    "message_from_row",
]

#: Column order every ``message_from_row`` query selects.
MESSAGE_COLUMNS = "id, session_id, kind, event_json, created_at"

TITLE_LENGTH = 60


def _validation_summary(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(item) for item in first["loc"]) or "event"
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return f"not a valid event: {where}: {first['msg']}{more}"


def decode_event(raw: Any, kind: str) -> tuple[Event | None, str | None]:
    """Parse ``event_json``; return the event, or ``None`` and a one-line reason.

    Seed-era rows may lack ``event_type`` in their JSON: they take it from the
    row's ``kind`` column. A row whose JSON disagrees with its ``kind`` about
    being a compaction is refused, since ``kind`` decides where the row goes in
    the model's context.
    """
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None, "event_json is binary data, not UTF-8 text"
    if not isinstance(raw, str):
        return None, f"event_json holds {type(raw).__name__}, not JSON text"
    event: Event
    try:
        # Fast path: every row Koroku writes itself carries event_type.
        event = StoredEventAdapter.validate_json(raw)
    except ValidationError as exc:
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, RecursionError) as json_exc:
            return None, f"invalid JSON: {json_exc}"
        if not (isinstance(data, dict) and "event_type" not in data):
            return None, _validation_summary(exc)
        try:
            event = StoredEventAdapter.validate_python({**data, "event_type": kind})
        except ValidationError as kind_exc:
            return None, _validation_summary(kind_exc)
    if (kind == "compaction") != isinstance(event, CompactionEvent):
        return None, (
            f"the kind column says {kind!r} but the JSON holds a {event.event_type!r} event"
        )
    return event, None


def decode_rewind(raw: Any, row_id: int) -> tuple[RewindEvent | None, str | None]:
    """Parse a rewind row's JSON; return it, or ``None`` and a one-line reason.

    A rewind must point back: to a message stored before itself.
    """
    if isinstance(raw, bytes):
        return None, "event_json is binary data, not JSON text"
    if not isinstance(raw, str):
        return None, f"event_json holds {type(raw).__name__}, not JSON text"
    try:
        rewind = RewindEvent.model_validate_json(raw)
    except ValidationError as exc:
        return None, _validation_summary(exc)
    if rewind.before_message_id >= row_id:
        return None, f"a rewind to before message {rewind.before_message_id} must come after it"
    return rewind, None


def decode_turn_error(raw: Any) -> tuple[TurnErrorEvent | None, str | None]:
    """Parse an error row's JSON; return it, or ``None`` and a one-line reason."""
    if not isinstance(raw, str):
        return None, f"event_json holds {type(raw).__name__}, not JSON text"
    try:
        return TurnErrorEvent.model_validate_json(raw), None
    except ValidationError as exc:
        return None, _validation_summary(exc)


def message_from_row(row: Any) -> StoredMessage:
    """A ``StoredMessage`` from a row selected as ``MESSAGE_COLUMNS``."""
    row_id, session_id, kind, raw, created_at = row
    if kind == "rewind":
        rewind, problem = decode_rewind(raw, row_id)
        if rewind is not None:
            return StoredMessage(row_id, session_id, kind, created_at, None, rewind=rewind)
        text = raw if isinstance(raw, str) else repr(raw)
        return StoredMessage(row_id, session_id, kind, created_at, None, text, problem)
    if kind == "error":
        turn_error, problem = decode_turn_error(raw)
        if turn_error is not None:
            return StoredMessage(row_id, session_id, kind, created_at, None, turn_error=turn_error)
        text = raw if isinstance(raw, str) else repr(raw)
        return StoredMessage(row_id, session_id, kind, created_at, None, text, problem)
    event, error = decode_event(raw, kind)
    if event is None:
        text = raw if isinstance(raw, str) else repr(raw)
        return StoredMessage(row_id, session_id, kind, created_at, None, text, error)
    return StoredMessage(row_id, session_id, kind, created_at, event)


def derive_title(event: Event) -> str | None:
    """A session title from a user's message: its text, whitespace collapsed, ~60 chars.

    ``None`` for anything that is not a message typed by the user (model
    replies, tool responses, summaries) or has no visible text.
    """
    if not isinstance(event, SessionEvent) or not event.is_real_user_turn:
        return None
    collapsed = " ".join(event.text.split())
    if not collapsed:
        return None
    if len(collapsed) <= TITLE_LENGTH:
        return collapsed
    cut = collapsed[: TITLE_LENGTH - 1]
    # Prefer ending on a word boundary unless that throws most of the text away.
    space = cut.rfind(" ")
    if space >= TITLE_LENGTH // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"
