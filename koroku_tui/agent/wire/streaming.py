"""Folding a streamed reply into one ``types.Content`` without losing a signature.

Every SSE event is a whole ``GenerateContentResponse`` holding a few parts.
Consecutive plain text parts are joined so the stored message stays compact,
but a part that carries a ``thought_signature`` is never merged with another
part: Gemini 3 wants each signature back on the part it came with, and a
final chunk may hold an EMPTY text part whose only job is to carry one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from google.genai import types

from koroku_tui.agent.wire.call_depth import kept_args
from koroku_tui.text.safety import without_lone_surrogates


def _joinable(previous: types.Part, part: types.Part) -> bool:
    """Two unsigned text parts of the same kind (answer or thought) can be joined."""
    return (
        previous.text is not None
        and part.text is not None
        and previous.thought_signature is None
        and part.thought_signature is None
        and bool(previous.thought) == bool(part.thought)
        and _only_text_fields(previous)
        and _only_text_fields(part)
    )


def _only_text_fields(part: types.Part) -> bool:
    return all(
        getattr(part, name) is None
        for name in type(part).model_fields
        if name not in ("text", "thought")
    )


def _encodable(part: types.Part) -> types.Part:
    """``part`` fit to store and send back.

    Lone surrogates in its text or call arguments are replaced (see
    text.safety), and arguments nested too deeply become a placeholder (see
    call_depth): first, so that nothing after walks the deep ones.
    """
    update: dict[str, object] = {}
    if part.text is not None:
        text = without_lone_surrogates(part.text)
        if text != part.text:
            update["text"] = text
    call = part.function_call
    if call is not None and call.args:
        args = without_lone_surrogates(kept_args(call.args))
        if args is not call.args:
            update["function_call"] = call.model_copy(update={"args": args})
    return part.model_copy(update=update) if update else part


@dataclass
class StreamAccumulator:
    """Collects the chunks of one streamed reply.

    ``parts`` is the reply so far; it is usable at any moment, which is what
    lets a cut stream or a cancelled turn keep the text already received.
    """

    parts: list[types.Part] = field(default_factory=list)
    usage: types.GenerateContentResponseUsageMetadata | None = None
    finish_reason: types.FinishReason | None = None
    chunks: int = 0

    def add(self, chunk: types.GenerateContentResponse) -> list[types.Part]:
        """Fold one chunk in; returns the chunk's own parts (for live display)."""
        self.chunks += 1
        if chunk.usage_metadata is not None:
            self.usage = chunk.usage_metadata
        if not chunk.candidates:
            return []
        candidate = chunk.candidates[0]
        if candidate.finish_reason is not None:
            self.finish_reason = candidate.finish_reason
        new_parts = list(candidate.content.parts or []) if candidate.content else []
        new_parts = [_encodable(part) for part in new_parts]
        for part in new_parts:
            self._append(part)
        return new_parts

    def _append(self, part: types.Part) -> None:
        if self.parts and _joinable(self.parts[-1], part):
            previous = self.parts[-1]
            self.parts[-1] = previous.model_copy(
                update={"text": (previous.text or "") + (part.text or "")}
            )
        else:
            self.parts.append(part)

    @property
    def complete(self) -> bool:
        """True once the stream said why it finished."""
        return self.finish_reason is not None

    def content(self) -> types.Content:
        """The reply so far as a model Content."""
        return types.Content(role="model", parts=list(self.parts))
