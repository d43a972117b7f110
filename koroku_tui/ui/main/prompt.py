"""The prompt: Enter sends, ctrl+j inserts a newline (shift+enter only in kitty terminals).

Pasted text goes in with its control characters as visible escapes
(``text.safety.escape_controls``): an ESC of coloured output, a BEL, a
backspace or a bidi override shows as ``\\u001b``, ``\\u0007``...; what the
prompt shows is what is sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from koroku_tui.text.safety import escape_controls

__all__ = ["Prompt"]


class Prompt(TextArea):
    """A multi-line input; posts :class:`Prompt.Submitted` on Enter."""

    @dataclass
    class Submitted(Message):
        """The user pressed Enter with this text (already stripped, never empty)."""

        prompt: Prompt
        text: str

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text.strip()
            if text:
                self.post_message(self.Submitted(self, text))
            return
        if event.key in ("ctrl+j", "shift+enter"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)

    async def _on_paste(self, event: events.Paste) -> None:
        # Textual's handler, on the text as the prompt shows it (and only here:
        # the handlers of the classes below are called too unless prevented).
        event.prevent_default()
        await super()._on_paste(events.Paste(escape_controls(event.text)))

    def paste(self, text: str) -> None:
        """Insert pasted ``text`` at the cursor, its control characters as escapes."""
        self.insert(escape_controls(text))
