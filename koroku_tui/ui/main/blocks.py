"""One small widget per transcript entry.

Untrusted text (model, tools, store) is always passed through ``literal`` /
``sanitize``: Statics get a ``rich.text.Text`` (never parsed as markup), and
Markdown gets sanitized text (neither Markdown renderer parses Rich markup).
The answer has its own module (``answer.py``): it is the one block that streams;
the tool row too (``tool_row.py``): it opens on the tool's answer.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Static

from koroku_tui.text.safety import StreamCleaner
from koroku_tui.ui.main.answer import AnswerBlock
from koroku_tui.ui.main.tool_row import ToolRow
from koroku_tui.ui.safe_text import literal, sanitize

__all__ = [
    "AnswerBlock",
    "CompactionBlock",
    "ErrorBlock",
    "Fold",
    "NoticeBlock",
    "ThoughtBlock",
    "ToolRow",
    "UserBlock",
]


class UserBlock(Static):
    """A message the user typed."""

    def __init__(self, text: str) -> None:
        super().__init__(literal(text), classes="block")


class Fold(Static, can_focus=True):
    """A titled block whose body shows only when opened (click, Enter or space).

    One widget, where Textual's Collapsible is four: the transcript mounts
    many of these, and mount and layout cost grow with the widget count.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "open_or_close", "Open/close", show=False),
    ]

    def __init__(self, title: str, body: str = "") -> None:
        super().__init__(classes="block fold")
        self.title = title
        self.body = sanitize(body)
        self.opened = False
        self._redraw()

    def action_open_or_close(self) -> None:
        self.opened = not self.opened
        self._redraw()

    def on_click(self) -> None:
        self.action_open_or_close()

    def _redraw(self) -> None:
        text = literal(f"{'▼' if self.opened else '▶'} {self.title}", style="bold")
        if self.opened and self.body:
            text.append("\n")
            text.append(literal(self.body))
        self.update(text)


class ThoughtBlock(Fold):
    """The model's thought summary, closed by default."""

    def __init__(self, text: str = "") -> None:
        super().__init__("Thinking…", text)
        self._cleaner = StreamCleaner()  # a \r\n or an escape cut in two is cleaned whole

    def append(self, fragment: str) -> None:
        """Add a streamed piece of thought (redrawn only while opened)."""
        self.body += self._cleaner.feed(fragment)
        if self.opened:
            self._redraw()

    def finish(self) -> None:
        self.body += self._cleaner.flush()
        self.title = "Thoughts"
        self._redraw()


class CompactionBlock(Fold):
    """Where older turns were summarised; the summary is inside."""

    def __init__(self, summary: str) -> None:
        super().__init__("Earlier turns summarised", summary)


class ErrorBlock(Static):
    """A failure, as the one sentence the agent gave."""

    def __init__(self, message: str) -> None:
        super().__init__(literal(message), classes="block error")


class NoticeBlock(Static):
    """A quiet one-line note (cancelled turn, older history available...).

    ``cut=True`` marks the note under an answer Gemini cut off (``-cut``): it
    must stand out from the answer it qualifies. ``rewind=True`` marks where
    a rewind took the conversation back (``-rewind``).
    """

    def __init__(self, message: str, *, cut: bool = False, rewind: bool = False) -> None:
        state = " -cut" if cut else " -rewind" if rewind else ""
        super().__init__(literal(message), classes="block notice" + state)
