"""The memory pane's list: kept memories and suggested ones, newest first, with their source.

Memory text comes from the user and the model and is what the user decides
on (accept, delete): every hidden character shows as a ``\\u…`` escape
(``visible``), never as markup, never raw. ``enter`` is left to the screen's
``history.open_memory`` binding (the source conversation, at its message).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.binding import BindingType

from koroku_tui.store import MemoryRecord
from koroku_tui.ui.history.cursor import CursorList
from koroku_tui.ui.history.dates import short_when
from koroku_tui.ui.history.lists import NAVIGATION
from koroku_tui.ui.history.wording import TITLE_WIDTH, clip, plural
from koroku_tui.ui.safe_text import literal, visible

__all__ = ["MemoryList", "delete_memory_question", "memory_line", "memory_status"]

TEXT_WIDTH = 200
"""Characters of a memory shown on its line (the line ends in an ellipsis past the pane)."""
SUGGESTED_MARK = "? "
KEPT_MARK = "  "
_SPACES = re.compile(r"[\n\t ]+")


def _flat(text: str, width: int) -> str:
    flat = _SPACES.sub(" ", text).strip()
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _source(memory: MemoryRecord) -> str:
    if memory.source_state == "none":
        return "added by hand"
    if memory.source_state == "gone":
        return "from a conversation removed for good"
    title = clip(memory.source_title or "Untitled session", TITLE_WIDTH)
    trash = " (in the trash)" if memory.source_state == "trash" else ""
    return f"from “{title}”{trash}"


def memory_line(memory: MemoryRecord, now: datetime) -> Text:
    """Two lines: its number and text (a suggestion marked), then what it is and its source."""
    suggested = memory.is_suggestion
    line = Text(SUGGESTED_MARK if suggested else KEPT_MARK, style="bold yellow")
    line.append(f"{memory.id} ", style="dim")
    line.append_text(visible(_flat(memory.text, TEXT_WIDTH), "bold" if not suggested else ""))
    what = "suggested" if suggested else "memory"
    facts = f"\n  {what} · {_source(memory)} · {short_when(memory.created_at, now)}"
    line.append_text(literal(facts, "dim"))
    return line


def memory_status(memories: list[MemoryRecord]) -> str:
    """The line under the pane: how many are kept and how many wait."""
    if not memories:
        return "No memories yet: Koroku keeps one when you ask it to remember something."
    waiting = sum(1 for memory in memories if memory.is_suggestion)
    kept = plural(len(memories) - waiting, "memory", "memories")
    return f"{kept}, {waiting} suggested" if waiting else kept


def delete_memory_question(memory: MemoryRecord) -> Text:
    """What deleting a memory asks: which one, and that its conversation stays."""
    what = "suggestion" if memory.is_suggestion else "memory"
    question = Text(f"Delete {what} {memory.id} ")
    question.append_text(visible(f"“{_flat(memory.text, TEXT_WIDTH)}”", "bold"))
    question.append(
        "? Koroku will not know it in later conversations. This cannot be undone; "
        "the conversation it came from stays."
    )
    return question


class MemoryList(CursorList, inherit_bindings=False):
    """Memories and suggestions, newest first."""

    BINDINGS: ClassVar[list[BindingType]] = NAVIGATION

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.memories: list[MemoryRecord] = []

    def show_memories(self, memories: list[MemoryRecord], now: datetime) -> None:
        """Replace the memories shown, keeping the cursor on the same one where it can."""
        kept = self.highlighted_memory
        self.memories = memories
        self.set_options(memory_line(memory, now) for memory in memories)
        if not memories:
            return
        ids = [memory.id for memory in memories]
        if kept is not None and kept.id in ids:
            self.highlighted = ids.index(kept.id)
        else:
            self.highlighted = min(self.highlighted or 0, len(memories) - 1)

    def memory_at(self, index: int | None) -> MemoryRecord | None:
        """The memory shown at ``index``, if any."""
        if index is None or not 0 <= index < len(self.memories):
            return None
        return self.memories[index]

    @property
    def highlighted_memory(self) -> MemoryRecord | None:
        """The memory under the cursor."""
        return self.memory_at(self.highlighted)
