"""The main screen's handlers for the agent's hook messages: they forward to the widgets.

Kept apart from ``MainScreen`` so its file holds start-up, sending and the
key actions, and this one holds how a running turn shows up on screen. The
messages are posted to the screen itself, so once it is gone (the app
closing) they are never handled. Toasts go through ``self.app.notify``,
whose markup is off by default (a widget's own ``notify`` turns it on).
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, cast

from textual import events, on, work
from textual.css.query import QueryType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widget import Widget

from koroku_tui.agent.errors import ErrorKind
from koroku_tui.agent.tools.denials import is_denial
from koroku_tui.store import SessionManager, StoreError
from koroku_tui.ui.main import busy_line
from koroku_tui.ui.main import messages as m
from koroku_tui.ui.main.bridge import ToolRun, coalesced
from koroku_tui.ui.main.call_list import CallList
from koroku_tui.ui.main.compaction_notice import compaction_done
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.session_view import SessionView
from koroku_tui.ui.main.sidebar import Finished, ToolSidebar
from koroku_tui.ui.main.transcript import Transcript
from koroku_tui.ui.main.turn_status import TurnStatus
from koroku_tui.ui.safe_text import sanitize

if TYPE_CHECKING:
    from koroku_tui.ui.app import KorokuApp
    from koroku_tui.ui.main.mcp_watch import McpWatch
    from koroku_tui.ui.main.prompt import Prompt
    from koroku_tui.ui.main.turn_runner import TurnRunner

__all__ = ["AgentEventsScreen"]

logger = logging.getLogger(__name__)


def _finished(message: m.AgentToolResult) -> tuple[Finished, str | None]:
    """How the call ``message`` answers ended, as its sidebar row shows it, and the answer."""
    call, result = message.finished.call, message.finished.result
    failed, answer = result.is_error, result.error if result.is_error else result.output
    return Finished(call.name or "", call.id, failed, failed and is_denial(answer)), answer


class AgentEventsScreen(Screen[None]):
    """Base of ``MainScreen``: one handler per message of ``ui.main.messages``."""

    view: SessionView | None = None
    turns: TurnRunner
    prompt: Prompt
    mcp_watch: McpWatch
    """The MCP servers' notices and view (set by ``MainScreen``)."""
    _told_interrupted = False
    """The running turn's answer was cut short and its "Interrupted: ..." line shown."""

    async def on_agent_batch(self, batch: m.AgentBatch) -> None:
        """Show what the hooks said since the last batch, as if each came alone, in order.

        Each message goes to its ``on_agent_*`` handler (and ``_turn_progressed``):
        nothing may listen to an agent message with ``@on``, which a batch bypasses.
        """
        for item in coalesced(batch.messages):
            if isinstance(item, ToolRun):
                await self._tool_run(item)
                continue
            self._turn_progressed(item)
            handled = getattr(self, item.handler_name)(item)
            if handled is not None:
                await handled

    async def _tool_run(self, run: ToolRun) -> None:
        """Calls, then their results: the calls' rows are mounted at once.

        The sidebar gets a run's rows and results together: a row whose
        result came in the same batch is added finished (a thousand calls
        are a thousand rows, not a thousand rows changed once each).
        """
        calls = [(c.started.name, c.started.args, c.started.call_id) for c in run.calls]
        transcript = self.query_one(Transcript)
        await transcript.tools_started(calls)
        results = [_finished(result) for result in run.results]
        self.query_one(ToolSidebar).add_calls(calls, (finished for finished, _ in results))
        for finished, answer in results:
            transcript.tool_finished(finished.name, finished.call_id, finished.failed, answer)
        # The status line says what the newest of them says (a call after a
        # result: "running" it): once, not a thousand times.
        if run.newest is not None:
            self._turn_progressed(run.newest)

    def _turn_progressed(self, message: m.AgentMessage) -> None:
        # Every hook message, besides its own handler (``on_agent_batch`` calls
        # both): the status line says what the turn does now (waiting,
        # thinking, running a tool, retrying).
        self.query_one(TurnStatus).follow(message)

    def focus_next(self, selector: str | type[QueryType] = "*") -> Widget | None:
        """Tab onto a step's list of calls lands on its first call, as on its first row."""
        focused = super().focus_next(selector)
        if isinstance(focused, CallList):
            focused.move_to(0)
        return focused

    def focus_previous(self, selector: str | type[QueryType] = "*") -> Widget | None:
        """Shift+tab onto a step's list of calls lands on its last call, as on its last row."""
        focused = super().focus_previous(selector)
        if isinstance(focused, CallList):
            focused.move_to(len(focused.calls) - 1)
        return focused

    def _end_status_line(self, transcript: Transcript) -> None:
        """Hide the status line in the frame after the one showing the answer's last words.

        A long answer's last step is planned in a thread. Hidden at once, the
        line gave its row back in a frame of its own, a whole layout (~20 ms)
        that the last words then waited for (issue 22, item 21).
        """
        status = self.query_one(TurnStatus)
        begun = status.begun

        def end() -> None:
            if status.begun == begun:  # else a newer turn (or compaction) has the line
                status.end()

        async def after_last_words() -> None:
            await transcript.last_words_drawn()
            self.call_after_refresh(end)

        self.run_worker(after_last_words(), group="status-line", exit_on_error=False)

    @on(events.ScreenSuspend)
    def _dialog_opened(self) -> None:
        # Only the approval dialog opens mid-turn on the turn's behalf (the
        # palette can too, but then the turn is not waiting on the user).
        # It is imported when first shown: before that, this is not it.
        approval = sys.modules.get("koroku_tui.ui.main.approval")
        if approval is not None and isinstance(self.app.screen, approval.ApprovalScreen):
            self.query_one(TurnStatus).asking()

    @on(events.ScreenResume)
    def _dialog_closed(self) -> None:
        self.query_one(TurnStatus).answered()

    @work(group="title", exit_on_error=False)
    async def _show_title(self) -> None:
        """The header follows the current session's stored title."""
        store = getattr(self.app, "store", None)
        if not isinstance(store, SessionManager):
            return
        try:
            info = await store.get_session(store.session_id)
        except StoreError:
            logger.warning("could not read the session's title", exc_info=True)
            return
        self.app.title = sanitize(info.title or "New session")

    async def on_agent_text_delta(self, message: m.AgentTextDelta) -> None:
        await self.query_one(Transcript).add_text(message.delta.text)

    async def on_agent_thought_delta(self, message: m.AgentThoughtDelta) -> None:
        await self.query_one(Transcript).add_thought(message.delta.text)

    async def on_agent_reply_streamed(self, message: m.AgentReplyStreamed) -> None:
        """The answer's last words are drawn now, not once the reply is stored (a long
        reply's storing took ~15 ms the end waited for: issue 22, item 21)."""
        await self.query_one(Transcript).end_step()

    async def on_agent_model_response(self, message: m.AgentModelResponse) -> None:
        self.query_one(ContextGauge).reply_counted(message.response.usage)
        transcript = self.query_one(Transcript)
        await transcript.end_step()
        transcript.expect_calls(len(message.response.function_calls))
        cut = message.response.cut
        if cut is not None:
            # Under the answer, in the transcript: a toast would vanish and leave
            # a cut answer looking whole. The same line as a replay draws.
            await transcript.add_cut_notice(cut.message)
            self._told_interrupted = cut.interrupted

    async def on_agent_tool_call(self, message: m.AgentToolCall) -> None:
        # Only in a batch, grouped (``coalesced``): these two are for completeness.
        await self._tool_run(ToolRun(calls=[message], newest=message))

    async def on_agent_tool_result(self, message: m.AgentToolResult) -> None:
        await self._tool_run(ToolRun(results=[message], newest=message))

    def on_agent_usage(self, message: m.AgentUsage) -> None:
        self.query_one(ContextGauge).show(message.budget)
        # The agent reports usage after each message it stores, the user's
        # first among them: by then the store has titled the session from it.
        self._show_title()

    def on_agent_compaction_started(self, message: m.AgentCompactionStarted) -> None:
        """No toast: one notice per compaction, at its outcome.

        The status line (``_turn_progressed``) says "summarising older turns"
        while it runs.
        """

    async def on_agent_compaction_finished(self, message: m.AgentCompactionFinished) -> None:
        finished = message.finished
        await self.query_one(Transcript).add_compaction(finished.event.summary)
        self.query_one(ContextGauge).show(finished.budget)
        notice = compaction_done(finished)
        if finished.warning:
            notice += " " + sanitize(finished.warning)
        severity: SeverityLevel = "warning" if finished.warning else "information"
        self.app.notify(notice, title="Compaction", severity=severity)

    def on_agent_compaction_failed(self, message: m.AgentCompactionFailed) -> None:
        failed = message.failed
        self.turns.compaction_failed(message)  # if it was the job, the job counts as failed
        severity: SeverityLevel = "information" if failed.nothing_to_do else "error"
        self.app.notify(sanitize(failed.message), title="Compaction", severity=severity)

    async def on_agent_error(self, message: m.AgentError) -> None:
        transcript = self.query_one(Transcript)
        if message.notice.kind == ErrorKind.BUSY and busy_line.gave_up(transcript):
            return  # the busy line says it, once (not a sentence per attempt)
        await transcript.add_error(message.notice.message)

    async def on_agent_session_busy(self, message: m.AgentSessionBusy) -> None:
        await busy_line.follow(self.query_one(Transcript), message.busy)

    def on_agent_retry(self, message: m.AgentRetry) -> None:
        if self.query_one(TurnStatus).shown:
            return  # the status line counts down to the retry and says why
        n = message.notice
        self.app.notify(
            sanitize(f"{n.reason}; retrying in {n.delay:.0f} s ({n.attempt}/{n.max_attempts})."),
            severity="warning",
        )

    async def on_agent_history_synced(self, message: m.AgentHistorySynced) -> None:
        view = self.view
        if view is not None:
            await view.show_synced(message.synced.messages)

    def on_agent_mcp_status(self, message: m.AgentMcpStatus) -> None:
        self.mcp_watch.heard(cast("KorokuApp", self.app), message.statuses)

    async def on_instructions_notice(self, message: m.InstructionsNotice) -> None:
        await self.query_one(Transcript).add_notice(message.text)

    async def on_turn_finished(self, message: m.TurnFinished) -> None:
        self.prompt.remove_class("-running")
        self.query_one(ContextGauge).turn_ended()
        transcript = self.query_one(Transcript)
        transcript.sent = None
        await transcript.end_step()
        self._end_status_line(transcript)
        busy_line.gave_up(transcript)  # cancelled while waiting: no longer "retrying…"
        told, self._told_interrupted = self._told_interrupted, False
        if message.cancelled and not told:  # else "Interrupted: cancelled ..." said it
            await transcript.add_notice("Cancelled; what arrived so far is kept.")
        if self.view is not None:
            await self.view.seal_live()
