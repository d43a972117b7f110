"""The status line above the prompt while a turn runs: what it does, for how long, how to stop.

E.g. ``● running read_file · 3 s · esc to cancel``, or while a request waits
to be sent again ``● retrying in 4 s (2/4): rate limited · 9 s · esc to cancel``.
Until the first token a turn otherwise changes nothing on screen; this line
says it is alive. It is driven by the agent's hook messages
(``ui.main.messages``): each says what the turn does next. The seconds are
redrawn once a second while it shows, and the timer stops with the turn.
"""

from __future__ import annotations

import math
import time
from typing import Any

from textual.timer import Timer
from textual.widgets import Static

from koroku_tui.agent.errors import retry_words
from koroku_tui.agent.tools.spec import ToolLookup, ToolSpec
from koroku_tui.ui.main import messages as m
from koroku_tui.ui.main.format import tool_label
from koroku_tui.ui.safe_text import sanitize

__all__ = ["CANCEL_BINDING", "STARTING", "WAITING", "TurnStatus", "clock", "doing_after"]

CANCEL_BINDING = "main.cancel"
"""The binding id of the key that cancels a turn, named on the line as the keymap sets it."""

clock = time.monotonic
"""The status line's clock (a snapshot test pins it, so the seconds it shows are fixed)."""

WAITING = "waiting for Gemini"
"""What a turn does between a request sent and its first chunk."""
STARTING = "starting Koroku"
"""What a message sent right after launch waits for: the agent loading, reading its context."""


def doing_after(message: m.AgentMessage, tools: ToolLookup = ToolSpec.unregistered) -> str | None:
    """What the turn does once ``message`` arrived; ``None``: no change (usage, errors).

    A tool is named as its row names it (``tools`` gives its spec): ``running time ›
    get_current_time`` for an MCP server's.
    """
    if isinstance(message, m.AgentThoughtDelta):
        return "thinking"
    if isinstance(message, m.AgentTextDelta):
        return "answering"
    if isinstance(message, m.AgentToolCall):
        return f"running {sanitize(tool_label(tools(message.started.name)))}"
    if isinstance(message, m.AgentCompactionStarted):
        return "summarising older turns"
    if isinstance(message, m.AgentSessionBusy):
        return WAITING if message.busy.free else "waiting for another window's turn"
    if isinstance(
        message,
        m.AgentToolResult
        | m.AgentModelResponse
        | m.AgentCompactionFinished
        | m.AgentCompactionFailed,
    ):
        return WAITING  # the next request follows (or the turn ends, hiding the line)
    return None


class TurnStatus(Static):
    """One line, shown only while a turn (or a compaction) runs."""

    DEFAULT_CSS = """
    TurnStatus {
        display: none;
        height: 1;
        padding: 0 1;
        color: $text-accent;
    }
    TurnStatus.-shown {
        display: block;
    }
    """

    def __init__(self, *, tools: ToolLookup = ToolSpec.unregistered, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)
        self.tools = tools
        """Each call's spec by the tool's name: what the line calls the tool."""
        self._started: float | None = None
        self._doing = WAITING
        self._retry_at: float | None = None
        self._retry_words = ""
        self._ticker: Timer | None = None
        self._cancel_key = "esc"
        self._asked: str | None = None
        """While the approval dialog is open: what the turn did before it asked."""
        self._line = ""
        """The line shown now."""
        self.begun = 0
        """Turns (and compactions) the line has shown: an ``end`` put off for one (see
        ``AgentEventsScreen``) is not for a newer one."""

    @property
    def shown(self) -> bool:
        """True while a turn runs (the line is on screen)."""
        return self._started is not None

    def begin(self, doing: str = WAITING) -> None:
        """A turn started: show the line, its clock at 0 s."""
        self.begun += 1
        self._started = clock()
        self._doing, self._retry_at, self._asked = doing, None, None
        self._cancel_key = self._key_of(CANCEL_BINDING) or "esc"
        self.add_class("-shown")
        if self._ticker is None:
            self._ticker = self.set_interval(1.0, self._redraw)
        else:
            self._ticker.resume()
        self._redraw()

    def now(self, doing: str) -> None:
        """Say the turn now does ``doing`` (nothing when no turn shows)."""
        if self.shown:
            self._doing, self._retry_at = doing, None
            self._redraw()

    def follow(self, message: m.AgentMessage) -> None:
        """Say what the turn does after ``message`` (nothing when no turn shows)."""
        if not self.shown:
            return
        if isinstance(message, m.AgentRetry):
            notice = message.notice
            self._retry_at = clock() + notice.delay
            # Why, too: this line is where a retry is told (no toast besides it).
            why = sanitize(retry_words(notice.kind, notice.reason))
            self._retry_words = f" ({notice.attempt}/{notice.max_attempts}): {why}"
        elif (doing := doing_after(message, self.tools)) is not None:
            self._doing, self._retry_at = doing, None
        else:
            return
        self._redraw()

    def asking(self) -> None:
        """The turn waits on the user's answer (the approval dialog) until ``answered``."""
        if self.shown and self._asked is None:
            self._asked = self._doing
            self._doing = "waiting for your answer"
            self._redraw()

    def answered(self) -> None:
        """The dialog closed: back to what the turn was doing (running the tool, mostly)."""
        if self._asked is not None:
            self._doing, self._asked = self._asked, None
            self._redraw()

    def end(self) -> None:
        """The turn ended (done, failed or cancelled): hide the line, stop the clock."""
        self._started = self._retry_at = self._asked = None
        self.remove_class("-shown")
        if self._ticker is not None:
            self._ticker.pause()
        self._line = ""
        self.update("")

    def _redraw(self) -> None:
        if self._started is None:
            return
        now = clock()
        doing = self._doing
        if self._retry_at is not None:
            left = math.ceil(self._retry_at - now)
            doing = f"retrying in {left} s{self._retry_words}" if left > 0 else WAITING
        elapsed = int(now - self._started)
        # Under the dialog, its own keys answer (escape there denies the call).
        cancel = "" if self._asked is not None else f" · {self._cancel_key} to cancel"
        line = f"● {doing} · {elapsed} s{cancel}"
        if line != self._line:  # drawn again only when it says something new
            self._line = line
            # One line the screen's width, whatever it says: no layout (it
            # redoes the whole screen, ~5-15 ms, in a frame the keys wait on).
            self.update(line, layout=False)

    def _key_of(self, binding_id: str) -> str | None:
        # The key as the footer shows it: keymap.toml may have moved it.
        for active in self.screen.active_bindings.values():
            if active.binding.id == binding_id:
                return self.app.get_key_display(active.binding)
        return None
