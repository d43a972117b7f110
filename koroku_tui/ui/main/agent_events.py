"""The App's handlers for the agent's hook messages: they forward to the widgets.

Kept apart from ``KorokuApp`` so the app file holds start-up, sending and the
key actions, and this one holds how a running turn shows up on screen.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TypeVar

from textual.app import App
from textual.message import Message
from textual.notifications import SeverityLevel

from koroku_tui.ui.main import messages as m
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.session_view import SessionView
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.transcript import Transcript
from koroku_tui.ui.safe_text import sanitize

__all__ = ["AgentEventsApp"]

M = TypeVar("M", bound=Message)
Handler = Callable[["AgentEventsApp", M], Awaitable[None] | None]


def _while_shown(handler: Handler[M]) -> Callable[[AgentEventsApp, M], Awaitable[None]]:
    """Skip a message that arrives once the main screen is gone.

    A turn cancelled at quit (or one that ended just before) still has
    messages queued; by the time they are handled the widgets are unmounted,
    and touching them would put a traceback in front of the user.
    """

    @functools.wraps(handler)
    async def guarded(app: AgentEventsApp, message: M) -> None:
        if not app.main_shown:
            return
        result = handler(app, message)
        if result is not None:
            await result

    return guarded


class AgentEventsApp(App[None]):
    """Base of ``KorokuApp``: one handler per message of ``ui.main.messages``."""

    _transcript: Transcript | None = None
    view: SessionView | None = None

    @property
    def main_shown(self) -> bool:
        """True while the main screen's widgets are mounted (False while closing)."""
        if self._transcript is None:
            found = self.query(Transcript)
            self._transcript = found.first() if found else None
        return self._transcript is not None and self._transcript.is_attached

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Notify with markup OFF by default.

        Messages quote the server, file paths and exceptions: text like
        ``[/]`` must show as typed, never style the toast or crash its render.
        """
        super().notify(
            sanitize(message), title=title, severity=severity, timeout=timeout, markup=markup
        )

    @_while_shown
    async def on_agent_text_delta(self, message: m.AgentTextDelta) -> None:
        await self.query_one(Transcript).add_text(message.text)

    @_while_shown
    async def on_agent_thought_delta(self, message: m.AgentThoughtDelta) -> None:
        await self.query_one(Transcript).add_thought(message.text)

    @_while_shown
    async def on_agent_model_response(self, message: m.AgentModelResponse) -> None:
        transcript = self.query_one(Transcript)
        await transcript.end_step()
        cut = message.response.cut
        if cut is not None:
            # Under the answer, in the transcript: a toast would vanish and leave
            # a cut answer looking whole.
            await transcript.add_cut_notice(cut.message)

    @_while_shown
    async def on_agent_tool_call(self, message: m.AgentToolCall) -> None:
        started = message.started
        await self.query_one(Transcript).tool_started(started.name, started.args, started.call_id)
        self.query_one(ToolSidebar).add_call(started.name, started.args, started.call_id)

    @_while_shown
    def on_agent_tool_result(self, message: m.AgentToolResult) -> None:
        call, failed = message.finished.call, message.finished.result.is_error
        self.query_one(Transcript).tool_finished(call.name or "", call.id, failed)
        self.query_one(ToolSidebar).finish_call(call.name or "", call.id, failed)

    @_while_shown
    def on_agent_usage(self, message: m.AgentUsage) -> None:
        self.query_one(ContextGauge).show(message.budget)

    @_while_shown
    def on_agent_compaction_started(self, message: m.AgentCompactionStarted) -> None:
        self.notify("Summarising older turns…", title="Compaction")

    @_while_shown
    async def on_agent_compaction_finished(self, message: m.AgentCompactionFinished) -> None:
        await self.query_one(Transcript).add_compaction(message.finished.event.summary)
        self.query_one(ContextGauge).show(message.finished.budget)
        self.notify("Older turns summarised.", title="Compaction")
        if message.finished.warning:
            self.notify(sanitize(message.finished.warning), severity="warning")

    @_while_shown
    def on_agent_compaction_failed(self, message: m.AgentCompactionFailed) -> None:
        self.notify(sanitize(message.failed.message), title="Compaction", severity="error")

    @_while_shown
    async def on_agent_error(self, message: m.AgentError) -> None:
        await self.query_one(Transcript).add_error(message.notice.message)

    @_while_shown
    def on_agent_retry(self, message: m.AgentRetry) -> None:
        n = message.notice
        self.notify(
            sanitize(f"{n.reason}; retrying in {n.delay:.0f} s ({n.attempt}/{n.max_attempts})."),
            severity="warning",
        )

    @_while_shown
    async def on_agent_history_synced(self, message: m.AgentHistorySynced) -> None:
        view = self.view
        if view is not None:
            await view.show_synced(message.synced.messages)

    @_while_shown
    async def on_turn_finished(self, message: m.TurnFinished) -> None:
        self.remove_class("-running")
        transcript = self.query_one(Transcript)
        transcript.sent = None
        await transcript.end_step()
        if message.cancelled:
            await transcript.add_notice("Cancelled; what arrived so far is kept.")
