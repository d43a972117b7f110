"""One small widget per transcript entry.

Untrusted text (model, tools, store) is always passed through ``literal`` /
``sanitize``: Statics get a ``rich.text.Text`` (never parsed as markup), and
Markdown gets sanitized text (the Markdown widget does not parse Rich markup).
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Collapsible, Markdown, Static
from textual.widgets._markdown import MarkdownStream

from koroku_tui.ui.main.format import args_short, status_mark
from koroku_tui.ui.safe_text import literal, sanitize

__all__ = [
    "AnswerBlock",
    "CompactionBlock",
    "ErrorBlock",
    "NoticeBlock",
    "ThoughtBlock",
    "ToolRow",
    "UserBlock",
]


class UserBlock(Static):
    """A message the user typed."""

    def __init__(self, text: str) -> None:
        super().__init__(literal(text), classes="block")


class AnswerBlock(Markdown):
    """The model's visible answer; streamed through ``Markdown.get_stream``."""

    def __init__(self, text: str = "") -> None:
        super().__init__(sanitize(text), classes="block")
        self._stream: MarkdownStream | None = None

    async def write(self, fragment: str) -> None:
        """Append a streamed piece (batched by the stream, never a full re-render)."""
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(sanitize(fragment))

    async def finish(self) -> None:
        """Flush and stop the stream (safe to call twice)."""
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.stop()


class ThoughtBlock(Collapsible):
    """The model's thought summary, collapsed by default."""

    def __init__(self, text: str = "") -> None:
        self._text = sanitize(text)
        self._body = Static(literal(self._text), classes="thought-body")
        super().__init__(self._body, title="Thinking…", collapsed=True, classes="block")

    def append(self, fragment: str) -> None:
        """Add a streamed piece of thought (plain text, cheap to re-render)."""
        self._text += sanitize(fragment)
        self._body.update(literal(self._text))

    def finish(self) -> None:
        self.title = "Thoughts"


class ToolRow(Static):
    """One line per tool call: pending, then a check or a cross."""

    def __init__(self, name: str, args: dict[str, Any], call_id: str | None = None) -> None:
        super().__init__(classes="block tool-row -pending")
        self.tool_name = name
        self.args = args
        self.call_id = call_id
        self.done = False
        self.failed = False
        self._render_row()

    def _render_row(self) -> None:
        text = literal(f"{status_mark(self.done, self.failed)} {self.tool_name} ")
        text.append(literal(args_short(self.args, 70), style="dim"))
        self.update(text)

    def finish(self, failed: bool) -> None:
        """Turn the pending mark into a check or a cross."""
        self.done, self.failed = True, failed
        self.set_class(False, "-pending")
        self.set_class(failed, "-failed")
        self._render_row()


class CompactionBlock(Collapsible):
    """Where older turns were summarised; the summary is inside."""

    def __init__(self, summary: str) -> None:
        body = Static(literal(summary), classes="compaction-body")
        super().__init__(body, title="Earlier turns summarised", collapsed=True, classes="block")


class ErrorBlock(Static):
    """A failure, as the one sentence the agent gave."""

    def __init__(self, message: str) -> None:
        super().__init__(literal(message), classes="block error")


class NoticeBlock(Static):
    """A quiet one-line note (cancelled turn, older history available...)."""

    def __init__(self, message: str) -> None:
        super().__init__(literal(message), classes="block notice")
