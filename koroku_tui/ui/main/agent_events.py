"""The App's handlers for the agent's hook messages: they forward to the widgets.

Kept apart from ``KorokuApp`` so the app file holds start-up, sending and the
key actions, and this one holds how a running turn shows up on screen.
"""

from __future__ import annotations

from textual.app import App
from textual.notifications import SeverityLevel

from koroku_tui.ui.main import messages as m
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.transcript import Transcript
from koroku_tui.ui.safe_text import sanitize

__all__ = ["AgentEventsApp"]


class AgentEventsApp(App[None]):
    """Base of ``KorokuApp``: one handler per message of ``ui.main.messages``."""

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

    async def on_agent_text_delta(self, message: m.AgentTextDelta) -> None:
        await self.query_one(Transcript).add_text(message.text)

    async def on_agent_thought_delta(self, message: m.AgentThoughtDelta) -> None:
        await self.query_one(Transcript).add_thought(message.text)

    async def on_agent_model_response(self, message: m.AgentModelResponse) -> None:
        await self.query_one(Transcript).end_step()

    async def on_agent_tool_call(self, message: m.AgentToolCall) -> None:
        started = message.started
        await self.query_one(Transcript).tool_started(started.name, started.args, started.call_id)
        self.query_one(ToolSidebar).add_call(started.name, started.args, started.call_id)

    def on_agent_tool_result(self, message: m.AgentToolResult) -> None:
        call, failed = message.finished.call, message.finished.result.is_error
        self.query_one(Transcript).tool_finished(call.name or "", call.id, failed)
        self.query_one(ToolSidebar).finish_call(call.name or "", call.id, failed)

    def on_agent_usage(self, message: m.AgentUsage) -> None:
        self.query_one(ContextGauge).show(message.budget)

    def on_agent_compaction_started(self, message: m.AgentCompactionStarted) -> None:
        self.notify("Summarising older turns…", title="Compaction")

    async def on_agent_compaction_finished(self, message: m.AgentCompactionFinished) -> None:
        await self.query_one(Transcript).add_compaction(message.finished.event.summary)
        self.query_one(ContextGauge).show(message.finished.budget)
        self.notify("Older turns summarised.", title="Compaction")
        if message.finished.warning:
            self.notify(sanitize(message.finished.warning), severity="warning")

    def on_agent_compaction_failed(self, message: m.AgentCompactionFailed) -> None:
        self.notify(sanitize(message.failed.message), title="Compaction", severity="error")

    async def on_agent_error(self, message: m.AgentError) -> None:
        await self.query_one(Transcript).add_error(message.notice.message)

    def on_agent_retry(self, message: m.AgentRetry) -> None:
        n = message.notice
        self.notify(
            sanitize(f"{n.reason}; retrying in {n.delay:.0f} s ({n.attempt}/{n.max_attempts})."),
            severity="warning",
        )

    async def on_turn_finished(self, message: m.TurnFinished) -> None:
        self.remove_class("-running")
        transcript = self.query_one(Transcript)
        await transcript.end_step()
        if message.cancelled:
            await transcript.add_notice("Cancelled; what arrived so far is kept.")
