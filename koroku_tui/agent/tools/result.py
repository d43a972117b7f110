"""What a tool call produced, and how it goes back to Gemini.

Gemini expects ``{"output": ...}`` or ``{"error": ...}`` in a function
response, the call's ``id`` echoed back, and every response of one model step
in ONE user ``Content``, in call order (see the shared gemini-wire notes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from koroku_tui.events import FCMetadata

if TYPE_CHECKING:
    # Imported where a Part is built: ``ToolError`` reaches the approval
    # dialog, which loads before the app's first frame, without the SDK.
    from google.genai import types

__all__ = ["ToolError", "ToolResponses", "ToolResult", "tool_responses"]


class ToolError(Exception):
    """An expected tool failure; its message is shown to the model as is.

    Tools raise this for problems the model can act on (a path outside the
    workspace, a missing file); the executor turns it into an error result
    without the exception's type name.
    """


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one function call: exactly one of ``output`` or ``error``."""

    name: str
    """The tool's name, as the model called it."""
    call_id: str | None
    """The ``FunctionCall.id`` this answers; echoed back so Gemini can pair them."""
    output: str | None = None
    error: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    """The arguments the model sent (for FCMetadata and the UI)."""
    refused: bool = False
    """Approval kept the call from running (the rules, the user, or no one to ask).

    Known only live: the stored response holds the refusal's words alone,
    which a tool that ran can write too (``--output-format json`` reads this).
    """

    def __post_init__(self) -> None:
        if (self.output is None) == (self.error is None):
            raise ValueError("a ToolResult holds exactly one of output or error")

    @classmethod
    def success(
        cls, call: types.FunctionCall, output: str, *, name: str | None = None
    ) -> ToolResult:
        """A result answering ``call`` with ``output``."""
        return cls(
            name=name or call.name or "", call_id=call.id, output=output, args=call.args or {}
        )

    @classmethod
    def failure(
        cls, call: types.FunctionCall, error: str, *, name: str | None = None
    ) -> ToolResult:
        """A result answering ``call`` with an ``error`` message."""
        return cls(name=name or call.name or "", call_id=call.id, error=error, args=call.args or {})

    @property
    def is_error(self) -> bool:
        """True when the tool failed (the response holds an ``error`` key)."""
        return self.error is not None

    @property
    def text(self) -> str:
        """The output or the error message, whichever this result holds."""
        return self.error if self.error is not None else (self.output or "")

    @property
    def response(self) -> dict[str, Any]:
        """The ``FunctionResponse.response`` payload: ``{"output": ...}`` or ``{"error": ...}``."""
        if self.error is not None:
            return {"error": self.error}
        return {"output": self.output}

    def to_genai_message(self) -> types.Part:
        """A ``types.Part`` carrying this result as a function response.

        Built by hand because ``Part.from_function_response`` cannot set the id.
        """
        from google.genai import types

        return types.Part(
            function_response=types.FunctionResponse(
                id=self.call_id, name=self.name, response=self.response
            )
        )

    def fc_metadata(self) -> FCMetadata:
        """The call behind this result, stored next to its response part."""
        return FCMetadata(name=self.name, args=dict(self.args))


class ToolResponses(NamedTuple):
    """All responses of one model step, ready to send and to store."""

    content: types.Content
    """ONE user content with one function response part per call, in call order."""
    metadata: list[FCMetadata | None]
    """One FCMetadata per part (typed to fit ``SessionEvent.from_content``)."""


def tool_responses(results: Sequence[ToolResult]) -> ToolResponses:
    """Gather the results of one model step into one user content, keeping their order.

    Raises ``ValueError`` for an empty sequence: an empty user content is not a
    valid answer to a function call turn.
    """
    if not results:
        raise ValueError("tool_responses needs at least one result")
    from google.genai import types

    content = types.Content(role="user", parts=[r.to_genai_message() for r in results])
    return ToolResponses(content=content, metadata=[r.fc_metadata() for r in results])
