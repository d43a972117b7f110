"""The event model: a lossless, JSON-serialisable mirror of Gemini's ``types.Content``.

Every message Koroku stores is one ``Event``, one of:

* ``SessionEvent``: one ``Content`` (a user message, a model reply, or the
  function responses of one model step), part for part.
* ``CompactionEvent``: a summary that stands in for older turns.

A third kind of stored row, ``RewindEvent`` ("the context resumes from the
state before message M"), is deliberately *not* an ``Event``: it never
reaches the model, so the agent, compaction and repair code (which match on
``Event``) never see one. The store reads it into ``StoredMessage.rewind``
(with ``event=None``) and applies it when it builds the context.

Parts keep everything the API needs back: ``thought`` flags, function call and
response ``id``s, and the raw ``thought_signature`` bytes (as base64 text).
Any part this model has no typed class for (inline data, files, code
execution, and whatever a future SDK adds) is kept as an ``OtherPart`` holding
the SDK's own JSON, so nothing is ever rejected or lost.

The JSON shape follows the seed design: parts carry a ``kind`` discriminator,
events an ``event_type`` discriminator.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

if TYPE_CHECKING:
    # At run time the SDK is imported inside the functions that build a Part
    # or Content: reading stored events, which the first frame does, must not
    # pay its import (~1.5 s here: ``google.genai.types`` brings the client,
    # httpx2 and every API model with it).
    from google.genai import types

__all__ = [
    "CompactionEvent",
    "Event",
    "EventPart",
    "FCMetadata",
    "FunctionCallData",
    "FunctionCallPart",
    "FunctionResponseData",
    "FunctionResponsePart",
    "OtherPart",
    "RewindEvent",
    "SessionEvent",
    "SessionPart",
    "StoredEvent",
    "StoredEventAdapter",
    "TextPart",
    "TokenUsage",
    "TurnErrorEvent",
    "decode_signature",
    "encode_signature",
]


def encode_signature(signature: bytes | None) -> str | None:
    """Signature bytes as standard base64 text (``None`` stays ``None``)."""
    if signature is None:
        return None
    return base64.b64encode(signature).decode("ascii")


def decode_signature(text: str | None) -> bytes | None:
    """Base64 text back to the exact signature bytes.

    Accepts the standard alphabet (what we write, and what the REST API sends)
    and the URL-safe one (what the SDK sends), since ``-``/``_`` never occur in
    standard base64 and ``+``/``/`` never in URL-safe base64.
    """
    if text is None:
        return None
    normalised = text.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(normalised, validate=True)
    except ValueError as exc:  # binascii.Error, or text that is not ASCII
        raise ValueError(f"thought signature is not valid base64: {exc}") from exc


class _Model(BaseModel):
    # Unknown keys are ignored rather than rejected so that a row written by a
    # newer Koroku still loads in an older one.
    model_config = ConfigDict(extra="ignore")


class FCMetadata(_Model):
    """The call behind a stored function response: its tool name and arguments.

    Lets a UI show "read_file {'path': 'a.txt'}" with a check or a cross
    without matching responses back to their calls.
    """

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class FunctionCallData(_Model):
    """``types.FunctionCall``: the model asks for a tool."""

    name: str
    args: dict[str, Any] | None = None
    id: str | None = None


class FunctionResponseData(_Model):
    """``types.FunctionResponse``: a tool's answer, ``{"output": ...}`` or ``{"error": ...}``."""

    name: str
    response: dict[str, Any] | None = None
    id: str | None = None


class _PartBase(_Model):
    thought: bool | None = None
    thought_signature_b64: str | None = None

    @field_validator("thought_signature_b64")
    @classmethod
    def _signature_decodes(cls, value: str | None) -> str | None:
        # Checked here, not when the part is sent: a stored row with a broken
        # signature is then an unreadable row, skipped with a reason, instead
        # of a failure of every later request.
        decode_signature(value)
        return value

    @property
    def thought_signature(self) -> bytes | None:
        """The raw signature bytes Gemini expects back."""
        return decode_signature(self.thought_signature_b64)


class TextPart(_PartBase):
    """A text part; ``thought=True`` marks the model's thinking."""

    kind: Literal["text"] = "text"
    text: str

    def to_part(self) -> types.Part:
        from google.genai import types

        return types.Part(
            text=self.text, thought=self.thought, thought_signature=self.thought_signature
        )


class FunctionCallPart(_PartBase):
    """A function call made by the model."""

    kind: Literal["function_call"] = "function_call"
    function_call: FunctionCallData

    def to_part(self) -> types.Part:
        from google.genai import types

        call = self.function_call
        return types.Part(
            function_call=types.FunctionCall(id=call.id, name=call.name, args=call.args),
            thought=self.thought,
            thought_signature=self.thought_signature,
        )


class FunctionResponsePart(_PartBase):
    """A tool's response, with the call it answers in ``fc_metadata``."""

    kind: Literal["function_response"] = "function_response"
    function_response: FunctionResponseData
    fc_metadata: FCMetadata | None = None

    @property
    def is_error(self) -> bool:
        """True when the tool failed: its response holds an ``error`` key."""
        return "error" in (self.function_response.response or {})

    def to_part(self) -> types.Part:
        from google.genai import types

        resp = self.function_response
        return types.Part(
            function_response=types.FunctionResponse(
                id=resp.id, name=resp.name, response=resp.response
            ),
            thought=self.thought,
            thought_signature=self.thought_signature,
        )


class OtherPart(_Model):
    """Any other part, kept as the SDK's own JSON so it round-trips unchanged.

    Covers inline data, file data, executable code, code execution results,
    text or calls with fields the typed parts do not model, and part types a
    future SDK adds.
    """

    kind: Literal["other"] = "other"
    part: dict[str, Any]
    fc_metadata: FCMetadata | None = None

    @field_validator("part")
    @classmethod
    def _part_is_sendable(cls, value: dict[str, Any]) -> dict[str, Any]:
        # Like the signature check: a part this SDK cannot send (hand-edited,
        # or written with a newer SDK) makes the row unreadable, not the session.
        from google.genai import types

        try:
            part = types.Part.model_validate_json(json.dumps(value))
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(item) for item in error["loc"]) or "part"
            raise ValueError(f"not a part this SDK can send: {where}: {error['msg']}") from None
        # The SDK accepts {} (every field is optional); Gemini refuses a part
        # without exactly one data field, and with it every later request.
        data = _data_fields(part)
        if len(data) != 1:
            held = ", ".join(data) or "none"
            raise ValueError(f"a part must hold exactly one kind of data (it holds: {held})")
        return value

    def to_part(self) -> types.Part:
        # JSON mode, so that bytes fields are decoded from base64 again.
        from google.genai import types

        return types.Part.model_validate_json(json.dumps(self.part))


# The API's ``Part.data`` oneof: a part must set exactly one of these.
_PART_DATA_FIELDS = (
    "text",
    "inline_data",
    "file_data",
    "function_call",
    "function_response",
    "executable_code",
    "code_execution_result",
    "tool_call",
    "tool_response",
)


def _data_fields(part: types.Part) -> list[str]:
    return [name for name in _PART_DATA_FIELDS if getattr(part, name, None) is not None]


EventPart = Annotated[
    TextPart | FunctionCallPart | FunctionResponsePart | OtherPart,
    Field(discriminator="kind"),
]
SessionPart = EventPart
"""The seed design's name for the part union."""

_TEXT_FIELDS = {"text", "thought", "thought_signature"}
_CALL_FIELDS = {"function_call", "thought", "thought_signature"}
_RESPONSE_FIELDS = {"function_response", "thought", "thought_signature"}


def _set_fields(model: BaseModel) -> set[str]:
    return {name for name in type(model).model_fields if getattr(model, name) is not None}


def _whole(
    data: types.FunctionCall | types.FunctionResponse, part_fields: set[str], allowed: set[str]
) -> bool:
    """True when the typed part holds all of ``data`` and of its part (nothing would be lost)."""
    from google.genai import types

    payload = "args" if isinstance(data, types.FunctionCall) else "response"
    return part_fields <= allowed and _set_fields(data) <= {"id", "name", payload}


def part_from_genai(part: types.Part, metadata: FCMetadata | None = None) -> EventPart:
    """Convert one SDK part; anything not modelled exactly becomes an ``OtherPart``."""
    fields = _set_fields(part)
    signature = encode_signature(part.thought_signature)
    if part.text is not None and fields <= _TEXT_FIELDS:
        return TextPart(text=part.text, thought=part.thought, thought_signature_b64=signature)
    call = part.function_call
    if call is not None and call.name is not None and _whole(call, fields, _CALL_FIELDS):
        return FunctionCallPart(
            function_call=FunctionCallData(name=call.name, args=call.args, id=call.id),
            thought=part.thought,
            thought_signature_b64=signature,
        )
    response = part.function_response
    if (
        response is not None
        and response.name is not None
        and _whole(response, fields, _RESPONSE_FIELDS)
    ):
        return FunctionResponsePart(
            function_response=FunctionResponseData(
                name=response.name, response=response.response, id=response.id
            ),
            thought=part.thought,
            thought_signature_b64=signature,
            fc_metadata=metadata,
        )
    dumped = json.loads(part.model_dump_json(exclude_none=True))
    return OtherPart(part=dumped, fc_metadata=metadata)


class TokenUsage(_Model):
    """``usage_metadata`` of the response that produced a model event."""

    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    thoughts_token_count: int | None = None
    total_token_count: int | None = None

    @classmethod
    def from_genai(cls, usage: types.GenerateContentResponseUsageMetadata) -> TokenUsage:
        return cls(
            prompt_token_count=usage.prompt_token_count,
            candidates_token_count=usage.candidates_token_count,
            thoughts_token_count=usage.thoughts_token_count,
            total_token_count=usage.total_token_count,
        )


class SessionEvent(_Model):
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
        """The visible (non-thought) text of the event, joined."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart) and not p.thought)


class CompactionEvent(_Model):
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


class RewindEvent(_Model):
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


class TurnErrorEvent(_Model):
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
