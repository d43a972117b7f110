"""``MainScreen``: the conversation, its keys, and the turns the user runs from it.

Layout: header (session title, model), a banner for start-up problems, the
transcript with the tool sidebar on its right, the context gauge, the prompt
and the footer. The agent loop runs as one exclusive worker; its hooks post
messages (``ui.main.bridge``) to this screen, handled in ``agent_events``.

The bindings are the screen's: while the history screen or a dialog is on
top, none of them acts. The App holds what outlives a screen: the store, the
agent, start-up and shutdown.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Iterable
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import events, on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from koroku_tui.agent import AgentError, NoCompactorError
from koroku_tui.store import StoreError
from koroku_tui.ui.history.messages import OpenSession
from koroku_tui.ui.key_bar import KeyBar
from koroku_tui.ui.main import messages as m
from koroku_tui.ui.main.agent_events import AgentEventsScreen
from koroku_tui.ui.main.branching import TurnActions
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.queue import MessageQueue, QueuedMessages
from koroku_tui.ui.main.session_view import Page, SessionView, screenful
from koroku_tui.ui.main.sidebar import NARROW, ToolSidebar
from koroku_tui.ui.main.tool_row import ToolRow
from koroku_tui.ui.main.transcript import Transcript
from koroku_tui.ui.main.turn_status import STARTING, WAITING, TurnStatus
from koroku_tui.ui.main.type_ahead import paste_into_prompt, type_into_prompt
from koroku_tui.ui.safe_text import literal, sanitize
from koroku_tui.ui.title_bar import TitleBar

if TYPE_CHECKING:
    from koroku_tui.ui.app import KorokuApp

__all__ = ["MainScreen"]

logger = logging.getLogger(__name__)

# Lines that are not the transcript: header, gauge, prompt (3 at least), footer.
_CHROME_LINES = 6

HIT_MARK_SECONDS = 5.0
"""How long an opened search hit stays marked in the transcript (sending, or a key
the screen sees, ends it sooner)."""

DOUBLE_ESCAPE = 0.8
"""Seconds within which a second Escape, no turn running, opens the rewind list."""


class MainScreen(AgentEventsScreen):
    """The conversation; built by the App with the session's newest page, read before it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # First: the footer shows bindings in this order and cuts at the right
        # edge; at 80 columns the keys after ctrl+g do not fit.
        Binding("escape", "cancel_turn", "Cancel", id="main.cancel"),
        # Shown only while a message is queued (``check_action``).
        Binding("ctrl+n", "unqueue", "Unqueue", id="main.unqueue"),
        Binding("ctrl+l", "new_session", "New session", id="main.new_session", priority=True),
        Binding("ctrl+o", "compact", "Compact", id="main.compact", priority=True),
        Binding("ctrl+r", "history", "History", id="main.history", priority=True),
        Binding("ctrl+t", "toggle_sidebar", "Tools", id="main.toggle_sidebar", priority=True),
        Binding("ctrl+b", "older", "Older", id="main.older", priority=True),
        Binding("ctrl+g", "rewind", "Rewind", id="main.rewind", priority=True),
    ]

    def __init__(self, first_page: Page | None) -> None:
        super().__init__()
        self._first_page = first_page
        self._shown_first = 0
        self._hit: Widget | None = None
        """The block of the search hit the session was opened at, while marked."""
        self._hit_timer: Timer | None = None
        self._turn: Worker[None] | None = None
        self.turn_task: asyncio.Task[Any] | None = None
        self._job_began = True
        """False from a turn's (or compaction's) start until its coroutine runs (see Escape)."""
        self._cancel_at_start = False
        """Escape came before the job's coroutine ran: it stops as soon as it runs."""
        """The running turn's task, for a stop signal's cancel message."""
        self._escaped_at: float | None = None
        """When Escape was pressed with no turn running: the first of a double Escape."""
        self._turn_actions = TurnActions(self)
        self.queue = MessageQueue(self)
        """Messages typed while a turn runs, sent when it ends."""

    @property
    def koroku(self) -> KorokuApp:
        """The App, typed: it holds the store, the agent and start-up's state."""
        return cast("KorokuApp", self.app)

    @property
    def running(self) -> bool:
        """True while a turn (or a compaction, or a session switch) is in progress."""
        return self._turn is not None and not self._turn.is_finished

    # -- start-up --------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The first frame holds what fits on the screen (so it needs no
        # scrolling to show the newest message); the rest of the page is
        # mounted right after, above, while the view stays at the bottom.
        page, first = self._first_page, []
        if page is not None:
            width, height = self.app.size.width, self.app.size.height - _CHROME_LINES
            self._shown_first = screenful(page.events, width, height)
            first = page.blocks(start=len(page.events) - self._shown_first)
        narrow = self.app.size.width < NARROW
        self.set_class(narrow, "-narrow")
        yield TitleBar()
        yield Static("", id="banner")
        with Horizontal(id="main"):
            yield Transcript(*first, id="transcript")
            yield ToolSidebar(id="sidebar", classes="-hidden" if narrow else None)
        yield ContextGauge(id="gauge")
        yield TurnStatus(id="turn-status")
        yield QueuedMessages(id="queued")
        yield Prompt(id="prompt", placeholder="Message Koroku (Enter sends, ctrl+j new line)")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(Prompt).focus()
        app = self.koroku
        if app.problem:
            self.show_problem(app.problem)
        if app.store is not None and self._first_page is not None:
            self.view = SessionView(
                app.store,
                self.query_one(Transcript),
                self.query_one(ToolSidebar),
                running=lambda: self.running,
            )
            self.view.adopt(self._first_page)
            app.title = sanitize(self._first_page.info.title or "New session")
        store = app.store
        self.queue.restore_unsent(app.settings.home, store.session_id if store else None)
        # Reading the rest of the page and the agent's context waits for the
        # first frame: the conversation shows before that work starts.
        self.call_after_refresh(self._start)

    @work(group="startup", exit_on_error=False)
    async def _start(self) -> None:
        app = self.koroku
        try:
            if self.view is not None and self._first_page is not None:
                await self.view.complete(self._first_page, self._shown_first)
            if app.store is not None:
                await app.start_agent(app.store)
                if app.agent is not None and self.view is not None:
                    await self.view.show_stored_since_page()
        except StoreError as exc:
            self.app.notify(str(exc), severity="error")
        except Exception:
            logger.exception("start-up failed")
            message = "Something went wrong while starting; details are in koroku.log."
            if app.agent is None:
                self.show_problem(message)
            else:
                self.app.notify(message, severity="error")
        finally:
            app.ready.set()
        self._fill_sidebar()

    @work(group="sidebar", exclusive=True, exit_on_error=False)
    async def _fill_sidebar(self) -> None:
        """Every tool call of the session in the sidebar; after start-up, never in its way."""
        if self.view is None:
            return
        try:
            await self.view.show_earlier_calls()
        except StoreError as exc:
            self.app.notify(str(exc), severity="error")

    def show_problem(self, message: str) -> None:
        """Say why Koroku cannot answer (no key, no database) in the banner."""
        self.koroku.problem = message
        banner = self.query_one("#banner", Static)
        banner.update(literal(message))
        banner.add_class("-shown")

    async def show_session(self, at: int | None = None) -> Widget | None:
        """After a switch, a clear or a delete: the new current session, and its gauge.

        ``at``: a row to open the session at (a search hit) instead of its
        end; its first block is returned, to be scrolled to.
        """
        if self.view is None:
            return None
        hit: Widget | None = None
        if at is None:
            info = await self.view.show_current()
        else:
            info, hit = await self.view.show_at(at)
        self.app.title = sanitize(info.title or "New session")
        self._fill_sidebar()
        agent = self.koroku.agent
        if agent is not None:
            try:
                await agent.refresh()  # the gauge must describe this session
                await self.view.show_stored_since_page()
            except AgentError as exc:
                self.app.notify(exc.user_message, severity="error")
            except StoreError as exc:
                self.app.notify(str(exc), severity="error")
            self.query_one(ContextGauge).show(agent.budget)
        return hit

    def on_tool_row_closed(self, message: ToolRow.Closed) -> None:
        """Escape closed a tool's answer (a search's hits...): back to typing."""
        self.query_one(Prompt).focus()

    def _mark_hit(self, block: Widget) -> None:
        """Mark the opened search hit so the eye finds it, for a moment."""
        self._unmark_hit()
        self._hit = block
        block.add_class("-hit")
        self._hit_timer = self.set_timer(HIT_MARK_SECONDS, self._unmark_hit)

    def _unmark_hit(self) -> None:
        if self._hit_timer is not None:
            self._hit_timer.stop()
        hit, self._hit, self._hit_timer = self._hit, None, None
        if hit is not None:
            hit.remove_class("-hit")

    def on_key(self, event: events.Key) -> None:
        """A letter typed on a fold, the transcript or the sidebar: into the prompt."""
        self._unmark_hit()
        if not self.queue.edit_last(event):
            type_into_prompt(self.query_one(Prompt), event)

    def on_paste(self, event: events.Paste) -> None:
        paste_into_prompt(self.query_one(Prompt), event)

    def on_screen_resume(self) -> None:
        """Any dialog closed (history, approval, rewind list, palette): back to typing."""
        self.query_one(Prompt).focus()

    # -- sending ---------------------------------------------------------

    async def on_prompt_submitted(self, event: Prompt.Submitted) -> None:
        self._unmark_hit()
        app = self.koroku
        if app.agent is None and (app.ready.is_set() or self.view is None):
            self.app.notify(app.problem or "Koroku is still starting.", severity="error")
            return
        event.prompt.clear()
        if self.running:
            self.queue.hold(event.text)  # sent when the turn ends (``ui.main.queue``)
            return
        await self.send(event.text)

    async def send(self, text: str) -> None:
        """Show ``text`` as the user's message and start its turn."""
        await self.query_one(Transcript).add_user(text)
        self._job_began = False
        self._turn = self._run_turn(text)
        self.query_one(TurnStatus).begin(WAITING if self.koroku.ready.is_set() else STARTING)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A turn or another job ended: the queue goes out, or back to the prompt."""
        if event.worker.group == "agent" and event.worker.is_finished:
            state = event.state
            compaction = event.worker.name == MainScreen._compact_worker.__name__
            await self.queue.job_ended(
                cancelled=state == WorkerState.CANCELLED,
                failed=state == WorkerState.ERROR,
                job="compaction" if compaction else "turn",
            )

    def on_unmount(self) -> None:
        app = self.koroku  # closing: the queue kept for the next start, with its session
        session_id = app.store.session_id if app.store is not None else None
        self.queue.save_unsent(app.settings.home, session_id, str(app.title))

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def _run_turn(self, text: str) -> None:
        app = self.koroku
        self._job_began = True
        self.turn_task = asyncio.current_task()
        if self._cancel_at_start:
            self._cancel_at_start = False
            await self._not_sent(text, "cancelled before it reached the model")
            return
        if not app.ready.is_set():  # sent while the agent still loads or reads its context
            try:
                await app.ready.wait()
            except asyncio.CancelledError:
                await self._not_sent(text, "cancelled before Koroku was ready")
                raise
            self.query_one(TurnStatus).now(WAITING)
        agent = app.agent
        if agent is None:
            await self._not_sent(text, app.problem or "Koroku could not start")
            return
        self.add_class("-running")
        cancelled = told = False
        try:
            reply = await agent.run(text)
            while reply is not None:
                reply = await agent.run(reply)
        except asyncio.CancelledError:
            if agent.message_stored:
                cancelled = True
                raise
            # Cancelled before the message was stored (waiting for the agent
            # or its refresh): it never reached the model, so it goes back
            # to the prompt rather than vanishing (a queued message too).
            told = True
            await self._not_sent(text, "cancelled before it reached the model")
            raise
        except AgentError:
            # Already shown through on_error. A message refused before it was
            # stored (busy in another window, deleted session, full disk)
            # goes back to the prompt (with the queue), to be sent later.
            unsent = None if agent.message_stored else text
            if unsent is not None:
                await self.query_one(Transcript).withdraw_sent()
            self.queue.turn_failed(unsent)
        except Exception:
            # A bug of ours: the history is already safe (the agent stores
            # before it acts); say so plainly, keep the traceback in the log.
            logger.exception("turn failed")
            self.queue.turn_failed()
            self.app.notify(
                "Something went wrong while showing this turn; your messages are saved. "
                "Details are in koroku.log.",
                severity="error",
            )
        finally:
            if not told:  # else ``_not_sent`` did
                self.post_message(m.TurnFinished(cancelled))

    async def _not_sent(self, text: str, reason: str) -> None:
        """A message that never reached the agent: say so, and give the text back."""
        self.queue.turn_failed(unsent=text)  # in the prompt when the turn's worker ends
        if reason.endswith(".") and not reason.endswith(".."):  # one sentence's stop, not "..."
            reason = reason[:-1]
        reason += "; your text is back in the prompt"
        self.post_message(m.TurnFinished(False))  # before any await: nothing can skip it
        transcript = self.query_one(Transcript)
        await transcript.withdraw_sent()  # not stored: not shown as sent either
        await transcript.add_error(f"Not sent: {reason}.")

    def give_back(self, text: str) -> bool:
        """Put ``text`` (unsent or rewound) in the prompt, unless the user typed since."""
        prompt = self.query_one(Prompt)
        if prompt.text:
            return False
        prompt.text = text
        return True

    # -- actions ---------------------------------------------------------

    def system_commands(self) -> Iterable[SystemCommand]:
        """What the palette (ctrl+p) offers here: every action of this screen, not only keys."""
        yield SystemCommand("New session", "Start a fresh conversation", self.action_new_session)
        yield SystemCommand("Compact now", "Summarise older turns", self.action_compact)
        yield SystemCommand("History", "Browse and search past sessions", self.action_history)
        yield SystemCommand(
            "Tool sidebar", "Show or hide the tool calls", self.action_toggle_sidebar
        )
        yield SystemCommand("Cancel turn", "Stop the running turn", self.action_cancel_turn)
        yield SystemCommand(
            "Remove queued message", "The newest message waiting for the turn", self.action_unqueue
        )
        yield SystemCommand("Older messages", "Load earlier messages", self.action_older)
        yield SystemCommand("Rewind…", "Go back to before a message you sent", self.action_rewind)
        yield SystemCommand(
            "Fork…", "Branch this conversation into a new session", self.action_fork
        )

    def action_cancel_turn(self) -> None:
        """Escape cancels the running turn; with none, Escape twice opens the rewind list."""
        if not self.running:
            now, first = time.monotonic(), self._escaped_at
            self._escaped_at = None if first is not None and now - first <= DOUBLE_ESCAPE else now
            if self._escaped_at is None:
                self.action_rewind()
            return
        self._escaped_at = None  # the Escape that cancels never starts a double Escape
        # Only a model turn or a compaction: a session switch cut half way
        # would leave the screen showing one session and the store another.
        cancellable = {MainScreen._run_turn.__name__, MainScreen._compact_worker.__name__}
        turn = self._turn
        if not self._job_began:
            # Its task exists but has not run yet: cancelled now, it would
            # never run at all (no clean-up, the text lost, "running" for
            # ever). It stops itself, with its clean-up, once it runs.
            self._cancel_at_start = True
            return
        if turn is not None and turn.name in cancellable and not turn.is_cancelled:
            self.queue.cancelling()
            turn.cancel()  # once: a second cancel would cut the clean-up of the first

    def action_unqueue(self) -> None:
        """Remove the newest queued message: it is never sent."""
        self.queue.remove_last()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The footer names the unqueue key only while a message waits.
        return bool(self.queue.texts) if action == "unqueue" else True

    def action_rewind(self) -> None:
        """List your messages, newest first: Enter rewinds to before one, ``f`` forks there."""
        self._turn_actions.open("rewind")

    def action_fork(self) -> None:
        """The same list, where Enter forks (its first row: the whole conversation)."""
        self._turn_actions.open("fork")

    def begin(self, job: Coroutine[Any, Any, None], name: str) -> None:
        """Run ``job`` as the screen's exclusive "agent" worker, as a turn runs."""

        async def guarded() -> None:
            try:
                await job
            except Exception:  # a bug of ours: said plainly, the traceback in the log
                logger.exception("%s failed", name)
                self.app.notify(f"The {name} failed; details are in koroku.log.", severity="error")

        self._turn = self.run_worker(
            guarded(), name=name, group="agent", exclusive=True, exit_on_error=False
        )

    def on_resize(self, event: events.Resize) -> None:
        """Crossing ``NARROW``: the sidebar takes the new width's default (hidden if narrow)."""
        narrow = event.size.width < NARROW
        if narrow != self.has_class("-narrow"):
            self.set_class(narrow, "-narrow")
            self.query_one(ToolSidebar).set_class(narrow, "-hidden")

    def action_toggle_sidebar(self) -> None:
        sidebar = self.query_one(ToolSidebar)
        if sidebar.has_focus_within:
            # Hiding the focused table would hand focus to the next focusable
            # widget, the transcript, and scroll it to its top: the prompt
            # takes it first, and the transcript stays where it was.
            self.query_one(Prompt).focus(scroll_visible=False)
        sidebar.toggle_class("-hidden")

    def busy(self) -> bool:
        """True (and said) while starting or while a turn runs: no other action may start."""
        if self.view is None or not self.koroku.ready.is_set():
            self.app.notify(self.koroku.problem or "Koroku is still starting.", severity="error")
            return True
        if self.running:
            self.app.notify("A turn is running: wait for it or press Escape to cancel it.")
            return True
        return False

    def action_new_session(self) -> None:
        if not self.busy():
            self._turn = self._new_session_worker()

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def _new_session_worker(self) -> None:
        app = self.koroku
        assert app.store is not None
        try:
            await app.store.new_session()
        except StoreError as exc:
            self.app.notify(str(exc), severity="error")
            return
        if app.agent is not None:
            app.agent.tool_settings.session_allowed.clear()  # approvals are per session
        await self.show_session()
        self.query_one(Prompt).focus()  # the focused block, if any, went with the old session
        self.app.notify("New session. The previous one stays in the history (ctrl+r).")

    def action_compact(self) -> None:
        if self.koroku.agent is None:
            self.app.notify(self.koroku.problem or "Koroku is still starting.", severity="error")
        elif not self.busy():
            self._job_began = False
            self._turn = self._compact_worker()
            self.query_one(TurnStatus).begin("summarising older turns")

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def _compact_worker(self) -> None:
        self._job_began = True
        if self._cancel_at_start:
            self._cancel_at_start = False
            self.query_one(TurnStatus).end()
            self.app.notify("Compaction cancelled before it began.")
            return
        agent = self.koroku.agent
        assert agent is not None and self.view is not None
        await self.view.back_to_live()  # before the summary is stored: it shows once, at the end
        # The outcome has one notice, from the agent's hooks: finished,
        # failed (or nothing to summarise) or, for an AgentError, on_error's
        # line in the transcript. Only "no compactor" is reported before those.
        try:
            await agent.compact()
        except NoCompactorError as exc:
            self.app.notify(exc.user_message, severity="error")
        except AgentError:
            pass
        except asyncio.CancelledError:  # Escape: the summary is stored only once it is whole
            self.app.notify("Compaction cancelled; nothing was changed.")
            raise
        finally:
            self.query_one(TurnStatus).end()

    @on(m.AgentCompactionFailed)
    def _compaction_failed(self, message: m.AgentCompactionFailed) -> None:
        # ``_compact_worker`` ends normally after a failed compaction (the
        # hook said why): the queue must still see a failed job, and give
        # the messages back rather than send them. The hook's message comes
        # before the worker's end in this screen's queue. A compaction inside
        # a turn that fails does not stop the turn: not counted there.
        turn = self._turn
        compacting = turn is not None and turn.name == MainScreen._compact_worker.__name__
        if compacting and not message.failed.nothing_to_do:
            self.queue.turn_failed()

    def action_older(self) -> None:
        """Up to the first message shown; there, the page above it."""
        transcript = self.query_one(Transcript)
        if self.view is None:
            return
        if transcript.scroll_y > 0:
            transcript.scroll_home(animate=False, immediate=True)  # reaching the top loads it
        else:
            self._older_worker()

    def on_transcript_reached_top(self) -> None:
        if self.view is not None:
            self._older_worker(quiet=True)  # scrolling up past the start is no news

    def on_transcript_reached_bottom(self) -> None:
        if self.view is not None:
            self._newer_worker()

    # Not exclusive: a page load cut half way would leave pages half mounted.
    @work(group="pages", exit_on_error=False)
    async def _older_worker(self, quiet: bool = False) -> None:
        assert self.view is not None
        await self.koroku.ready.wait()  # start-up is still mounting the first page above
        try:
            older = await self.view.show_older()
        except StoreError as exc:
            self.app.notify(str(exc), severity="error")
            return
        if older == "start" and not quiet:
            self.app.notify("This is the start of the session.")
        elif older == "wait":
            self.app.notify("Older messages load once this turn ends.")

    @work(group="pages", exit_on_error=False)
    async def _newer_worker(self) -> None:
        assert self.view is not None
        try:
            await self.view.show_newer()
        except StoreError as exc:
            self.app.notify(str(exc), severity="error")

    def action_history(self) -> None:
        # Deleting or switching sessions under a running turn (or start-up)
        # would send its writes, or its first page, to another session.
        store = self.koroku.store
        if self.busy() or store is None:
            return
        # Imported on first use, off the first frame (see ui.app.SCREENS_SHOWN_LATER).
        from koroku_tui.ui.history.screen import HistoryScreen

        self.app.push_screen(HistoryScreen(store, store.session_id), self._history_closed)

    def _history_closed(self, result: OpenSession | None) -> None:
        if result is not None and not self.busy():
            self._turn = self._switch_worker(result.session_id, result.prompt, result.message_id)

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def _switch_worker(
        self, session_id: int, prompt: str | None = None, at: int | None = None
    ) -> None:
        app = self.koroku
        assert app.store is not None
        try:
            await app.store.switch_session(session_id)
        except StoreError as exc:
            self.app.notify(str(exc), severity="error")
            return
        if app.agent is not None:
            app.agent.tool_settings.session_allowed.clear()
        hit = await self.show_session(at)
        if hit is not None:
            transcript = self.query_one(Transcript)
            await transcript.laid_out()  # the block's place is known once laid out
            transcript.bring_into_view(hit)
            self._mark_hit(hit)
        if prompt and self.give_back(prompt):  # a fork at a message: to edit and send
            self.query_one(Prompt).move_cursor(self.query_one(Prompt).document.end)
