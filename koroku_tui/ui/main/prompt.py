"""The prompt: Enter sends, ctrl+j inserts a newline (shift+enter only in kitty terminals).

Tab goes to the tool sidebar's list (``ui.main.sidebar_peek``). PageUp and
PageDown scroll the transcript (the prompt is a few lines high:
its own paging moved nothing one could see), and End in an empty prompt
goes down to the newest message, as ctrl+end does (the main screen's
``transcript_page_up``, ``transcript_page_down`` and ``newest``).

A ``/`` at the start opens the slash commands' list (``ui.main.slash``):
while it is shown, the keys it acts on (↑, ↓, Tab, Enter, Escape) are its.

Pasted text goes in with its control characters as visible escapes
(``text.safety.escape_controls``): an ESC of coloured output, a BEL, a
backspace or a bidi override shows as ``\\u001b``, ``\\u0007``...; what the
prompt shows is what is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from koroku_tui.text.safety import escape_controls

__all__ = ["Completion", "Prompt"]


class Completion(Protocol):
    """A list the prompt's text opens (``ui.main.slash``): told of each change, and handed
    each key first (it takes only the keys it acts on, only while shown)."""

    def take_key(self, key: str) -> bool:
        """``True`` when the key was the list's."""

    def text_changed(self, text: str) -> None:
        """The prompt now holds ``text``."""


class Prompt(TextArea):
    """A multi-line input; posts :class:`Prompt.Submitted` on Enter."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "screen.focus_sidebar", "Tool calls", show=False, id="main.focus_sidebar"),
        Binding("pageup", "screen.transcript_page_up", "Scroll up", show=False, id="main.page_up"),
        Binding(
            "pagedown",
            "screen.transcript_page_down",
            "Scroll down",
            show=False,
            id="main.page_down",
        ),
    ]

    @dataclass
    class Submitted(Message):
        """The user pressed Enter with this text (already stripped, never empty)."""

        prompt: Prompt
        text: str
        typed: str = ""
        """The prompt's whole text at Enter (what :meth:`Prompt.take` removes)."""

    completion: Completion | None = None
    """What ``/`` opens (set by the main screen)."""

    async def _on_key(self, event: events.Key) -> None:
        if self.completion is not None and self.completion.take_key(event.key):
            event.stop()
            event.prevent_default()
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text.strip()
            if text:
                self.post_message(self.Submitted(self, text, self.text))
            return
        if event.key in ("ctrl+j", "shift+enter"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        """Typed, pasted or set: the completion list follows the text."""
        if self.completion is not None:
            self.completion.text_changed(self.text)

    def take(self, sent: Submitted) -> None:
        """Remove what ``sent`` sent, keeping whatever was typed after Enter.

        Keys that arrive with the Enter (read together from the terminal, as
        a fast typist's do while the app is busy) are typed into the prompt
        before the screen handles ``sent``: clearing the prompt then lost them.
        """
        if self.text == sent.typed:
            self.clear()
        elif self.text.startswith(sent.typed):
            self.text = self.text[len(sent.typed) :]
            self.move_cursor(self.document.end)
        else:  # edited some other way before the send was handled: cleared, as ever
            self.clear()

    async def _on_paste(self, event: events.Paste) -> None:
        # Textual's handler, on the text as the prompt shows it (and only here:
        # the handlers of the classes below are called too unless prevented).
        event.prevent_default()
        await super()._on_paste(events.Paste(escape_controls(event.text)))

    def action_cursor_line_end(self, select: bool = False) -> None:
        """End: the end of the line; in an empty prompt, down to the newest message."""
        if not self.text and not select:
            self.call_later(self.run_action, "screen.newest")
        else:
            super().action_cursor_line_end(select)
