"""The prompt: Enter sends, ctrl+j inserts a newline (shift+enter only in kitty terminals).

Tab goes to the tool sidebar's list (``ui.main.sidebar_peek``). PageUp and
PageDown scroll the transcript (the prompt is a few lines high:
its own paging moved nothing one could see), and End in an empty prompt
goes down to the newest message, as ctrl+end does (the main screen's
``transcript_page_up``, ``transcript_page_down`` and ``newest``).

A ``/`` at the start opens the slash commands' list (``ui.main.slash``):
while it is shown, the keys it acts on (↑, ↓, Tab, Enter, Escape) are its.

``@`` at the start or after a space opens the file picker above the prompt
(``ui.main.file_picker``): what follows it narrows the list, up and down
move, Enter or Tab writes the chosen ``@path``, Escape closes the list; the
file goes with the message when it is sent (``ui.main.attaching``). Enter
after a path typed out whole sends, as it would with no list.

Keys read together (a fast typist's, a macro's, keys typed while the app was
busy) act in the order typed: the prompt runs its own editing keys itself
(``ui.own_keys`` says why).

Pasted text goes in with its control characters as visible escapes
(``text.safety.escape_controls``): an ESC of coloured output, a BEL, a
backspace or a bidi override shows as ``\\u001b``, ``\\u0007``...; what the
prompt shows is what is sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Protocol

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from koroku_tui.events.attachments import mention_text
from koroku_tui.text.safety import escape_controls
from koroku_tui.ui.main.file_picker import FilePicker
from koroku_tui.ui.own_keys import run_own_binding

__all__ = ["Completion", "KeyTaker", "Prompt"]


class KeyTaker(Protocol):
    """Something the prompt hands a key before acting on it itself."""

    def take_key(self, key: str) -> bool:
        """``True`` when the key was taken (the prompt then does nothing with it)."""


class Completion(KeyTaker, Protocol):
    """A list the prompt's text opens (``ui.main.slash``): told of each change, and handed
    each key first (it takes only the keys it acts on, only while shown)."""

    def text_changed(self, text: str) -> None:
        """The prompt now holds ``text``."""


_MENTION_AT_CURSOR = re.compile(r'(?<!\S)@([^\s"]*)$')
_PICKER_KEYS = frozenset({"up", "down", "enter", "tab", "escape"})


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

    queued: KeyTaker | None = None
    """The messages queued during a turn: ↑ in an empty prompt takes the newest back
    (``ui.main.queue``; set by the main screen)."""

    suggested: str | None = None
    """Text the app put here for the user to send or type over (the demo's opening), not
    typed: while the prompt still holds exactly it, closing keeps no draft."""

    def suggest(self, text: str) -> None:
        """Put ``text`` here selected, so Enter sends it and typing replaces it."""
        self.text = self.suggested = text
        self.select_all()

    async def _on_key(self, event: events.Key) -> None:
        if self.completion is not None and self.completion.take_key(event.key):
            event.stop()
            event.prevent_default()
            return
        picker = self._picker()
        if picker is not None and picker.is_open and event.key in _PICKER_KEYS:
            event.stop()
            event.prevent_default()
            if self._use_picker(picker, event.key):
                return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text.strip()
            if text:
                # Keys read with the Enter go in before the send is handled: at the
                # end, they follow what was sent, and ``take`` keeps them.
                self.move_cursor(self.document.end)
                self.post_message(self.Submitted(self, text, self.text))
            return
        if event.key in ("ctrl+j", "shift+enter"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if self.queued is not None and self.queued.take_key(event.key):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)  # typed text goes in (and the cursor's blink restarts)
        await run_own_binding(self, event)  # Backspace, arrows...: now, not once bubbled up

    # -- the @ picker ----------------------------------------------------

    def _picker(self) -> FilePicker | None:
        """The screen's ``@`` picker (looked up once: a query per key would walk the transcript)."""
        picker: FilePicker | None = getattr(self, "_file_picker", None)
        if picker is None and self.is_attached:
            picker = next(iter(self.screen.query(FilePicker)), None)
            self._file_picker = picker
            if picker is not None:
                picker.on_choose = self._write_choice  # a click on a file
        return picker

    def _mention(self) -> str | None:
        """What follows an ``@`` just before the cursor (``None``: the cursor is in none)."""
        if self.selection.start != self.selection.end:
            return None
        row, column = self.cursor_location
        found = _MENTION_AT_CURSOR.search(self.document.get_line(row)[:column])
        return found.group(1) if found else None

    def on_text_area_changed(self) -> None:
        """Typed, pasted or set: the ``/`` list and the ``@`` picker follow the text."""
        if self.completion is not None:
            self.completion.text_changed(self.text)
        self._follow_mention()

    def on_text_area_selection_changed(self) -> None:
        self._follow_mention()

    def _follow_mention(self) -> None:
        picker = self._picker()
        if picker is None:
            return
        query = self._mention()
        if query is not None:
            picker.show(query)
        elif picker.is_open:
            picker.close()

    def _use_picker(self, picker: FilePicker, key: str) -> bool:
        """Act on ``key`` in the open picker; False when Enter should still send."""
        if key in ("up", "down"):
            picker.action_cursor_up() if key == "up" else picker.action_cursor_down()
            return True
        chosen = picker.chosen() if key in ("enter", "tab") else None
        if chosen is None or (key == "enter" and chosen == self._mention()):
            picker.close()
            # Nothing to choose, or the path typed out whole: Enter sends as ever.
            return key != "enter"
        self._write_choice(chosen)
        return True

    def _write_choice(self, path: str) -> None:
        """Put ``@path`` in place of the ``@`` and what follows it, and close the picker."""
        query = self._mention()
        picker = self._picker()
        if picker is not None:
            picker.close()
        if query is None:
            return
        row, column = self.cursor_location
        self.replace(mention_text(path) + " ", (row, column - len(query) - 1), (row, column))
        self.focus()

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
