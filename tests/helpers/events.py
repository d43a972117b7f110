"""Event builders shared by the tests (one definition, not one per file)."""

from __future__ import annotations

from collections.abc import Sequence

from koroku_tui.events import SessionEvent, TextPart


def user(text: str) -> SessionEvent:
    """A user message holding ``text``."""
    return SessionEvent(role="user", parts=[TextPart(text=text)])


def model(text: str, thought: str | None = None) -> SessionEvent:
    """A model answer holding ``text``, after a thought summary when ``thought`` is given."""
    parts = [TextPart(text=thought, thought=True)] if thought else []
    return SessionEvent(role="model", parts=[*parts, TextPart(text=text)])


def texts(events: Sequence[object]) -> list[str]:
    """The visible text of each session event (compactions left out)."""
    return [e.text for e in events if isinstance(e, SessionEvent)]
