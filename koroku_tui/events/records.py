"""The records of a session: events the model receives, and rows it never sees.

``SessionEvent`` (one ``Content``, part for part) and ``CompactionEvent`` (a
summary standing in for older turns) make up ``Event``; ``RewindEvent`` and
``TurnErrorEvent`` are stored rows kept out of it (see ``koroku_tui.events``).
Events carry an ``event_type`` discriminator (the seed design's JSON shape).

Import them from ``koroku_tui.events``, which re-exports every public name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import Field, TypeAdapter, field_validator

from koroku_tui.events.attachments import frame_of
from koroku_tui.events.parts import (
    EventPart,
    FCMetadata,
    FunctionCallPart,
    FunctionResponsePart,
    OtherPart,
    StoredModel,
    TextPart,
    part_from_genai,
)

if TYPE_CHECKING:
    # Imported inside the functions that build a Content (see ``parts.py``).
    from google.genai import types

__all__ = [
    "CompactionEvent",
    "Event",
    "RewindEvent",
    "SessionEvent",
    "StoredEvent",
    "StoredEventAdapter",
    "TokenUsage",
    "TurnErrorEvent",
]


class TokenUsage(StoredModel):
    """``usage_metadata`` of the response that produced a model event."""

    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    thoughts_token_count: int | None = None
    total_token_count: int | None = None
    cached_content_token_count: int | None = None
    """Of ``prompt_token_count``, the tokens Gemini read from its cache (sent only when any)."""

    @classmethod
    def from_genai(cls, usage: types.GenerateContentResponseUsageMetadata) -> TokenUsage:
        return cls(
            prompt_token_count=usage.prompt_token_count,
            candidates_token_count=usage.candidates_token_count,
            thoughts_token_count=usage.thoughts_token_count,
            total_token_count=usage.total_token_count,
            cached_content_token_count=usage.cached_content_token_count,
        )


class SessionEvent(StoredModel):
    """One ``types.Content`` of the conversation, stored part for part."""

    event_type: Literal["session"] = "session"
    role: str | None
    """``"user"`` or ``"model"``; ``None`` (or ``""``) only in rows that never had one.

    Gemini reads a role left unset as the user's, so such rows are kept.
    """
    parts: list[EventPart] = Field(default_factory=list)
    usage: TokenUsage | None = None
    """Token usage reported with this model reply, when known (drives the gauge)."""
    finish_reason: str | None = None
    """Why Gemini ended this model reply (``"STOP"``, ``"MAX_TOKENS"``...), when known.

    Kept so that a replayed answer that was cut off still says so.
    """
    model: str | None = None
    """The Gemini model this reply was asked of (model replies stored since issue 27)."""
    wait_seconds: float | None = None
    """Seconds from sending the request to the reply's end, retries included (since issue 27).

    What the usage statistics call "time waiting for Gemini"; older rows have none.
    """

    @field_validator("role")
    @classmethod
    def _role_is_sendable(cls, value: str | None) -> str | None:
        # Any other role is refused by Gemini ("Please use a valid role") in
        # every later request: such a row is unreadable, skipped with a reason.
        if value not in (None, "", "user", "model"):
            raise ValueError(f'role {value!r} is neither "user" nor "model"')
        return value

    @classmethod
    def from_content(
        cls,
        content: types.Content,
        part_metadata: list[FCMetadata | None] | None = None,
        usage: TokenUsage | None = None,
        finish_reason: str | None = None,
        *,
        model: str | None = None,
        wait_seconds: float | None = None,
    ) -> SessionEvent:
        """Mirror ``content``; ``part_metadata`` (one entry per part) annotates responses."""
        parts = content.parts or []
        if part_metadata is not None and len(part_metadata) != len(parts):
            raise ValueError(
                f"part_metadata has {len(part_metadata)} entries for {len(parts)} parts"
            )
        metadata = part_metadata or [None] * len(parts)
        return cls(
            role=content.role,
            parts=[part_from_genai(p, m) for p, m in zip(parts, metadata, strict=True)],
            usage=usage,
            finish_reason=finish_reason,
            model=model,
            wait_seconds=wait_seconds,
        )

    def to_content(self) -> types.Content:
        """The ``types.Content`` to send back to Gemini."""
        from google.genai import types

        return types.Content(role=self.role, parts=[p.to_part() for p in self.parts])

    @property
    def function_calls(self) -> list[FunctionCallPart]:
        return [p for p in self.parts if isinstance(p, FunctionCallPart)]

    @property
    def function_responses(self) -> list[FunctionResponsePart]:
        return [p for p in self.parts if isinstance(p, FunctionResponsePart)]

    @property
    def is_real_user_turn(self) -> bool:
        """A message typed by the user, as opposed to tool responses (also role "user")."""
        if self.role != "user":
            return False
        return not any(
            isinstance(p, FunctionResponsePart)
            or (isinstance(p, OtherPart) and "function_response" in p.part)
            for p in self.parts
        )

    @property
    def text(self) -> str:
        """The visible (non-thought) text of the event, joined.

        Files attached with ``@path`` are left out: this is what the user
        wrote (a title, the text a rewind puts back in the prompt, where
        ``@path`` attaches the file again).
        """
        return "".join(
            p.text
            for i, p in enumerate(self.parts)
            if isinstance(p, TextPart) and not p.thought and frame_of(self.role, i, p.text) is None
        )


class CompactionEvent(StoredModel):
    """A summary of older turns; the model sees it in their place.

    ``kept_from_id`` is the id of the first stored message that stays verbatim
    after the summary (the split point); ``None`` means only messages stored
    after this event follow it. ``kept_events`` counts those verbatim
    messages: their token usage was measured before the compaction, so the
    context budget must not trust it.
    """

    event_type: Literal["compaction"] = "compaction"
    parts: list[EventPart] = Field(default_factory=list)
    kept_from_id: int | None = None
    kept_events: int = 0

    @classmethod
    def from_summary(
        cls, summary: str, kept_from_id: int | None = None, kept_events: int = 0
    ) -> CompactionEvent:
        return cls(
            parts=[TextPart(text=summary)], kept_from_id=kept_from_id, kept_events=kept_events
        )

    @property
    def role(self) -> str:
        """``"user"``: the model receives the summary as a user message (seed handlers read it)."""
        return "user"

    @property
    def summary(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def to_content(self) -> types.Content:
        """The summary as a user message, which is how the model receives it."""
        from google.genai import types

        return types.Content(role="user", parts=[p.to_part() for p in self.parts])


class RewindEvent(StoredModel):
    """A rewind: the model's context resumes from the state just before message M.

    Stored as a row of kind ``"rewind"`` and never sent to Gemini, so it is
    not part of the ``Event`` union: the ~20 places that match on ``Event``
    (agent loop, context budget, compaction, repair, replay) stay unaware of
    it. Nothing is deleted: the rows from M up to this row stay in the
    session, "abandoned" (browsable, searchable, hidden from the model).
    The store reads such a row into ``StoredMessage.rewind``; the context rule
    is ``koroku_tui.events.turns.view_before``.
    """

    event_type: Literal["rewind"] = "rewind"
    before_message_id: int
    """M: the user message the conversation went back to before (M itself is abandoned)."""

    def describe(self) -> str:
        """The one-line marker readers show for the row (history, export)."""
        return (
            f"rewound to before message #{self.before_message_id}: "
            "the messages from there up to here are hidden from the model"
        )


class TurnErrorEvent(StoredModel):
    """Why a turn ended in an error: the one sentence the user was shown.

    Stored as a row of kind ``"error"`` so that the transcript, the history
    screen, the export and ``read_session`` show it after a restart. Like
    ``RewindEvent`` it never reaches the model and is no ``Event``: the
    context loaders, compaction, the search index and the rewind rule pass
    it over (the store reads it into ``StoredMessage.turn_error``).
    """

    event_type: Literal["error"] = "error"
    message: str
    """The sentence, as the agent reported it (already redacted)."""
    kind: str | None = None
    """The failure's family (``ErrorKind``'s value: ``"network"``, ``"rate_limit"``...)."""

    def describe(self) -> str:
        """The one-line marker readers show for the row (history, export)."""
        return f"the turn ended in an error: {self.message}"


Event: TypeAlias = SessionEvent | CompactionEvent
"""Any event the model receives: the one name for the union (annotations and ``isinstance``).

A new kind of event that reaches the model is added here, and only here.
``RewindEvent`` rows are stored but never reach the model, so they are kept
out of this union (see its docstring).
"""

StoredEvent = Annotated[Event, Field(discriminator="event_type")]
"""``Event`` for pydantic: the same union, told apart by ``event_type`` when parsed."""

StoredEventAdapter: TypeAdapter[Event] = TypeAdapter(StoredEvent)
