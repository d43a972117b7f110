"""Compaction: replace older turns with a summary before the context overflows.

Better than the seed design on every weak point it had:

* the split point is always the start of the current turn (a real user
  message), so a function call is never separated from its response and the
  newest request (with everything after it) stays verbatim;
* an earlier summary is part of what is summarised, so it is folded in;
* the summary is asked for as plain text over a transcript, so no thought
  signature from another model can make the request fail;
* a summary that is empty or larger than what it replaces is rejected, and a
  failure leaves the history untouched and says why.

Raw events are never deleted: the ``CompactionEvent`` only changes what the
model sees (see ``CompactionEvent.kept_from_id``).

The same request proposes lasting facts about the user after the summary
(``lasting_facts.py``): they are stored as suggested memories, at the summary's
row, and wait for the user's acceptance in the memory pane.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import httpx2
from google import genai
from google.genai import errors, types

from koroku_tui.agent.context.budget import estimate_tokens
from koroku_tui.agent.context.lasting_facts import split_reply
from koroku_tui.agent.instructions import COMPACTION_INSTRUCTION, SUMMARY_UNAVAILABLE
from koroku_tui.agent.wire.retry import RetryPolicy, is_retryable, server_retry_delay
from koroku_tui.events import CompactionEvent, Event, SessionEvent
from koroku_tui.events.attachments import AttachedFile
from koroku_tui.events.reading import shorten
from koroku_tui.events.turns import current_turn_opener
from koroku_tui.events.views import Attached, Called, Said, ToolResult, part_views
from koroku_tui.store.errors import StoreError
from koroku_tui.store.memory_files import append_summary

DEFAULT_COMPACTION_MODEL = "gemini-3-pro-preview"
# Tool output is cut to TOOL_OUTPUT_IN_TRANSCRIPT characters in the
# transcript (by ``shorten``, which read_session shares): the summary needs to
# know what was read or run, not every byte of it.


class ContextMessage(Protocol):
    """What compaction needs of a stored message: its row id and its event."""

    @property
    def id(self) -> int: ...

    @property
    def event(self) -> Event | None: ...


class MessageStore(Protocol):
    """The part of ``SessionManager`` compaction writes through."""

    async def add_message(self, event: Any, created_at: float | None = None) -> int: ...


class SuggestionBox(Protocol):
    """Where the lasting facts a summary proposes wait for the user (``SessionManager``)."""

    async def suggest_memories(
        self, texts: Sequence[str], message_id: int | None = None
    ) -> Sequence[Any]: ...


class CompactionError(Exception):
    """Compaction did not happen; ``str()`` is a sentence for the user."""


@dataclass(frozen=True)
class CompactionResult:
    """A stored compaction: the event, its row id, and the memory file written."""

    event: CompactionEvent
    message_id: int | None
    memory_file: Path | None
    summarised_events: int
    kept_events: int
    warning: str | None = None
    """Set when the summary is stored but the memory file could not be written."""
    suggested: int = 0
    """Lasting facts the summary proposed that wait as suggested memories."""


def split_index(events: Sequence[Event]) -> int | None:
    """Index of the first event kept verbatim: the one that opens the current turn.

    ``None`` when there is nothing before it worth summarising (no events, or
    only an earlier summary), and when a summary opens the current turn. A
    summary does open a turn (Gemini receives it as a user message), but it
    cannot be the split point: the context keeps no compaction row after the
    new one, so a summary kept "verbatim" would silently leave the model's
    view, neither kept nor folded into the new summary. Such a turn is left
    whole until the user writes again.
    """
    index = current_turn_opener(events)
    if index is None or not isinstance(events[index], SessionEvent):
        return None
    if not any(isinstance(e, SessionEvent) for e in events[:index]):
        return None
    return index


def _event_lines(event: Event) -> list[str]:
    if isinstance(event, CompactionEvent):
        return [f"Earlier summary: {event.summary}"]
    lines: list[str] = []
    speaker = "User" if event.role == "user" else "Koroku"
    for view in part_views(event):
        match view:
            case Said(file=AttachedFile() as file):  # shortened as a tool's output is
                lines.append(f"{speaker} attached {file.label}: {shorten(file.content or '')}")
            case Said(text, thought=False) if text.strip():
                lines.append(f"{speaker}: {text}")
            case Said():
                pass  # thoughts (and blank text) never reach the summary
            case Called(name, args):
                shown = json.dumps(args, ensure_ascii=False)
                lines.append(f"Koroku called {name} {shorten(shown, 500)}")
            case ToolResult(name, _, response):
                shown = json.dumps(response, ensure_ascii=False)
                lines.append(f"Tool {name} answered: {shorten(shown)}")
            case Attached(data):
                lines.append(f"{speaker} attached {', '.join(sorted(data))}")
    return lines


def transcript(events: Sequence[Event]) -> str:
    """The events as plain text for the summariser, thoughts left out."""
    return "\n".join(line for event in events for line in _event_lines(event))


def summary_text(response: types.GenerateContentResponse) -> str:
    """The answer's visible text; thought parts are excluded."""
    if not response.candidates or response.candidates[0].content is None:
        return ""
    parts = response.candidates[0].content.parts or []
    return "".join(p.text for p in parts if p.text and not p.thought).strip()


class SummaryCompactor:
    """Summarises the older part of a context and stores the result."""

    def __init__(
        self,
        client: genai.Client,
        store: MessageStore | None,
        memory_dir: Path,
        model: str = DEFAULT_COMPACTION_MODEL,
        retry: RetryPolicy | None = None,
        redact: Callable[[str], str] | None = None,
        suggestions: SuggestionBox | None = None,
    ) -> None:
        self._client = client
        # The transcript is built from stored rows, some maybe older than
        # redaction: the live key is taken out of the request here too.
        self._redact = redact or (lambda text: text)
        self._store = store
        self._suggestions = suggestions
        self._memory_dir = memory_dir
        self.model = model
        self._retry = retry or RetryPolicy()

    async def generate_summary(self, events: Sequence[Event]) -> str:
        """One request to the compaction model, no tools; "Summary unavailable." if empty."""
        request = types.Content(
            role="user",
            parts=[
                types.Part(
                    text="The conversation to summarise:\n\n" + self._redact(transcript(events))
                )
            ],
        )
        config = types.GenerateContentConfig(system_instruction=COMPACTION_INSTRUCTION)
        failures = 0
        while True:
            try:
                response = await self._client.aio.models.generate_content(
                    model=self.model, contents=[request], config=config
                )
                return summary_text(response) or SUMMARY_UNAVAILABLE
            except Exception as exc:
                # The request has no side effects, so a transient failure
                # (429, 5xx, a dropped connection) is simply asked again.
                failures += 1
                if not is_retryable(exc) or failures >= self._retry.attempts:
                    raise
                await asyncio.sleep(self._retry.delay(failures, server_retry_delay(exc)))

    async def compact(
        self, messages: Sequence[ContextMessage], now: datetime | None = None
    ) -> CompactionResult | None:
        """Summarise everything before the newest user turn; ``None`` if nothing to do.

        Raises ``CompactionError`` (history untouched) when the summary could
        not be made or is not worth keeping.
        """
        readable = [m for m in messages if m.event is not None]
        events = [m.event for m in readable if m.event is not None]
        split = split_index(events)
        if split is None:
            return None
        older, kept = events[:split], readable[split:]
        try:
            summary, facts = split_reply(await self.generate_summary(older))
        except errors.APIError as exc:
            raise CompactionError(
                f"Compaction failed: the summariser answered {exc.code} "
                f"({self._redact(str(exc.message))}). "
                "The conversation was left as it was."
            ) from exc
        except (httpx2.TransportError, OSError, TimeoutError) as exc:
            raise CompactionError(
                "Compaction failed: the summariser could not be reached. "
                "The conversation was left as it was."
            ) from exc
        # The model may repeat a key it saw (in a row older than redaction, or
        # rebuilt from pieces): the summary is stored and written to memory.
        summary = self._redact(summary)
        if summary in ("", SUMMARY_UNAVAILABLE):
            raise CompactionError(
                "Compaction failed: the summariser returned no text. "
                "The conversation was left as it was."
            )
        event = CompactionEvent.from_summary(
            summary, kept_from_id=kept[0].id, kept_events=len(kept)
        )
        replaced_tokens = sum(estimate_tokens(e) for e in older)
        if estimate_tokens(event) >= replaced_tokens:
            raise CompactionError(
                "Compaction skipped: the summary came out longer than the turns it would "
                "replace. The conversation was left as it was."
            )
        message_id = await self._store.add_message(event) if self._store else None
        memory_file: Path | None = None
        warning = None
        try:
            memory_file = append_summary(self._memory_dir, summary, now or datetime.now())
        except OSError as exc:
            # The database holds the summary already; the day file is a copy.
            warning = f"The summary is saved, but the memory file could not be written: {exc}"
        suggested = 0
        if self._suggestions is not None and facts:
            try:
                facts = [self._redact(fact) for fact in facts]
                suggested = len(await self._suggestions.suggest_memories(facts, message_id))
            except StoreError as exc:
                warning = f"The summary is saved, but its suggested memories could not be: {exc}"
        return CompactionResult(
            event=event,
            message_id=message_id,
            memory_file=memory_file,
            summarised_events=len(older),
            kept_events=len(kept),
            warning=warning,
            suggested=suggested,
        )
