"""``search_history`` and ``read_session``: the model finds and reads past conversations.

Both read through ``ToolSettings.history`` (the session's ``SessionManager``)
and never change anything. What they answer is plain text for the model:
every hidden character of stored text is a visible escape, matches in a
snippet sit between ``recall.MARK_START`` and ``recall.MARK_END``, and each
result names its conversation as ``session N`` so the answer can cite it.
A message reads as on the history screen (``koroku_tui.events.reading``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.tool_settings import PastConversations, ToolSettings
from koroku_tui.events.reading import (
    FOR_MODEL,
    Piece,
    body_pieces,
    heading_pieces,
    plain,
    rewind_pieces,
    turn_error_pieces,
    unreadable_pieces,
)
from koroku_tui.store.errors import SessionNotFoundError, StoreError
from koroku_tui.store.records import (
    UNTITLED,
    SearchHit,
    SessionExcerpt,
    StoredMessage,
    split_snippet,
)
from koroku_tui.text import recall
from koroku_tui.text.safety import escape_hidden, is_hidden

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_READ_LIMIT",
    "MAX_SEARCH_LIMIT",
    "read_session",
    "search_history",
]

MAX_SEARCH_LIMIT = 50
MAX_READ_LIMIT = 100
MAX_QUERY_CHARS = 1_000
"""A query is a few words; anything this long is a mistake, said as such."""
_WHITESPACE = re.compile(r"\s+")
SNIPPET_CHARS = 400
"""Ceiling on a hit's snippet as shown (the store makes them about 300 characters)."""
_LARGEST_ID = 2**63 - 1
"""SQLite's largest integer: a bigger id names nothing (and would not even bind)."""
_ROOM_FOR_MARKS = 1_000
"""Characters of an answer kept for its heading, before/after marks and notes."""
_WHEN = "%d-%m-%Y %H:%M"
"""Dates as the memory files name days (dd-mm-yyyy), in the user's local time."""


async def search_history(context: ToolSettings, query: str, limit: int = 10) -> str:
    """Search every earlier conversation (messages, tool calls and results, summaries).

    Use it whenever the user refers to something from the past that is not in
    this conversation. Each hit names its session, message id, date and who
    wrote it, with the matching words marked «like this».

    Args:
        query: A few meaningful words in plain language, e.g. backup script
            decision. Put a phrase in double quotes to keep its words together.
        limit: How many hits to show, best first (1 to 50).
    """
    history = _history(context)
    words = _clean_query(query)
    shown_limit, note = _clamped("limit", limit, MAX_SEARCH_LIMIT)
    try:
        page = await history.search_history(words, shown_limit)
    except StoreError as exc:
        raise ToolError(f"Could not search past conversations: {exc}") from None
    hits = page.hits[:shown_limit]
    lines = [recall.headline(words, page.total, len(hits))]
    for hit in hits:
        lines += ["", _hit_heading(hit), _snippet(hit.snippet)]
    if hits:
        first = hits[0]
        lines += [
            "",
            "To read more of a conversation, call "
            f"read_session(session_id={first.session_id}, around_message_id={first.message_id}) "
            "with the hit's session and message.",
        ]
    if note:
        lines += ["", note]
    return "\n".join(lines)


async def read_session(
    context: ToolSettings,
    session_id: int,
    around_message_id: int | None = None,
    limit: int = 40,
) -> str:
    """Read an earlier conversation's messages, oldest first, as the history screen shows them.

    Args:
        session_id: The session to read (search_history names it: session N).
        around_message_id: A message of that session to centre on (a hit's
            message id); leave it out for the newest messages.
        limit: How many messages to show (1 to 100).
    """
    history = _history(context)
    if not 1 <= session_id <= _LARGEST_ID:
        raise ToolError(_no_session(session_id))
    if around_message_id is not None and not 1 <= around_message_id <= _LARGEST_ID:
        raise ToolError(_not_in_session(around_message_id, session_id))
    shown_limit, note = _clamped("limit", limit, MAX_READ_LIMIT)
    try:
        excerpt = await history.read_session(session_id, around_message_id, shown_limit)
    except SessionNotFoundError:
        raise ToolError(_no_session(session_id)) from None
    except ValueError:
        raise ToolError(_not_in_session(around_message_id, session_id)) from None
    except StoreError as exc:
        raise ToolError(f"Could not read session {session_id}: {exc}") from None
    shown_ids = {message.id for message in excerpt.messages}
    if around_message_id is not None and around_message_id not in shown_ids:
        raise ToolError(_not_in_session(around_message_id, session_id))
    budget = max(context.max_output_chars - _ROOM_FOR_MARKS, _ROOM_FOR_MARKS)
    text = _excerpt_text(_fitted(excerpt, around_message_id, budget))
    return f"{text}\n\n{note}" if note else text


def _history(context: ToolSettings) -> PastConversations:
    if context.history is None:
        raise ToolError("Past conversations are not available in this session.")
    return context.history


def _clean_query(query: str) -> str:
    if len(query) > MAX_QUERY_CHARS:
        raise ToolError(
            f"The query is {len(query):,} characters long; search with a few words "
            f"(at most {MAX_QUERY_CHARS:,} characters)."
        )
    # Hidden characters (controls, zero-width spaces...) separate words; they never match.
    words = " ".join("".join(" " if is_hidden(c) else c for c in query).split())
    if not words:
        raise ToolError(
            "The query is empty: give search_history a few words to look for, "
            "e.g. backup script decision."
        )
    return words


def _clamped(name: str, value: int, largest: int) -> tuple[int, str]:
    if 1 <= value <= largest:
        return value, ""
    used = min(max(value, 1), largest)
    return used, f"({name} {value} is outside 1 to {largest}; {used} was used.)"


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime(_WHEN)


def _title(title: str | None) -> str:
    return recall.unmarked(escape_hidden(" ".join((title or UNTITLED).split())))


def _hit_heading(hit: SearchHit) -> str:
    if hit.kind == "compaction":
        who = "summary of earlier turns"
    else:
        who = {"user": "user", "model": "model", "tool": "tool results"}.get(
            hit.role or "", hit.role or "unknown"
        )
    return (
        f'session {hit.session_id} "{_title(hit.session_title)}" · message {hit.message_id} · '
        f"{_when(hit.created_at)} (local time) · {who}"
    )


def _snippet(snippet: str) -> str:
    shown: list[str] = []
    for text, is_match in split_snippet(snippet):
        # One line per hit: each run of whitespace (newlines too) is one space,
        # so two matches one space apart stay one space apart.
        flat = recall.unmarked(escape_hidden(_WHITESPACE.sub(" ", text)))
        shown.append(f"{recall.MARK_START}{flat}{recall.MARK_END}" if is_match else flat)
    joined = "".join(shown).strip()
    if len(joined) > SNIPPET_CHARS:
        joined = joined[: SNIPPET_CHARS - 1] + "…"
    return "  " + joined


@dataclass(frozen=True, slots=True)
class _Page:
    """What read_session shows, and the message each paging hint must centre on."""

    excerpt: SessionExcerpt
    older: int | None
    """The nearest older message not shown (``None``: only the store knows one exists)."""
    newer: int | None
    budget: int


def _fitted(excerpt: SessionExcerpt, around: int | None, budget: int) -> _Page:
    """The excerpt cut to the messages nearest ``around`` (else the newest) that fit ``budget``.

    The executor would otherwise cut an over-long answer in its middle, and
    the before/after marks would no longer say where to page from. The marks
    name the nearest message left out, so following one always moves on (a
    message too big to fit beside its neighbours is then shown alone, cut).
    """
    messages = excerpt.messages
    if not messages:
        return _Page(excerpt, None, None, budget)
    sizes = [len(_message_text(message)) + 2 for message in messages]
    ids = [message.id for message in messages]
    centre = ids.index(around) if around in ids else len(ids) - 1
    start, end = centre, centre + 1
    used = sizes[centre]
    older, newer = True, True
    while older or newer:
        if older:
            older = start > 0 and used + sizes[start - 1] <= budget
            if older:
                start -= 1
                used += sizes[start]
        if newer:
            newer = end < len(ids) and used + sizes[end] <= budget
            if newer:
                used += sizes[end]
                end += 1
    shown = SessionExcerpt(
        excerpt.session,
        messages[start:end],
        more_before=excerpt.more_before or start > 0,
        more_after=excerpt.more_after or end < len(ids),
    )
    return _Page(
        shown,
        older=ids[start - 1] if start > 0 else None,
        newer=ids[end] if end < len(ids) else None,
        budget=budget,
    )


def _excerpt_text(page: _Page) -> str:
    excerpt = page.excerpt
    session = excerpt.session
    messages = excerpt.messages
    lines = [
        f'session {session.id} "{_title(session.title)}" · {session.message_count} messages · '
        f"started {_when(session.created_at)} (local time)"
    ]
    if not messages:
        lines.append("It has no messages yet.")
        return "\n".join(lines)
    first, last = messages[0].id, messages[-1].id
    if excerpt.more_before:
        older = page.older if page.older is not None else first
        lines.append(
            f"before: older messages exist; to read them call "
            f"read_session(session_id={session.id}, around_message_id={older})"
        )
    texts = [_message_text(message) for message in messages]
    if len(texts) == 1 and len(texts[0]) > page.budget:
        # Alone and still too big: cut here, with a note, rather than by the executor.
        cut = len(texts[0]) - page.budget
        texts[0] = f"{texts[0][: page.budget]}… [{cut:,} more characters of this message]"
    lines += ["", "\n\n".join(texts)]
    if excerpt.more_after:
        newer = page.newer if page.newer is not None else last
        lines += [
            "",
            f"after: newer messages exist; to read them call "
            f"read_session(session_id={session.id}, around_message_id={newer})",
        ]
    return "\n".join(lines)


def _message_text(message: StoredMessage) -> str:
    event = message.event
    if message.rewind is not None:
        pieces = rewind_pieces(message.id, message.rewind, _when(message.created_at))
    elif message.turn_error is not None:
        pieces = turn_error_pieces(message.id, message.turn_error, _when(message.created_at))
    elif event is None:
        pieces = unreadable_pieces(message.id, message.error, message.raw_json, whole=False)
    else:
        pieces = heading_pieces(
            message.id, event, _when(message.created_at), hidden=False, user_label="user"
        )
        body = body_pieces(event, FOR_MODEL)
        if plain(body):
            pieces += [Piece("\n"), *body]
    return escape_hidden(plain(pieces))


def _no_session(session_id: int) -> str:
    return (
        f"There is no session {session_id}: use a session number that search_history "
        "gave (session N)."
    )


def _not_in_session(message_id: int | None, session_id: int) -> str:
    return (
        f"Message {message_id} is not in session {session_id}: use a message id "
        "that search_history gave for that session, or leave around_message_id out."
    )
