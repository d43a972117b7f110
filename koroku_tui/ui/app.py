"""``KorokuApp``: the full-screen assistant, and ``make_app`` that the CLI and tests build it with.

Layout: header (session title, model), a banner for start-up problems, the
transcript with the tool sidebar on its right, the context gauge, the prompt
and the footer. The agent loop runs as one exclusive worker; its hooks post
messages (``ui.main.bridge``) handled here and forwarded to the widgets.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

from google import genai
from textual import work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Footer, Header, Static
from textual.worker import Worker

from koroku_tui.agent import DEFAULT_MODEL, Agent, AgentConfig, AgentError
from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.tools.approval import ApprovalDecision, ApprovalRequest
from koroku_tui.resources import styles_dir
from koroku_tui.settings import Settings
from koroku_tui.stopping import INTERRUPTED_BY_STOP, StopSignals
from koroku_tui.store import SessionManager, StoreError
from koroku_tui.ui.history import HistoryScreen, OpenSession, SessionDeleted, SessionRenamed
from koroku_tui.ui.keymap import KEYMAP_FILENAME, binding_defaults, load_keymap
from koroku_tui.ui.main import messages as m
from koroku_tui.ui.main.agent_events import AgentEventsApp
from koroku_tui.ui.main.approval import ApprovalScreen
from koroku_tui.ui.main.bridge import connect_hooks
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.session_view import Page, SessionView, screenful
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.transcript import Transcript
from koroku_tui.ui.safe_text import literal, sanitize

__all__ = ["KorokuApp", "freeze_heap", "make_app"]

logger = logging.getLogger(__name__)

# Lines that are not the transcript: header, gauge, prompt (3 at least), footer.
_CHROME_LINES = 6

# Actions that only make sense on the main screen (not under a modal or the history).
_MAIN_ONLY = {"new_session", "compact", "history", "toggle_sidebar", "cancel_turn", "older"}


class KorokuApp(AgentEventsApp):
    """The main screen; see :func:`make_app` for the arguments."""

    TITLE = "Koroku"
    CSS_PATH = styles_dir() / "koroku.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+l", "new_session", "New session", id="main.new_session", priority=True),
        Binding("ctrl+o", "compact", "Compact", id="main.compact", priority=True),
        Binding("ctrl+r", "history", "History", id="main.history", priority=True),
        Binding("ctrl+t", "toggle_sidebar", "Tools", id="main.toggle_sidebar", priority=True),
        Binding("ctrl+b", "older", "Older", id="main.older", priority=True),
        Binding("escape", "cancel_turn", "Cancel", id="main.cancel"),
        Binding("ctrl+q", "quit", "Quit", id="main.quit", priority=True),
    ]

    def __init__(
        self,
        settings: Settings,
        *,
        model: str = DEFAULT_MODEL,
        session_id: int | None = None,
        new_session: bool = False,
        client: genai.Client | None = None,
        config: AgentConfig | None = None,
        workspace: Path | None = None,
        auto_approve: bool = False,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.model = model
        self._session_id = session_id
        self._new_session = new_session
        self._client = client
        self._config = config or AgentConfig(
            memory_dir=settings.memory_dir, stall_timeout=settings.stall_timeout
        )
        self._workspace = workspace or Path.cwd()
        self._auto_approve = auto_approve
        self.store: SessionManager | None = None
        self.agent: Agent | None = None
        self.view: SessionView | None = None
        self.ready = asyncio.Event()
        """Set once start-up finished (with or without an agent); tests wait on it."""
        self._turn: Worker[None] | None = None
        self._turn_task: asyncio.Task[Any] | None = None
        self._stop_signals = StopSignals(self._stop_on_signal)
        self._problem: str | None = None
        self._first_page: Page | None = None
        self._shown_first = 0

    @property
    def running(self) -> bool:
        """True while a turn (or a compaction) is in progress."""
        return self._turn is not None and not self._turn.is_finished

    # -- start-up and shutdown -------------------------------------------

    async def on_load(self) -> None:
        """Open the store and read the session's newest page, before the first frame.

        The conversation is then composed with the app and drawn in its first
        frame, rather than mounted in a second pass; both steps cost the same
        whatever the history's length. The agent, which reads the model's
        whole context, starts after that frame (``_start``).
        """
        store = SessionManager(self.settings.database_path, session_id=self._session_id)
        try:
            await store.initialize()
            if self._new_session:
                await store.new_session()
            self._first_page = await Page.latest(store)
        except StoreError as exc:
            await store.close()
            self._problem = str(exc)
            return
        self.store = store

    def compose(self) -> ComposeResult:
        # The first frame holds what fits on the screen (so it needs no
        # scrolling to show the newest message); the rest of the page is
        # mounted right after, above, while the view stays at the bottom.
        page, first = self._first_page, []
        if page is not None:
            height = self.size.height - _CHROME_LINES
            self._shown_first = screenful(page.events, self.size.width, height)
            first = page.blocks(start=len(page.events) - self._shown_first)
        yield Header()
        yield Static("", id="banner")
        with Horizontal(id="main"):
            yield Transcript(*first, id="transcript")
            yield ToolSidebar(id="sidebar")
        yield ContextGauge(id="gauge")
        yield Prompt(id="prompt", placeholder="Message Koroku (Enter sends, ctrl+j new line)")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = self.model
        self._stop_signals.install()
        # Every binding id of Koroku's screens and widgets (all imported by now).
        defaults = binding_defaults([DOMNode])
        keymap = load_keymap(self.settings.home / KEYMAP_FILENAME, defaults)
        self.set_keymap(keymap.keys)
        if keymap.problem:
            self.notify(keymap.problem, severity="warning", markup=False, timeout=20)
        self.query_one(Prompt).focus()
        if self._problem:
            self._show_problem(self._problem)
        if self.store is not None and self._first_page is not None:
            self.view = SessionView(
                self.store, self.query_one(Transcript), self.query_one(ToolSidebar)
            )
            self.view.adopt(self._first_page)
            self.title = sanitize(self._first_page.info.title or "New session")
        # Reading the rest of the page and the agent's context waits for the
        # first frame: the conversation shows before that work starts.
        self.call_after_refresh(self._start)

    @work(group="startup", exit_on_error=False)
    async def _start(self) -> None:
        try:
            if self.view is not None and self._first_page is not None:
                await self.view.complete(self._first_page, self._shown_first)
            if self.store is not None:
                await self._start_agent(self.store)
        except StoreError as exc:
            self.notify(str(exc), severity="error")
        except Exception:
            logger.exception("start-up failed")
            message = "Something went wrong while starting; details are in koroku.log."
            if self.agent is None:
                self._show_problem(message)
            else:
                self.notify(message, severity="error")
        finally:
            self.ready.set()
        self._fill_sidebar()

    @work(group="sidebar", exclusive=True, exit_on_error=False)
    async def _fill_sidebar(self) -> None:
        """Every tool call of the session in the sidebar; after start-up, never in its way."""
        if self.view is None:
            return
        try:
            await self.view.show_earlier_calls()
        except StoreError as exc:
            self.notify(str(exc), severity="error")

    async def _start_agent(self, store: SessionManager) -> None:
        try:
            self.agent = self._make_agent(store)
            connect_hooks(self.agent, self.post_message)
            await self.agent.initialize()  # reads the model's context; on_usage fills the gauge
            if self.view is not None:
                await self.view.show_stored_since_page()
        except AgentError as exc:
            self.agent = None
            self._show_problem(exc.user_message)

    def _make_agent(self, store: SessionManager) -> Agent:
        tools = ToolSettings(
            workspace=self._workspace,
            memory_dir=self.settings.memory_dir,
            approval_callback=self._ask_approval,
            auto_approve=self._auto_approve,
            env_allow=frozenset(self.settings.tool_env_allow),
        )
        return Agent(
            self.model,
            session_manager=store,
            client=self._client,
            tool_settings=tools,
            config=self._config,
        )

    def _show_problem(self, message: str) -> None:
        self._problem = message
        banner = self.query_one("#banner", Static)
        banner.update(literal(message))
        banner.add_class("-shown")

    async def _show_session(self) -> None:
        """After a switch, a clear or a delete: the new current session, and its gauge."""
        if self.view is None:
            return
        info = await self.view.show_current()
        self.title = sanitize(info.title or "New session")
        self._fill_sidebar()
        if self.agent is not None:
            try:
                await self.agent.refresh()  # the gauge must describe this session
                await self.view.show_stored_since_page()
            except AgentError as exc:
                self.notify(exc.user_message, severity="error", markup=False)
            except StoreError as exc:
                self.notify(str(exc), severity="error", markup=False)
            self.query_one(ContextGauge).show(self.agent.budget)

    def _stop_on_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP: stop the turn (its command killed, its call answered), then exit."""
        code = 128 + signum
        task = self._turn_task
        if task is None or task.done():
            self.exit(return_code=code)
            return
        task.add_done_callback(lambda _task: self.exit(return_code=code))
        task.cancel(INTERRUPTED_BY_STOP)

    async def on_unmount(self) -> None:
        self._stop_signals.remove()
        if self._turn is not None:
            self._turn.cancel()
        if self.agent is not None:
            await self.agent.close()  # closes the store too
        elif self.store is not None:
            await self.store.close()

    # -- sending ---------------------------------------------------------

    async def on_prompt_submitted(self, event: Prompt.Submitted) -> None:
        if self.agent is None and (self.ready.is_set() or self.view is None):
            self.notify(self._problem or "Koroku is still starting.", severity="error")
            return
        if self.running:
            self.notify("A turn is running: wait for it or press Escape to cancel it.")
            return
        event.prompt.clear()
        await self.query_one(Transcript).add_user(event.text)
        self._turn = self._run_turn(event.text)

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def _run_turn(self, text: str) -> None:
        self._turn_task = asyncio.current_task()  # for a stop signal's cancel message
        try:
            await self.ready.wait()  # sent while the agent was still reading its context
        except asyncio.CancelledError:
            await self._not_sent(text, "cancelled before Koroku was ready")
            raise
        agent = self.agent
        if agent is None:
            await self._not_sent(text, self._problem or "Koroku could not start")
            return
        self.add_class("-running")
        cancelled = False
        try:
            reply = await agent.run(text)
            while reply is not None:
                reply = await agent.run(reply)
        except AgentError:
            # Already shown through on_error. A message refused before it was
            # stored (busy in another window, deleted session, full disk)
            # goes back to the prompt, to be sent later.
            if not agent.message_stored:
                await self.query_one(Transcript).withdraw_sent()
                self._give_back(text)
        except asyncio.CancelledError:
            cancelled = True
            raise
        except Exception:
            # A bug of ours: the history is already safe (the agent stores
            # before it acts); say so plainly, keep the traceback in the log.
            logger.exception("turn failed")
            self.notify(
                "Something went wrong while showing this turn; your messages are saved. "
                "Details are in koroku.log.",
                severity="error",
            )
        finally:
            self.post_message(m.TurnFinished(cancelled))

    async def _not_sent(self, text: str, reason: str) -> None:
        """A message that never reached the agent: say so, and give the text back."""
        if self._give_back(text):
            reason += "; your text is back in the prompt"
        self.post_message(m.TurnFinished(False))  # before any await: nothing can skip it
        await self.query_one(Transcript).add_error(f"Not sent: {reason}.")

    def _give_back(self, text: str) -> bool:
        """Put an unsent message back in the prompt, unless the user typed something since."""
        prompt = self.query_one(Prompt)
        if prompt.text:
            return False
        prompt.text = text
        return True

    async def _ask_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        # Called by the agent inside the turn worker, so waiting for the modal is allowed.
        return await self.push_screen_wait(
            ApprovalScreen(request, grace=self.settings.approval_grace)
        )

    # -- actions ---------------------------------------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette (ctrl+p) offers every main-screen action, not only keys."""
        yield from super().get_system_commands(screen)
        if len(self.screen_stack) > 1:
            return
        yield SystemCommand("New session", "Start a fresh conversation", self.action_new_session)
        yield SystemCommand("Compact now", "Summarise older turns", self.action_compact)
        yield SystemCommand("History", "Browse and search past sessions", self.action_history)
        yield SystemCommand(
            "Tool sidebar", "Show or hide the tool calls", self.action_toggle_sidebar
        )
        yield SystemCommand("Cancel turn", "Stop the running turn", self.action_cancel_turn)
        yield SystemCommand("Older messages", "Load earlier messages", self.action_older)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action in _MAIN_ONLY and len(self.screen_stack) > 1)

    def action_cancel_turn(self) -> None:
        # Only a model turn or a compaction: a session switch cut half way
        # would leave the screen showing one session and the store another.
        cancellable = {KorokuApp._run_turn.__name__, KorokuApp._compact_worker.__name__}
        turn = self._turn
        if self.running and turn is not None and turn.name in cancellable and not turn.is_cancelled:
            turn.cancel()  # once: a second cancel would cut the clean-up of the first

    def action_toggle_sidebar(self) -> None:
        self.query_one(ToolSidebar).toggle_class("-hidden")

    def _busy(self) -> bool:
        if self.view is None or not self.ready.is_set():
            self.notify(self._problem or "Koroku is still starting.", severity="error")
            return True
        if self.running:
            self.notify("A turn is running: wait for it or press Escape to cancel it.")
            return True
        return False

    def action_new_session(self) -> None:
        if not self._busy():
            self._turn = self._new_session_worker()

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def _new_session_worker(self) -> None:
        assert self.store is not None
        try:
            await self.store.new_session()
        except StoreError as exc:
            self.notify(str(exc), severity="error")
            return
        if self.agent is not None:
            self.agent.tool_settings.session_allowed.clear()  # approvals are per session
        await self._show_session()
        self.notify("New session. The previous one stays in the history (ctrl+r).")

    def action_compact(self) -> None:
        if self.agent is None:
            self.notify(self._problem or "Koroku is still starting.", severity="error")
        elif not self._busy():
            self._turn = self._compact_worker()

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def _compact_worker(self) -> None:
        assert self.agent is not None
        try:
            event = await self.agent.compact()
        except AgentError as exc:
            self.notify(exc.user_message, severity="error")
            return
        if event is None:
            self.notify("Nothing to summarise yet.")

    def action_older(self) -> None:
        if self.view is not None:
            self._older_worker()

    def on_transcript_reached_top(self) -> None:
        if self.view is not None:
            self._older_worker(quiet=True)  # scrolling up past the start is no news

    @work(group="older", exclusive=True, exit_on_error=False)
    async def _older_worker(self, quiet: bool = False) -> None:
        assert self.view is not None
        await self.ready.wait()  # start-up is still mounting the first page above
        older = await self.view.show_older()
        if older == "full":
            self.notify(
                "The transcript keeps the newest messages only; the history screen "
                "(ctrl+r) shows the whole session."
            )
        elif older == "start" and not quiet:
            self.notify("This is the start of the session.")

    def action_history(self) -> None:
        # Deleting or switching sessions under a running turn (or start-up)
        # would send its writes, or its first page, to another session.
        if self._busy() or self.store is None:
            return
        screen = HistoryScreen(self.store, self.store.session_id)
        self.push_screen(screen, self._history_closed)

    def _history_closed(self, result: OpenSession | None) -> None:
        if result is not None and not self._busy():
            self._turn = self._switch_worker(result.session_id)

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def _switch_worker(self, session_id: int) -> None:
        assert self.store is not None
        try:
            await self.store.switch_session(session_id)
        except StoreError as exc:
            self.notify(str(exc), severity="error")
            return
        if self.agent is not None:
            self.agent.tool_settings.session_allowed.clear()
        await self._show_session()

    def on_session_renamed(self, message: SessionRenamed) -> None:
        if self.store is not None and message.info.id == self.store.session_id:
            self.title = sanitize(message.info.title or "New session")

    async def on_session_deleted(self, message: SessionDeleted) -> None:
        if message.was_current:
            try:
                await self._show_session()
            except StoreError as exc:
                self.notify(str(exc), severity="error")


def make_app(
    settings: Settings,
    *,
    model: str = DEFAULT_MODEL,
    session_id: int | None = None,
    new_session: bool = False,
    client: genai.Client | None = None,
    config: AgentConfig | None = None,
    workspace: Path | None = None,
    auto_approve: bool = False,
) -> KorokuApp:
    """Build the app: the CLI passes its flags; tests pass a client aimed at FakeGemini.

    ``session_id`` continues that session (default: the most recent one);
    ``new_session`` starts a fresh one. Without ``client`` the agent builds one
    from the environment; with no key the app still opens, with a banner.
    """
    return KorokuApp(
        settings,
        model=model,
        session_id=session_id,
        new_session=new_session,
        client=client,
        config=config,
        workspace=workspace,
        auto_approve=auto_approve,
    )


def freeze_heap() -> None:
    """Collect once, then exempt every surviving object from later garbage collections.

    After the imports (Textual, the SDK, pydantic) the heap holds ~100,000
    tracked objects, and one full collection of them took ~80 ms here: when
    one fell during the first frame or a streamed answer, the screen stalled.
    What is alive now is mostly modules and classes that live until exit, so
    freezing it costs nothing. Called right before the app starts.
    """
    gc.collect()
    gc.freeze()
