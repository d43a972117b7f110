"""The transcript row of one tool call, which opens in place on what the tool answered.

Closed it is one line: a mark (pending, done, failed, denied, interrupted),
the tool, its arguments and, when it did not run to the end, why: the first
line of the error, "denied by you" (in the dialog), "denied by your rules"
(the approval rules), or "interrupted". Enter, space or a
click opens it on the answer, shortened to ``SHOWN_LINES`` lines and
``SHOWN_CHARS`` characters with a line saying how much is left; Enter again
shows it whole, once more closes it. Escape closes it and gives the prompt
its focus back. Subclasses (``recall_row.SearchRow``) change the line and
how the answer is drawn, not how the row opens.

The answer is the tool's (untrusted): it is drawn through ``literal``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static

from koroku_tui.agent.tools.answer_words import for_user
from koroku_tui.agent.tools.denials import denied_by
from koroku_tui.text.safety import escape_hidden
from koroku_tui.ui.main.format import DENIED, args_short, status_mark
from koroku_tui.ui.safe_text import literal

__all__ = [
    "DENIED",
    "INTERRUPTED",
    "SHOWN_CHARS",
    "SHOWN_LINES",
    "ToolRow",
    "shortened",
]

SHOWN_LINES = 30
"""Lines of an answer an opened row shows before "… N more lines"."""

SHOWN_CHARS = 3_000
"""Characters of an answer an opened row shows before the rest is offered."""

INTERRUPTED = "↯"
"""The mark of a call Koroku stopped before it answered (a crash, a kill)."""

_REASON_WIDTH = 100


def shortened(answer: str) -> tuple[str, str | None]:
    """The start of ``answer`` an opened row shows, and what is left ("N more lines"), if any."""
    shown = "\n".join(answer.split("\n")[:SHOWN_LINES])[:SHOWN_CHARS]
    rest = answer[len(shown) :]
    if not rest.strip():
        return answer, None
    if rest.startswith("\n"):  # cut between two lines: count those left (a last \n ends one)
        left = rest.strip("\n").count("\n") + 1
        return shown, f"{left:,} more line{'s' if left != 1 else ''}"
    return shown, f"{len(rest):,} more characters"


def _first_line(text: str) -> str:
    flat = " ".join(text.strip().split("\n", 1)[0].split())
    return flat if len(flat) <= _REASON_WIDTH else flat[: _REASON_WIDTH - 1] + "…"


class ToolRow(Static, can_focus=True):
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
        super().__init__(classes="block tool-row -pending")
        self.tool_name = name
        """The name the model called (what a result is matched by)."""
        self.label = label or name
        """What the row calls the tool (``format.tool_label``: ``time › get_current_time``)."""
        self.args = args
        self.call_id = call_id
        self.done = False
        self.failed = False
        self.denied = False
        """The user said no, in the approval dialog or by a rule (a failure to the model,
        not to the user)."""
        self.denied_by: str | None = None
        """Who said no, as the row says it ("denied by you", "denied by your rules")."""
        self.interrupted = False
        """Koroku stopped (crashed, was killed) before the call answered."""
        self.answer: str | None = None
        """The tool's output or its error, once it finished, in words for the user
        (``answer_words.for_user``: without the sentences that speak to the model)."""
        self.opened = False
        self.whole = False
        """Opened past the shortened answer."""
        self._render_row()

    # -- state -----------------------------------------------------------

    def finish(self, failed: bool, answer: str | None = None) -> None:
        """Turn the pending mark into a check, a cross or a denial; keep the answer to open on."""
        self.done, self.failed = True, failed
        self.answer = None if answer is None else for_user(answer)  # not what the model is told
        self.denied_by = denied_by(answer) if failed else None
        self.denied = self.denied_by is not None
        # One restyle, not three: a step of a thousand calls finishes a thousand rows.
        self.set_class(False, "-pending", update=False)
        self.set_class(failed and not self.denied, "-failed", update=False)
        self.set_class(self.denied, "-denied")
        self._render_row()

    def interrupt(self) -> None:
        """Say the call never answered: Koroku stopped while it ran."""
        self.done, self.interrupted = True, True
        self.set_class(False, "-pending")
        self.set_class(True, "-interrupted")
        self._render_row()

    # -- drawing ---------------------------------------------------------

    def _mark(self) -> str:
        if self.interrupted:
            return INTERRUPTED
        return status_mark(self.done, self.failed, self.denied)

    def _summary(self) -> Text:
        """What follows the mark and the tool's name on the row's line."""
        return literal(args_short(self.args, 70), style="dim")

    def _reason(self) -> str | None:
        """Why the call did not run to the end, in a few words (``None``: it did)."""
        if self.interrupted:
            return "interrupted: Koroku stopped before it answered"
        if self.denied_by is not None:
            return self.denied_by
        if self.failed and self.answer:
            return _first_line(self.answer)
        return None

    def _body(self, answer: str) -> Text:
        """The answer as the opened row draws it."""
        return literal(answer)

    def _render_row(self) -> None:
        text = literal(f"{self._mark()} {escape_hidden(self.label)}")
        summary = self._summary()
        if summary.plain:
            text.append(" ")
            text.append(summary)
        reason = self._reason()
        if reason is not None:
            text.append(literal(f" — {reason}", style="bold"))
        if self.opened and self.answer:
            shown, left = (self.answer, None) if self.whole else shortened(self.answer)
            text.append("\n")
            text.append(self._body(shown))
            if left is not None:
                text.append(literal(f"\n… {left}: Enter shows all", style="dim italic"))
        self.update(text)

    # -- opening ---------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close":
            return self.opened
        if action == "open_or_more":
            return bool(self.answer)
        return True

    def action_open_or_more(self) -> None:
        """Closed: open on the shortened answer; shortened: show it whole; whole: close."""
        if not self.opened:
            self.opened, self.whole = True, False
        elif not self.whole and self.answer and shortened(self.answer)[1] is not None:
            self.whole = True
        else:
            self.opened = self.whole = False
        self.set_class(self.opened, "-opened")
        self._render_row()

    def action_close(self) -> None:
        if self.opened:
            self.opened = self.whole = False
            self.set_class(False, "-opened")
            self._render_row()
        self.post_message(self.Closed())

    def on_click(self) -> None:
        if self.answer:
            self.action_open_or_more()
