"""``MainScreen``: the conversation, its keys, and what each key starts.

Layout: header (session title, model), a banner for start-up problems, the
transcript with the tool sidebar on its right, the context gauge, the prompt
and the footer. The agent loop runs as one exclusive worker; its hooks post
messages (``ui.main.bridge``) to this screen, handled in ``agent_events``.

The screen composes, starts up and maps keys to actions; the jobs behind
them are in helpers that hold the screen: ``TurnRunner`` (``turns``: a
turn, a compaction, Escape, the queue's hand-off), ``SessionJobs``
(``sessions``: new session, switch, reload, pages), ``TurnActions`` (rewind
and fork) and ``MessageQueue`` (``queue``). ``running``, ``send``,
``begin`` and ``show_session`` stay here: the App and the helpers call them.

The bindings are the screen's: while the history screen or a dialog is on
top, none of them acts. The App holds what outlives a screen: the store, the
agent, start-up and shutdown.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import events, work
from textual.actions import SkipAction
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker

from koroku_tui.store import StoreError
from koroku_tui.ui.key_bar import KeyBar
from koroku_tui.ui.main.agent_events import AgentEventsScreen
from koroku_tui.ui.main.branching import TurnActions
from koroku_tui.ui.main.commands import palette_commands
from koroku_tui.ui.main.copying import copy_last_answer, copy_selection
from koroku_tui.ui.main.file_picker import FilePicker
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.mcp_watch import McpWatch
from koroku_tui.ui.main.project_trust import ask_about_trust, watch_instruction_files
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.queue import MessageQueue, QueuedMessages
from koroku_tui.ui.main.recall_progress import RecallProgress, start_recall
from koroku_tui.ui.main.session_jobs import SessionJobs
from koroku_tui.ui.main.session_view import Page, SessionView, screenful
from koroku_tui.ui.main.sidebar import NARROW, ToolSidebar
from koroku_tui.ui.main.sidebar_peek import SidebarPeek
from koroku_tui.ui.main.slash import SlashCommands, as_typed
from koroku_tui.ui.main.tool_row import ToolRow
from koroku_tui.ui.main.transcript import Transcript
from koroku_tui.ui.main.turn_runner import TurnRunner
from koroku_tui.ui.main.turn_status import TurnStatus
from koroku_tui.ui.safe_text import literal, sanitize
from koroku_tui.ui.title_bar import TitleBar

if TYPE_CHECKING:
    from koroku_tui.ui.app import KorokuApp

__all__ = ["MainScreen", "read_only_banner"]

logger = logging.getLogger(__name__)

# Lines that are not the transcript: header, gauge, prompt (3 at least), footer.
_CHROME_LINES = 6

DOUBLE_ESCAPE = 0.8
"""Seconds within which a second Escape, no turn running, opens the rewind list."""


def read_only_banner(home: Path) -> str:
    """The banner of an app on a home it cannot write to (``SessionManager(read_only=True)``)."""
    return (
        f"Koroku's home {home} is read-only: you can read and search your conversations, but "
        "nothing can be sent or changed; make the folder writable (or start with another "
        "--home) to talk to Gemini."
    )


PROMPT_PLACEHOLDER = "Message Koroku (Enter sends, ctrl+j new line)"


class MainScreen(AgentEventsScreen):
    """The conversation; built by the App with the session's newest page, read before it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # First: the key bar shows bindings in this order and leaves out those
        # that do not fit (from the right; quit's key always shows). At 80
        # columns the keys after ctrl+t do not fit.
        Binding("escape", "cancel_turn", "Cancel", id="main.cancel"),
        # Shown only while a message is queued (``check_action``).
        Binding("ctrl+n", "unqueue", "Unqueue", id="main.unqueue"),
        Binding("ctrl+l", "new_session", "New", id="main.new_session", priority=True),
        Binding("ctrl+o", "compact", "Compact", id="main.compact", priority=True),
        Binding("ctrl+r", "history", "History", id="main.history", priority=True),
        Binding("ctrl+t", "toggle_sidebar", "Tools", id="main.toggle_sidebar", priority=True),
        Binding("ctrl+b", "older", "Older", id="main.older", priority=True),
        Binding("ctrl+g", "rewind", "Rewind", id="main.rewind", priority=True),
        # Not priority: a selection in the prompt is the prompt's to copy.
        Binding("ctrl+c", "interrupt", "Copy or cancel", show=False, id="main.interrupt"),
        Binding("ctrl+s", "copy_answer", "Copy answer", show=False, id="main.copy_answer"),
        # Not priority: in the sidebar's list ctrl+end goes to its last row.
        Binding("ctrl+end", "newest", "Newest", show=False, id="main.newest"),
    ]

    def __init__(self, first_page: Page | None) -> None:
        super().__init__()
        self._first_page = first_page
        self._shown_first = 0
        self._escaped_at: float | None = None
        """When Escape was pressed with no turn running: the first of a double Escape."""
        self.turns = TurnRunner(self)
        """The one job that writes at a time: a turn, a compaction, a switch..."""
        self.sessions = SessionJobs(self)
        """New session, switch, reload, and the pages above and below."""
        self._turn_actions = TurnActions(self)
        # Kept: the App reaches it on every key, and a query would walk the transcript first.
        self.prompt = Prompt(id="prompt", placeholder=PROMPT_PLACEHOLDER)
        self.queue = MessageQueue(self)
        """Messages typed while a turn runs, sent when it ends."""
        self._peek = SidebarPeek(self)
        self.mcp_watch = McpWatch()
        self.slash = SlashCommands(self)
        """``/`` in the prompt: built-in and custom commands (``ui.main.slash``)."""

    @property
    def koroku(self) -> KorokuApp:
        """The App, typed: it holds the store, the agent and start-up's state."""
        return cast("KorokuApp", self.app)

    @property
    def running(self) -> bool:
        """True while a turn (or a compaction, or a session switch) is in progress."""
        return self.turns.running

    @property
    def turn_task(self) -> asyncio.Task[Any] | None:
        """The running turn's task, for a stop signal's cancel message."""
        return self.turns.task

    # -- start-up --------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The first frame holds what fits on the screen (so it needs no
        # scrolling to show the newest message); the rest of the page is
        # mounted right after, above, while the view stays at the bottom.
        # Each call's row is drawn as its tool's spec says (the registry the agent gets).
        page, first, tools = self._first_page, [], self.koroku.parts.tools.spec_for
        if page is not None:
            width, height = self.app.size.width, self.app.size.height - _CHROME_LINES
            self._shown_first = screenful(page.events, width, height)
            first = page.blocks(tools, len(page.events) - self._shown_first)
        narrow = self.app.size.width < NARROW
        self.set_class(narrow, "-narrow")
        yield TitleBar()
        yield Static("", id="banner")
        with Horizontal(id="main"):
            yield Transcript(*first, tools=tools, id="transcript")
            yield ToolSidebar(tools=tools, id="sidebar", classes="-hidden" if narrow else None)
        yield ContextGauge(id="gauge")
        yield RecallProgress(id="recall-progress")
        yield TurnStatus(tools=tools, id="turn-status")
        yield QueuedMessages(id="queued")
        yield FilePicker(self.koroku.parts.instruction_files.workspace, id="file-picker")
        # Kept: the App reaches it on every key, and a query would walk the transcript first.
        self.prompt = Prompt(
            id="prompt", placeholder="Message Koroku (Enter sends, ctrl+j new line)"
        )
        yield self.prompt
        yield KeyBar()

    def on_mount(self) -> None:
        self.prompt.focus()
        self.slash.start()
        self.prompt.queued = self.queue  # ↑ in an empty prompt takes one back
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
        watch_instruction_files(app.parts.instruction_files, self.post_message)
        # Reading the rest of the page and the agent's context waits for the
        # first frame: the conversation shows before that work starts.
        self.call_after_refresh(self._start)
        self.call_after_refresh(ask_about_trust, app)

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
                start_recall(self)
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
        self.sessions.fill_sidebar()

    def show_problem(self, message: str) -> None:
        """Say why Koroku cannot answer (no key, no database) in the banner."""
        self.koroku.problem = message
        banner = self.query_one("#banner", Static)
        banner.update(literal(message))
        banner.add_class("-shown")

    async def show_session(self, at: int | None = None) -> Widget | None:
        """After a switch, a clear or a delete: the new current session (``SessionJobs.show``)."""
        return await self.sessions.show(at)

    def on_tool_row_closed(self, message: ToolRow.Closed) -> None:
        """Escape closed a tool's answer (a search's hits...): back to typing."""
        self.prompt.focus()

    def on_key(self, event: events.Key) -> None:
        """A key that reached the screen (not text, not the prompt's editing) ends a hit's mark."""
        self.sessions.unmark_hit()

    def on_screen_resume(self) -> None:
        """Any dialog closed (history, approval, rewind list, palette): back to typing."""
        self.prompt.focus()

    # -- sending ---------------------------------------------------------

    async def on_prompt_submitted(self, event: Prompt.Submitted) -> None:
        self.sessions.unmark_hit()
        if self.slash.ran_builtin(event):  # ``/new``...: no message
            return
        app = self.koroku
        if app.agent is None and (app.ready.is_set() or self.view is None):
            self.app.notify(app.problem or "Koroku is still starting.", severity="error")
            return
        text = self.slash.message(event.text)  # a custom command's text, ``//x`` as ``/x``...
        if text is None:
            return  # refused, and said: what was typed stays in the prompt
        event.prompt.take(event)
        self.queue.release_held()  # sent or queued: what a start restored is the user's now
        if self.running:
            self.queue.hold(text)  # sent when the turn ends (``ui.main.queue``)
            return
        await self.send(text)

    async def send(self, text: str) -> None:
        """Show ``text`` as the user's message and start its turn."""
        await self.turns.send(text)

    def begin(self, job: Coroutine[Any, Any, None], name: str) -> None:
        """Run ``job`` as the screen's exclusive "agent" worker, as a turn runs."""
        self.turns.begin(job, name)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A turn or another job ended: the queue goes out, or back to the prompt."""
        await self.turns.job_ended(event)

    def on_unmount(self) -> None:
        app = self.koroku  # closing: the queue kept for the next start, with its session
        session_id = app.store.session_id if app.store is not None else None
        self.queue.save_unsent(app.settings.home, session_id, str(app.title))

    def give_back(self, text: str) -> bool:
        """Put ``text`` (unsent or rewound) in the prompt, unless the user typed since."""
        prompt = self.prompt
        if prompt.text:
            return False
        prompt.text = as_typed(text)  # a message "/new" comes back as "//new"
        return True

    # -- actions ---------------------------------------------------------

    def system_commands(self) -> Iterable[SystemCommand]:
        """What the palette (ctrl+p) offers: the commands ``/`` offers (``ui.main.commands``)."""
        return palette_commands(self)

    def action_model(self) -> None:
        """The palette's "Change model…" (its screen imported only then)."""
        from koroku_tui.ui.main.model_picker import change_model

        change_model(self.koroku)

    def action_show_stats(self) -> None:
        """The palette's "Usage statistics" and ``/stats`` (its screen imported only then)."""
        from koroku_tui.ui.main.stats_view import show_stats

        show_stats(self.koroku)

    def action_cancel_turn(self) -> None:
        """Escape cancels the running turn; with none, Escape twice opens the rewind list."""
        if not self.running:
            now, first = self.koroku.key_order.typed_at or time.monotonic(), self._escaped_at
            self._escaped_at = None if first is not None and now - first <= DOUBLE_ESCAPE else now
            if self._escaped_at is None:
                self.action_rewind()
            return
        self._escaped_at = None  # the Escape that cancels never starts a double Escape
        self.turns.cancel()

    def action_interrupt(self) -> None:
        """ctrl+c: copy the text selected on screen; else cancel the running turn, as Escape does.

        With neither, the App's ctrl+c says (once) how to quit.
        """
        selected = self.get_selected_text()
        if selected:
            copy_selection(self.koroku, selected)
        elif self.running:
            self.action_cancel_turn()
        else:
            raise SkipAction()

    def action_copy_answer(self) -> None:
        """The last answer, whole, to the clipboard (read from the store: any page shown)."""
        store = self.koroku.store
        if store is None:
            self.app.notify(self.koroku.problem or "Koroku is still starting.", severity="error")
            return
        self.run_worker(
            copy_last_answer(self.koroku, store), group="copy", exclusive=True, exit_on_error=False
        )

    def action_unqueue(self) -> None:
        """Remove the newest queued message: it is never sent."""
        self.queue.remove_last()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The footer names the unqueue key only while a message waits.
        return bool(self.queue.texts) if action == "unqueue" else True

    def action_rewind(self) -> None:
        """List your messages, newest first: Enter rewinds to before one, ``f`` forks there."""
        self._turn_actions.open("rewind")

    def action_undo_restore(self) -> None:
        """Put back what the last file restore replaced (it was recorded first)."""
        self._turn_actions.files.undo()

    def action_fork(self) -> None:
        """The same list, where Enter forks (its first row: the whole conversation)."""
        self._turn_actions.open("fork")

    def on_resize(self, event: events.Resize) -> None:
        """Crossing ``NARROW``: the sidebar takes the new width's default (hidden if narrow)."""
        narrow = event.size.width < NARROW
        if narrow != self.has_class("-narrow"):
            self.set_class(narrow, "-narrow")
            self.query_one(ToolSidebar).set_class(narrow, "-hidden")
            self._peek.peeking = False

    def action_focus_sidebar(self) -> None:
        """Tab in the prompt: the sidebar's list, in one press (``ui.main.sidebar_peek``)."""
        self._peek.focus_list()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self._peek.focus_moved(event.widget)

    def action_toggle_sidebar(self) -> None:
        self._peek.peeking = False  # shown or hidden now by choice
        sidebar = self.query_one(ToolSidebar)
        if sidebar.has_focus_within:
            # Hiding the focused table would hand focus to the next focusable
            # widget, the transcript, and scroll it to its top: the prompt
            # takes it first, and the transcript stays where it was.
            self.prompt.focus(scroll_visible=False)
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
        self.sessions.new()

    def action_compact(self) -> None:
        if self.koroku.agent is None:
            self.app.notify(self.koroku.problem or "Koroku is still starting.", severity="error")
        elif not self.busy():
            self.turns.compact()

    def action_older(self) -> None:
        """Up to the first message shown; there, the page above it."""
        transcript = self.query_one(Transcript)
        if self.view is None:
            return
        if transcript.scroll_y > 0:
            transcript.scroll_home(animate=False, immediate=True)  # reaching the top loads it
        else:
            self.sessions.older()

    def action_transcript_page_up(self) -> None:
        """PageUp in the prompt (``main.page_up``): the transcript scrolls, not the prompt."""
        self.sessions.page_up()

    def action_transcript_page_down(self) -> None:
        """PageDown in the prompt (``main.page_down``)."""
        self.sessions.page_down()

    def action_newest(self) -> None:
        """ctrl+end (End in an empty prompt): down to the newest message."""
        self.sessions.newest()

    def on_transcript_reached_top(self) -> None:
        if self.view is not None:
            self.sessions.older(quiet=True)  # scrolling up past the start is no news

    def on_transcript_reached_bottom(self) -> None:
        if self.view is not None:
            self.sessions.newer()

    def action_history(self) -> None:
        self.sessions.open_history()
