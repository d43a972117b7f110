"""The parts of an event: a lossless mirror of Gemini's ``types.Part``.

Parts keep everything the API needs back: ``thought`` flags, function call and
response ``id``s, and the raw ``thought_signature`` bytes (as base64 text).
Any part this model has no typed class for (inline data, files, code
execution, and whatever a future SDK adds) is kept as an ``OtherPart`` holding
the SDK's own JSON, so nothing is ever rejected or lost. Parts carry a
``kind`` discriminator (the seed design's JSON shape).

Import them from ``koroku_tui.events``, which re-exports every public name.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

if TYPE_CHECKING:
    # At run time the SDK is imported inside the functions that build a Part:
    # reading stored events, which the first frame does, must not pay its
    # import (~1.5 s here: ``google.genai.types`` brings the client, httpx2
    # and every API model with it).
    from google.genai import types

__all__ = [
    "EventPart",
    "FCMetadata",
    "FunctionCallData",
    "FunctionCallPart",
    "FunctionResponseData",
    "FunctionResponsePart",
    "OtherPart",
    "SessionPart",
    "TextPart",
    "decode_signature",
    "encode_signature",
    "part_from_genai",
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


class StoredModel(BaseModel):
    """The base of every stored part and record: unknown keys are ignored.

    Ignored rather than rejected, so that a row written by a newer Koroku
    still loads in an older one. Not in ``__all__`` (so not re-exported by the
    package): ``records.py`` builds on it, callers never need it.
    """

    model_config = ConfigDict(extra="ignore")


class FCMetadata(StoredModel):
    """The call behind a stored function response: its tool name and arguments.

    Lets a UI show "read_file {'path': 'a.txt'}" with a check or a cross
    without matching responses back to their calls.
    """

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class FunctionCallData(StoredModel):
    """``types.FunctionCall``: the model asks for a tool."""

    name: str
    args: dict[str, Any] | None = None
    id: str | None = None


class FunctionResponseData(StoredModel):
    """``types.FunctionResponse``: a tool's answer, ``{"output": ...}`` or ``{"error": ...}``."""

    name: str
    response: dict[str, Any] | None = None
    id: str | None = None


class _PartBase(StoredModel):
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


class OtherPart(StoredModel):
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
