"""What a stored event says, part by part, for anything that shows or measures it.

Every renderer (the Markdown export, the history screen, the compaction
transcript, the transcript blocks, the tool sidebar, the budget's estimate)
walks an event through ``part_views`` and matches on four small records
instead of on the stored part classes:

* ``Said``: text, the model's thinking flagged ``thought``, a file attached
  with ``@`` read from its frame (``file``, ``events.attachments.frame_of``);
* ``Called``: a function call (arguments ``{}`` when the model sent none);
* ``ToolResult``: a tool's answer, with the call behind it;
* ``Attached``: any other part (inline data, files, code...), by its kinds.

Decided here once: a response without ``FCMetadata`` (a row written before
Koroku stored it, or by another program) is still a tool result, named by
the response itself, its arguments unknown (``args is None``). An
``OtherPart`` holding a function response (one with fields the typed part
does not model) is a tool result too.

Pure and plain: no escaping here. Hidden characters are made visible by each
renderer (``text.safety``, ``text.tool_args``), which knows its medium.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

from koroku_tui.events import (
    CompactionEvent,
    Event,
    EventPart,
    FunctionCallPart,
    FunctionResponsePart,
    TextPart,
)
from koroku_tui.events.attachments import AttachedFile, frame_of

__all__ = [
    "Attached",
    "Called",
    "PartView",
    "Said",
    "ToolResult",
    "part_view",
    "part_views",
    "speaker",
    "tool_results",
]

_PART_FLAGS = frozenset({"thought", "thought_signature"})


@dataclass(frozen=True, slots=True)
class Said:
    """Text of a message; ``thought`` marks the model's thinking."""

    text: str
    thought: bool = False
    file: AttachedFile | None = None
    """The file an ``@path`` attached, when this text is its frame (a user message's)."""


@dataclass(frozen=True, slots=True)
class Called:
    """The model asking for a tool."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's answer and the call it answers.

    ``name`` is the call's (``FCMetadata``), or the response's own when the
    metadata is missing; ``args`` is then ``None``: unknown, not empty.
    """

    name: str
    args: dict[str, Any] | None
    response: dict[str, Any] | None
    """The response as stored: ``{"output": ...}`` or ``{"error": ...}``."""

    @property
    def failed(self) -> bool:
        """True when the tool failed: its response holds an ``error`` key."""
        return "error" in (self.response or {})

    @property
    def outcome(self) -> Any:
        """The error when it failed, else the output (the whole response if it has none)."""
        response = self.response or {}
        return response["error"] if self.failed else response.get("output", response)


@dataclass(frozen=True, slots=True)
class Attached:
    """Any other part, kept as the SDK's JSON; ``kinds`` are its data fields."""

    data: dict[str, Any]

    @property
    def kinds(self) -> list[str]:
        """The part's fields other than the thought flags, sorted."""
        return sorted(key for key in self.data if key not in _PART_FLAGS)


PartView: TypeAlias = Said | Called | ToolResult | Attached


def part_view(part: EventPart) -> PartView:
    """What one stored part says."""
    if isinstance(part, TextPart):
        return Said(part.text, bool(part.thought))
    if isinstance(part, FunctionCallPart):
        call = part.function_call
        return Called(call.name, call.args or {})
    meta = part.fc_metadata
    if isinstance(part, FunctionResponsePart):
        response = part.function_response
        name, answer = response.name, response.response
    else:
        raw = part.part.get("function_response")
        if not isinstance(raw, dict):
            return Attached(part.part)
        answer = raw.get("response")
        name, answer = str(raw.get("name") or ""), answer if isinstance(answer, dict) else None
    if meta is not None:
        return ToolResult(meta.name, dict(meta.args), answer)
    return ToolResult(name, None, answer)


def part_views(event: Event) -> Iterator[PartView]:
    """What each part of ``event`` says, in order (a summary is its text)."""
    for index, part in enumerate(event.parts):
        view = part_view(part)
        if isinstance(view, Said) and not view.thought:
            file = frame_of(event.role, index, view.text)
            if file is not None:
                view = Said(view.text, file=file)
        yield view


def tool_results(event: Event) -> list[ToolResult]:
    """The tool results ``event`` holds (each a row in the transcript and the sidebar)."""
    return [view for view in part_views(event) if isinstance(view, ToolResult)]


def speaker(event: Event) -> str:
    """Who an event is from, in lower case: "you", "model", "tool results" or "compaction".

    A role Koroku never writes is given as it is ("unknown role" when unset).
    """
    if isinstance(event, CompactionEvent):
        return "compaction"
    if event.role == "model":
        return "model"
    if event.is_real_user_turn:
        return "you"
    if event.role == "user":
        return "tool results"
    return event.role or "unknown role"
