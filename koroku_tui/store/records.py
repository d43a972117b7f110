"""Plain records the store hands to the UI and the agent (never SQL rows).

They are frozen dataclasses: a widget can keep one without it changing under
it. The events they carry are the shared Pydantic objects of the in-memory
context; treat them as read-only (``model_copy`` to change one).
"""

from __future__ import annotations

from dataclasses import dataclass

from koroku_tui.events import Event, RewindEvent, SessionEvent, TurnErrorEvent

__all__ = [
    "MATCH_END",
    "MATCH_START",
    "MAX_MEMORY_CHARS",
    "MEMORY",
    "SUGGESTION",
    "MemoryRecord",
    "PromptMemories",
    "SearchHit",
    "SearchPage",
    "SessionExcerpt",
    "SessionInfo",
    "StoredMessage",
    "SummaryRecord",
    "split_snippet",
]

#: Markers around each match in ``SearchHit.snippet``. Control characters,
#: because any printable pair could occur in the text itself (they are
#: stripped from what is indexed, so they only ever mean "match").
MATCH_START = "\x02"
MATCH_END = "\x03"

UNTITLED = "Untitled session"


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One row of a session's history.

    ``event`` is ``None`` for a rewind row (then ``rewind`` holds it: it never
    reaches the model, so it is no ``Event``; readers that list rows show
    ``rewind.describe()`` as a one-line marker) and for a row that cannot be
    read (hand-edited, truncated, written by a newer Koroku): then
    ``raw_json`` holds the stored text untouched and ``error`` says in one
    line what is wrong. Rows in the model's context (``context_messages``)
    always have an event.
    """

    id: int
    session_id: int
    kind: str
    """The row's ``kind`` column: ``"session"``, ``"compaction"``, ``"rewind"`` or ``"error"``."""
    created_at: float
    """Seconds since the epoch."""
    event: Event | None
    raw_json: str | None = None
    error: str | None = None
    rewind: RewindEvent | None = None
    """Set (and ``event`` ``None``) for a readable rewind row."""
    turn_error: TurnErrorEvent | None = None
    """Set (and ``event`` ``None``) for a readable error row: never in the model's context."""

    @property
    def is_readable(self) -> bool:
        """True when the row parsed (into an event, a rewind or a turn's error)."""
        return self.event is not None or self.rewind is not None or self.turn_error is not None

    @property
    def shown(self) -> Event | RewindEvent | TurnErrorEvent | None:
        """What a reader shows for the row: its event, rewind or error (``None``: unreadable)."""
        return self.rewind or self.turn_error or self.event

    @property
    def role(self) -> str | None:
        """``"user"`` / ``"model"`` for session events, ``None`` otherwise."""
        return self.event.role if isinstance(self.event, SessionEvent) else None


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A conversation as the session list shows it (read without its messages)."""

    id: int
    title: str | None
    """Set by a rename, or taken from the first user message; ``None`` before either."""
    created_at: float
    updated_at: float
    """Time of the newest message (a rename does not count as activity)."""
    message_count: int
    compaction_count: int
    forked_from_session: int | None = None
    """For a fork: the session it was copied from (``None`` otherwise, or once that is deleted)."""
    forked_from_message: int | None = None
    """For a fork made before a message M of its source: M (``None`` for a fork of it all)."""
    trashed_at: float | None = None
    """When the user deleted it (moved it to the trash); ``None`` for a live session."""
    model: str | None = None
    """The model the session chose ("Change model…"); ``None``: the configured one."""

    @property
    def display_title(self) -> str:
        """The title, or a placeholder for a session nobody has written in yet."""
        return self.title or UNTITLED


@dataclass(frozen=True, slots=True)
class SummaryRecord:
    """One compaction of a session: when it happened and what it said."""

    message_id: int
    session_id: int
    created_at: float
    summary: str
    kept_from_id: int | None


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One message matching a search, with enough to open it in its session."""

    session_id: int
    session_title: str | None
    message_id: int
    kind: str
    """``"session"`` for a message, ``"compaction"`` for a summary."""
    role: str | None
    created_at: float
    snippet: str
    """Text around the match, each match between ``MATCH_START`` and ``MATCH_END``."""

    def snippet_segments(self) -> list[tuple[str, bool]]:
        """The snippet as ``(text, is_match)`` pieces, ready to style."""
        return split_snippet(self.snippet)


def split_snippet(snippet: str) -> list[tuple[str, bool]]:
    """Split a marked snippet into ``(text, is_match)`` pieces, dropping empty ones."""
    pieces: list[tuple[str, bool]] = []
    for chunk_index, chunk in enumerate(snippet.split(MATCH_START)):
        if chunk_index == 0:
            if chunk:
                pieces.append((chunk, False))
            continue
        match, _, rest = chunk.partition(MATCH_END)
        if match:
            pieces.append((match, True))
        if rest:
            pieces.append((rest, False))
    return pieces


@dataclass(frozen=True, slots=True)
class SearchPage:
    """The best hits of a search, and how many rows matched in all."""

    hits: list[SearchHit]
    total: int
    """Every matching row, of which ``hits`` are the best ``limit``."""

    @property
    def more(self) -> int:
        """Matches not in ``hits``."""
        return max(0, self.total - len(self.hits))


@dataclass(frozen=True, slots=True)
class SessionExcerpt:
    """A window of one session's rows, oldest first, and whether rows lie beyond it."""

    session: SessionInfo
    messages: list[StoredMessage]
    more_before: bool
    more_after: bool


MAX_MEMORY_CHARS = 1_000
"""The longest memory: a lasting fact is a sentence or two, never a document."""
MEMORY = "memory"
"""A memory's state when it is kept: in the system instruction of every request."""
SUGGESTION = "suggestion"
"""A memory's state while it waits for the user: proposed at a compaction, never sent."""


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One remembered fact (or a suggested one), and the conversation it came from."""

    id: int
    text: str
    """The fact as stored: user or model text, made safe wherever it is shown."""
    state: str
    """``MEMORY`` or ``SUGGESTION``."""
    session_id: int | None
    """The conversation it came from; ``None``: added by hand."""
    message_id: int | None
    """The message of that conversation it came from (``None``: the conversation's end)."""
    created_at: float
    updated_at: float
    source_title: str | None = None
    """The source conversation's title as it is now (``None``: untitled, or gone)."""
    source_state: str = "none"
    """``"live"``, ``"trash"`` (the user deleted it), ``"gone"`` (the trash was emptied)
    or ``"none"`` (added by hand)."""

    @property
    def is_suggestion(self) -> bool:
        """True while it waits for the user's acceptance."""
        return self.state == SUGGESTION


@dataclass(frozen=True, slots=True)
class PromptMemories:
    """The memories a request's system instruction holds, newest first, and how many not."""

    memories: list[MemoryRecord]
    left_out: int = 0
    """Kept memories past the cap that were not chosen for this request."""
