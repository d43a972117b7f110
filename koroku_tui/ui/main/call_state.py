"""What a tool call's transcript row shows, apart from the widget that draws it.

A call is drawn as its own widget (``tool_row.ToolRow``) or, in a step of
many calls, as one entry of a ``call_list.CallList`` that draws only the
lines in view. Both keep the call's state here and draw the same text: one
line (a mark, the tool, its arguments and, when it did not run to the end,
why), and once opened the answer, shortened to ``SHOWN_LINES`` lines and
``SHOWN_CHARS`` characters with a line saying how much is left.

The answer is the tool's (untrusted): it is drawn through ``literal``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from rich.text import Text

from koroku_tui.agent.tools.answer_words import for_user
from koroku_tui.agent.tools.denials import denied_by
from koroku_tui.text.safety import escape_hidden
from koroku_tui.ui.main.format import args_short, status_mark
from koroku_tui.ui.safe_text import literal, sanitize

__all__ = ["INTERRUPTED", "SHOWN_CHARS", "SHOWN_LINES", "CallState", "shortened"]

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


# A step of a thousand calls measures each call's line (``line``): its tool, its
# mark and why it stopped are few and shared, each made safe to show once.
@functools.lru_cache(maxsize=256)
def _shown_head(mark: str, label: str) -> str:
    return sanitize(f"{mark} {escape_hidden(label)}")


@functools.lru_cache(maxsize=256)
def _shown_reason(reason: str) -> str:
    return sanitize(f" — {reason}")


def _first_line(text: str) -> str:
    flat = " ".join(text.strip().split("\n", 1)[0].split())
    return flat if len(flat) <= _REASON_WIDTH else flat[: _REASON_WIDTH - 1] + "…"


class CallState:
    """One call's state (pending, done, failed, denied, interrupted; opened) and its text.

    ``_render_row`` is called after each change: the widget that draws the
    call redraws it.
    """

    def __init__(
        self,
        name: str,
        args: dict[str, Any],
        call_id: str | None = None,
        *,
        label: str | None = None,
    ) -> None:
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
        self._args_line: str | None = None
        """``args_short`` of the arguments (which never change), made once."""
        self._args_shown: str | None = None
        """``_args_line`` as shown (sanitized), made once."""
        self.redraw: Callable[[CallState], None] | None = None
        """Called after each change by the list that draws the call (a ``ToolRow`` draws itself)."""

    def _render_row(self) -> None:
        """Draw the call again: its state changed."""
        if self.redraw is not None:
            self.redraw(self)

    # -- state -----------------------------------------------------------

    def finish(self, failed: bool, answer: str | None = None) -> None:
        """Turn the pending mark into a check, a cross or a denial; keep the answer to open on."""
        self.done, self.failed = True, failed
        self.answer = None if answer is None else for_user(answer)  # not what the model is told
        self.denied_by = denied_by(answer) if failed else None
        self.denied = self.denied_by is not None
        self._render_row()

    def interrupt(self) -> None:
        """Say the call never answered: Koroku stopped while it ran."""
        self.done, self.interrupted = True, True
        self._render_row()

    def open_or_more(self) -> None:
        """Closed: open on the shortened answer; shortened: show it whole; whole: close."""
        if not self.opened:
            self.opened, self.whole = True, False
        elif not self.whole and self.answer and shortened(self.answer)[1] is not None:
            self.whole = True
        else:
            self.opened = self.whole = False
        self._render_row()

    def close(self) -> None:
        """Show the one line again."""
        if self.opened:
            self.opened = self.whole = False
            self._render_row()

    # -- drawing ---------------------------------------------------------

    def _mark(self) -> str:
        if self.interrupted:
            return INTERRUPTED
        return status_mark(self.done, self.failed, self.denied)

    def _summary(self) -> Text:
        """What follows the mark and the tool's name on the row's line."""
        return literal(self._arguments(), style="dim")

    def _summary_plain(self) -> str:
        """``_summary().plain``, made without the Text (a subclass changing one changes both)."""
        if self._args_shown is None:
            self._args_shown = sanitize(self._arguments())
        return self._args_shown

    def _arguments(self) -> str:
        if self._args_line is None:  # a list of a thousand calls asks for each line again
            self._args_line = args_short(self.args, 70)
        return self._args_line

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

    def line(self) -> str:
        """The row's first line as plain text, made without the styled ``Text``.

        What ``row_text`` draws first, at a third of its cost: a list of a
        thousand calls measures each line's height (``call_list.CallList``).
        """
        line = _shown_head(self._mark(), self.label)
        summary = self._summary_plain()
        if summary:
            line += " " + summary
        reason = self._reason()
        if reason is not None:
            line += _shown_reason(reason)
        return line

    def row_text(self) -> Text:
        """The row as drawn: its line, and the answer below it when opened."""
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
        return text
