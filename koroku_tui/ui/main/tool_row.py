"""The transcript row of one tool call, which opens in place on what the tool answered.

Closed it is one line: a mark (pending, done, failed, denied, interrupted),
the tool, its arguments and, when it did not run to the end, why: the first
line of the error, "denied by you" (in the dialog), "denied by your rules"
(the approval rules), or "interrupted". Enter, space or a
click opens it on the answer, shortened to ``SHOWN_LINES`` lines and
``SHOWN_CHARS`` characters with a line saying how much is left; Enter again
shows it whole, once more closes it. Escape closes it and gives the prompt
its focus back. Subclasses (``recall_row.SearchRow``) change the line and
how the answer is drawn (``call_state.CallState``), not how the row opens.
A step of many calls draws them in one ``call_list.CallList`` instead.

The answer is the tool's (untrusted): it is drawn through ``literal``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static

from koroku_tui.ui.main.call_state import (
    INTERRUPTED,
    SHOWN_CHARS,
    SHOWN_LINES,
    CallState,
    shortened,
)
from koroku_tui.ui.main.format import DENIED

__all__ = [
    "DENIED",
    "INTERRUPTED",
    "SHOWN_CHARS",
    "SHOWN_LINES",
    "ToolRow",
    "shortened",
]


class ToolRow(CallState, Static, can_focus=True):
    """``✓ read_file {"path": "a.txt"}``; opens on the answer (Enter, space or a click)."""

    class Closed(Message):
        """Escape closed the row: the screen gives the prompt its focus back."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "open_or_more", "Result", id="transcript.tool_result"),
        # Only while open (``check_action``): closed, Escape still cancels the turn.
        Binding("escape", "close", "Close", show=False, id="transcript.tool_close"),
    ]

    def __init__(
        self,
        name: str,
        args: dict[str, Any],
        call_id: str | None = None,
        *,
        label: str | None = None,
    ) -> None:
        Static.__init__(self, classes="block tool-row -pending")
        CallState.__init__(self, name, args, call_id, label=label)
        self._render_row()

    # -- state -----------------------------------------------------------

    def finish(self, failed: bool, answer: str | None = None) -> None:
        """Turn the pending mark into a check, a cross or a denial; keep the answer to open on."""
        super().finish(failed, answer)
        # One restyle, not three.
        self.set_class(False, "-pending", update=False)
        self.set_class(failed and not self.denied, "-failed", update=False)
        self.set_class(self.denied, "-denied")

    def interrupt(self) -> None:
        """Say the call never answered: Koroku stopped while it ran."""
        super().interrupt()
        self.set_class(False, "-pending")
        self.set_class(True, "-interrupted")

    def _render_row(self) -> None:
        self.update(self.row_text())

    # -- opening ---------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close":
            return self.opened
        if action == "open_or_more":
            return bool(self.answer)
        return True

    def action_open_or_more(self) -> None:
        """Closed: open on the shortened answer; shortened: show it whole; whole: close."""
        self.open_or_more()
        self.set_class(self.opened, "-opened")

    def action_close(self) -> None:
        self.close()
        self.set_class(False, "-opened")
        self.post_message(self.Closed())

    def on_click(self) -> None:
        if self.answer:
            self.action_open_or_more()
