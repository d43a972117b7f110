"""The prompt: Enter sends, ctrl+j inserts a newline (shift+enter only in kitty terminals)."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea

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
