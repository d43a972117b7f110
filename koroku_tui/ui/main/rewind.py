"""The rewind list: this session's messages, newest first; Enter rewinds, ``f`` forks.

Opened by Escape twice on an idle prompt, ``main.rewind`` or the palette.
It only chooses: the main screen does the rewind or fork once the list is
dismissed with a :class:`TurnChoice` (``None`` when closed with Escape).

Each row is ``#id  2025-06-01 14:05  first line``; the first line is the
user's own text, untrusted like any stored row, so hidden characters show as
``\\u202e``-style escapes and markup stays literal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar, Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from koroku_tui.events import SessionEvent
from koroku_tui.store import StoredMessage
from koroku_tui.text.safety import escape_hidden
from koroku_tui.ui.history.dates import full_when
from koroku_tui.ui.key_bar import KeyBar
from koroku_tui.ui.safe_text import literal

__all__ = ["FIRST_LINE_WIDTH", "RewindScreen", "TurnChoice", "TurnList", "first_line"]

FIRST_LINE_WIDTH = 70
"""Characters of a message's first line shown in its row."""

_WHOLE = "whole"
"""The option id of fork mode's "the whole conversation" row."""

Mode = Literal["rewind", "fork"]


def first_line(message: StoredMessage, width: int = FIRST_LINE_WIDTH) -> str:
    """The first non-blank line of a user message, hidden characters escaped, clipped."""
    event = message.event
    text = event.text if isinstance(event, SessionEvent) else ""
    lines = [line for line in text.splitlines() if line.strip()]
    line = " ".join(escape_hidden(lines[0]).split()) if lines else "(no text)"
    more = len(lines) > 1
    if len(line) > width:
        line, more = line[: width - 1], True
    return line + ("…" if more else "")


@dataclass(frozen=True, slots=True)
class TurnChoice:
    """What the user chose: rewind to before ``message``, or fork there.

    ``message`` is ``None`` only for a fork of the whole conversation.
    """

    message: StoredMessage | None
    fork: bool


class TurnList(OptionList):
    """The messages; Enter picks the highlighted one (``OptionSelected``), ``f`` forks at it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Rewind here", id="rewind.rewind"),
        Binding("f", "fork", "Fork here", id="rewind.fork"),
    ]

    def action_fork(self) -> None:
        screen = self.screen
        if isinstance(screen, RewindScreen):
            screen.choose(self.highlighted, fork=True)


class RewindScreen(ModalScreen[TurnChoice | None]):
    """``turns`` (newest first) to pick from; in ``"fork"`` mode Enter forks too.

    Fork mode adds a first row, the whole conversation (a fork at the end).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="rewind.close"),
    ]

    def __init__(self, turns: list[StoredMessage], now: datetime, mode: Mode = "rewind") -> None:
        super().__init__()
        self.turns = turns
        self.mode = mode
        self._now = now

    def compose(self) -> ComposeResult:
        options: list[Option | None] = []
        if self.mode == "fork":
            whole = literal("Now: the whole conversation so far", "bold")
            options.append(Option(whole, id=_WHOLE))
        options += [Option(self._row(turn), id=f"m{turn.id}") for turn in self.turns]
        with Vertical(id="rewind-dialog"):
            yield Static(self._title(), id="rewind-title")
            yield TurnList(*options, id="rewind-list")
        yield KeyBar()

    def _title(self) -> Text:
        if self.mode == "fork":
            return literal(
                "Fork: a new session holding the conversation before the chosen message "
                "(this one stays as it is). Enter or f forks, Escape closes."
            )
        return literal(
            "Rewind: the conversation goes back to before the chosen message, which "
            "returns to the prompt; later turns stay in the history (ctrl+r). "
            "Enter rewinds, f forks there instead, Escape closes."
        )

    def _row(self, turn: StoredMessage) -> Text:
        row = Text()
        row.append(f"#{turn.id}  ", style="dim")
        row.append(full_when(turn.created_at, self._now) + "  ", style="dim")
        row.append_text(literal(first_line(turn)))
        return row

    def on_mount(self) -> None:
        self.query_one(TurnList).focus()

    def message_at(self, index: int | None) -> StoredMessage | None:
        """The message of row ``index`` (``None`` for the whole-conversation row)."""
        offset = 1 if self.mode == "fork" else 0
        if index is None or not 0 <= index - offset < len(self.turns):
            return None
        return self.turns[index - offset]

    def choose(self, index: int | None, *, fork: bool) -> None:
        """Close the list with the choice at ``index`` (nothing happens on no row)."""
        if index is None:
            return
        message = self.message_at(index)
        if message is None and not fork:
            return  # the whole-conversation row: only a fork goes there
        self.dismiss(TurnChoice(message, fork=fork))

    @on(OptionList.OptionSelected, "#rewind-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.choose(event.option_index, fork=self.mode == "fork")

    def action_close(self) -> None:
        self.dismiss(None)
