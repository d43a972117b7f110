"""``KorokuApp``: the full-screen assistant.

The App holds what outlives its screens: the store (opened, and the
session's newest page replayed, before the first frame), the agent (started
after that frame, by the main screen), the key map, stop signals and
shutdown. What the user sees and does is the screens': ``MainScreen`` (the
conversation) and ``HistoryScreen`` (past sessions).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.driver import Driver
from textual.errors import NoWidget
from textual.notifications import Notification, Notify, SeverityLevel
from textual.reactive import Reactive
from textual.screen import Screen

from koroku_tui.agent.errors import AgentError
from koroku_tui.agent.loop.stopping import INTERRUPTED_BY_STOP, StopSignals
from koroku_tui.config.settings import Settings
from koroku_tui.privacy.file_modes import home_warning
from koroku_tui.store import MigrationProgress, SessionManager, StoreError, upgrade_pending
from koroku_tui.ui.agent_loading import importing, in_own_thread, load_agent
from koroku_tui.ui.grace_dialog import Press
from koroku_tui.ui.history.messages import SessionDeleted, SessionRenamed
from koroku_tui.ui.key_bar import KeyBar
from koroku_tui.ui.key_order import KeyOrder
from koroku_tui.ui.keymap import KEYMAP_FILENAME, binding_defaults, load_keymap, web_keys
from koroku_tui.ui.main.bridge import HookFeed, connect_hooks
from koroku_tui.ui.main.screen import MainScreen, read_only_banner
from koroku_tui.ui.main.session_view import Page
from koroku_tui.ui.main.type_ahead import focus_for_input
from koroku_tui.ui.main.upgrade import UpgradeScreen
from koroku_tui.ui.resources import styles_dir
from koroku_tui.ui.safe_text import sanitize
from koroku_tui.ui.terminal_input import driver_to_run_on

if TYPE_CHECKING:
    # The agent and the SDK it brings (~1.5 s to import here) load in
    # ``start_agent``, after the first frame: see ``_make_agent``.
    from google import genai

    from koroku_tui.agent import Agent
    from koroku_tui.agent.context.instruction_files import InstructionFiles
    from koroku_tui.agent.recall.indexer import Progress, Recall
    from koroku_tui.agent.tools.approval import ApprovalCallback, ApprovalDecision, ApprovalRequest
    from koroku_tui.agent.tools.registry import ToolRegistry

__all__ = ["AppParts", "KorokuApp"]

logger = logging.getLogger(__name__)


SCREENS_SHOWN_LATER = ("koroku_tui.ui.history.screen", "koroku_tui.ui.main.approval")
"""Screens imported when first shown, not before the first frame (~25 ms here)."""


class AppParts(Protocol):
    """What the app runs on: ``koroku_tui.modes.wiring.RunParts``, assembled from the settings.

    The assembly sits above the UI (it also serves ``--print`` and the
    demo), so the app names only what it uses.
    """

    @property
    def settings(self) -> Settings:
        """The run's settings (the home holds the keymap and the unsent messages)."""

    @property
    def model(self) -> str:
        """The chat model, shown in the title."""

    @property
    def database_path(self) -> Path:
        """The store's file (an upgrade may have to migrate it first)."""

    @property
    def approval_grace(self) -> float | None:
        """Seconds the approval dialog ignores keys (``None``: its default)."""

    @property
    def notices(self) -> tuple[str, ...]:
        """The config files' warnings (unknown keys...), shown once the app is up."""

    @property
    def tools(self) -> ToolRegistry:
        """The tools the agent is given; the screens draw each call as its spec says.

        Built before the first frame (without the SDK): replayed rows need the specs.
        """

    @property
    def instruction_files(self) -> InstructionFiles:
        """The personal and project instruction files (the agent reads them; the app shows them)."""

    @property
    def config_file(self) -> Path:
        """The user's ``config.toml``: the trust prompt keeps its answers there."""

    def open_store(self, session_id: int | None = None) -> SessionManager:
        """The store, continuing ``session_id`` (default: the latest session)."""

    def build_agent(
        self, store: SessionManager, *, approval_callback: ApprovalCallback | None = None
    ) -> Agent:
        """The agent on ``store`` (imports the SDK: called after the first frame)."""

    def recall_indexer(
        self, store: SessionManager, *, client: genai.Client | None, on_progress: Progress
    ) -> Recall | None:
        """What embeds ``store``'s messages (``[recall] embeddings``), started after the agent."""


class KorokuApp(App[None]):
    """The assistant, on the parts the CLI (or the demo, or a test) assembled.

    ``session_id`` continues that session (default: the most recent one);
    ``new_session`` starts a fresh one; ``fork_from`` (source, message) opens
    a new fork of that session, made by the app's store (the command line
    makes the others: a fork with nothing to copy is stored only with its
    first message, by the store that opened it). Without a client among the
    parts the agent builds one from the credentials; with no key the app
    still opens, with a banner.
    """

    TITLE = "Koroku"
    # App's own title reactives repaint the whole screen when they change (a
    # new session's title arrives during its first turn: a frame of ~6 ms, all
    # of it drawn again, while the answer waited). The header draws them
    # (``TitleBar`` watches both), so a change repaints the header's line alone.
    title: Reactive[str] = Reactive("", compute=False, repaint=False)
    sub_title: Reactive[str] = Reactive("", compute=False, repaint=False)
    CSS_PATH = styles_dir() / "koroku.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        # The App's: quit works on every screen and under every dialog.
        Binding("ctrl+q", "quit", "Quit", id="main.quit", priority=True),
    ]

    def __init__(
        self,
        parts: AppParts,
        *,
        session_id: int | None = None,
        new_session: bool = False,
        fork_from: tuple[int, int | None] | None = None,
    ) -> None:
        super().__init__()
        self.parts = parts
        self.settings = parts.settings
        self.model = parts.model
        self._session_id = session_id
        self._new_session = new_session
        self._fork_from = fork_from
        self.store: SessionManager | None = None
        self.agent: Agent | None = None
        self.feed: HookFeed | None = None
        """The agent's hooks on their way to the main screen (set with the agent)."""
        self.ready = asyncio.Event()
        """Set once start-up finished (with or without an agent); tests wait on it."""
        self.problem: str | None = None
        """Why Koroku cannot answer (no key, no database), shown in the main screen's banner."""
        self._stop_signals = StopSignals(self._stop_on_signal)
        self._first_page: Page | None = None
        self._upgrade: UpgradeScreen | None = None
        """The screen shown while an upgrade migrates the database (under the main screen after)."""
        self.key_order = KeyOrder(self)

    @property
    def main(self) -> MainScreen:
        """The conversation screen (bottom of the stack, or just above ``UpgradeScreen``)."""
        screen = self._main_screen()
        assert screen is not None, "the conversation is not shown yet"
        return screen

    def _main_screen(self) -> MainScreen | None:
        # After an upgrade the main screen was pushed over the progress screen
        # (Textual cannot switch away from the default screen).
        return next((s for s in self.screen_stack if isinstance(s, MainScreen)), None)

    async def on_event(self, event: events.Event) -> None:
        event = self._pressed_key(event)
        if self.key_order.holds(event):
            return  # typed after a key still on its way: handed on after it (``ui.key_order``)
        if isinstance(event, events.MouseDown) and not event.is_forwarded:
            self.press = Press.read(self, event)
        # Before Textual hands typed text to the focused widget (``ui.main.type_ahead``).
        if isinstance(event, events.Key | events.Paste) and isinstance(self.screen, MainScreen):
            focus_for_input(self.screen.prompt, event)
        await super().on_event(event)
        self.key_order.handed_on(event)

    def _pressed_key(self, event: events.Event) -> events.Event:
        """A press on an enabled key of the key bar is that key, typed when it was pressed.

        The bar pressed it only once the press had reached it: keys typed after the
        press, held behind a key on its way (``ui.key_order``), went first ("/" clicked
        on the history's list, then "de": the "d" reached the list and asked to delete).
        """
        if not isinstance(event, events.MouseDown) or event.is_forwarded:
            return event
        if not self.screen_stack or self.key_order.released(event):
            return event  # read before: a press it was, a press it stays
        try:
            widget, region = self.get_widget_at(event.x, event.y)
        except NoWidget:
            return event
        shown = widget.key_at(event.x - region.x) if isinstance(widget, KeyBar) else None
        if shown is None or not shown.enabled:
            return event  # the bar rings the bell for a dimmed key
        key = events.Key(shown.key, None)
        key.time = event.time
        return key.set_sender(self)

    press: Press | None = None
    """The last mouse button pressed, as read: a dialog's button judges its click by when it
    was made, not when Textual handled it (``ui.grace_dialog.click_time``)."""

    @property
    def running(self) -> bool:
        """True while a turn (or a compaction) is in progress."""
        screen = self._main_screen()
        return screen is not None and screen.running

    # -- start-up and shutdown -------------------------------------------

    async def on_load(self) -> None:
        """Open the store and replay the session's newest page, before the first frame.

        The conversation is then composed with the main screen and drawn in
        its first frame, rather than mounted in a second pass; both steps cost
        the same whatever the history's length. The agent, which reads the
        model's whole context, starts after that frame (``start_agent``).

        A database an upgrade must migrate is opened after a first frame
        instead, under ``UpgradeScreen`` (a migration can take seconds).
        """
        if upgrade_pending(self.parts.database_path):
            self._upgrade = UpgradeScreen()
            return
        await self._open_store()

    async def _open_store(self, progress: MigrationProgress | None = None) -> None:
        """Open (migrating if needed) the store and read the session's newest page.

        A failure becomes ``problem``, the sentence the main screen's banner shows.
        """
        store = self.parts.open_store(self._session_id)
        try:
            await store.initialize(progress=progress)
            if self._new_session:
                await store.new_session()
            if self._fork_from is not None:
                await store.switch_session((await store.fork(*self._fork_from)).id)
            self._first_page = await Page.latest(store)
        except StoreError as exc:
            await store.close()
            self.problem = str(exc)
            return
        except BaseException:
            await store.close()  # a bug, or the app closing mid-migration: no thread left behind
            raise
        self.store = store

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, as Koroku runs on it (``ui.terminal_input.driver_to_run_on``)."""
        return driver_to_run_on(super().get_driver_class())

    def get_default_screen(self) -> Screen[Any]:
        if self._upgrade is not None:
            return self._upgrade  # the main screen comes once the store is open
        return MainScreen(self._first_page)

    def on_upgrade_screen_drawn(self, message: UpgradeScreen.Drawn) -> None:
        self._open_after_upgrade(message.screen)

    @work(group="upgrade", exit_on_error=False)
    async def _open_after_upgrade(self, screen: UpgradeScreen) -> None:
        """Migrate under the progress screen, then show the conversation as any start does."""
        try:
            await self._open_store(progress=screen.progress)
        except Exception:
            logger.exception("opening the database after an upgrade failed")
            self.problem = "Koroku could not update its database; details are in koroku.log."
        screen.finish()
        await self.push_screen(MainScreen(self._first_page))

    def on_mount(self) -> None:
        self.sub_title = self.model
        self._stop_signals.install()
        path = self.settings.home / KEYMAP_FILENAME
        if path.exists() or self.settings.keys:
            # Every binding id of Koroku's screens and widgets, to check the
            # remaps: those shown later are imported now (only with remaps).
            for module in SCREENS_SHOWN_LATER:
                import_module(module)
        keymap = load_keymap(path, binding_defaults([DOMNode]), configured=self.settings.keys)
        self.set_keymap(web_keys(keymap.keys, in_browser=self.is_web))
        for notice in [*self.parts.notices, *filter(None, [keymap.problem])]:
            self.notify(notice, severity="warning", timeout=20, markup=False)
        if warning := home_warning(self.settings.home):  # a folder Koroku did not make
            self.notify(warning, severity="warning", timeout=20, markup=False)

    async def start_agent(self, store: SessionManager) -> None:
        """Build the agent, let it read the model's context; its hooks post to the main screen.

        Not on a read-only home's store: nothing it answers could be kept.
        """
        if store.read_only:
            self.main.show_problem(read_only_banner(self.settings.home))
            return
        importing.set()  # before the thread starts: a quit at once must not wait for it
        await in_own_thread(load_agent)  # the prompt takes keys meanwhile
        try:
            self.agent = self._make_agent(store)
            self.feed = connect_hooks(self.agent, self.main.post_message)
            await self.agent.initialize()  # reads the model's context; on_usage fills the gauge
            self.model = self.sub_title = self.agent.model  # the session may have chosen its own
        except AgentError as exc:
            self.agent = None
            self.main.show_problem(exc.user_message)

    def _make_agent(self, store: SessionManager) -> Agent:
        # After the first frame: ``load_agent`` did the imports.
        return self.parts.build_agent(store, approval_callback=self._ask_approval)

    async def _ask_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        # Called by the agent inside the turn worker, so waiting for the modal is allowed.
        from koroku_tui.ui.main.approval import ApprovalScreen  # see SCREENS_SHOWN_LATER

        if self.feed is not None:
            self.feed.flush()  # the call's row is drawn under the dialog
        return await self.push_screen_wait(ApprovalScreen(request, grace=self.parts.approval_grace))

    def _stop_on_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP: stop the turn (its command killed, its call answered), then exit."""
        code = 128 + signum
        if self._main_screen() is None:  # still migrating
            self.exit(return_code=code)
            return
        task = self.main.turn_task
        if task is None or task.done():
            self.exit(return_code=code)
            return
        task.add_done_callback(lambda _task: self.exit(return_code=code))
        task.cancel(INTERRUPTED_BY_STOP)

    async def on_unmount(self) -> None:
        self._stop_signals.remove()
        if self.agent is not None:
            await self.agent.close()  # closes the store too
        elif self.store is not None:
            await self.store.close()

    # -- app-wide --------------------------------------------------------

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

    _quit_notice: Notification | None = None
    """The ctrl+c notice on screen, if any: pressing ctrl+c again adds no other."""

    def action_help_quit(self) -> None:
        """ctrl+c does not quit: say which key does, in plain words, once.

        Textual's own notice carries ``[b]`` markup, which ``notify`` (markup
        off) would show as typed, and a notice per press stacked up. The key
        is the active one: a keymap may move quit.
        """
        shown = self._quit_notice
        if shown is not None and not shown.has_expired and shown in self._notifications:
            return
        for key, active in self.active_bindings.items():
            if active.binding.action in ("quit", "app.quit"):
                notice = Notification(
                    f"Press {key} to quit.",
                    "Do you want to quit?",
                    timeout=self.NOTIFICATION_TIMEOUT,
                    markup=False,
                )
                self._quit_notice = notice
                self.post_message(Notify(notice))
                return

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette (ctrl+p) offers Textual's commands and those of the screen it opened on."""
        yield from super().get_system_commands(screen)
        if isinstance(screen, MainScreen):
            yield from screen.system_commands()

    # The history screen posts these; they bubble up here, past the main screen.

    def on_session_renamed(self, message: SessionRenamed) -> None:
        if self.store is not None and message.info.id == self.store.session_id:
            self.title = sanitize(message.info.title or "New session")

    async def on_session_deleted(self, message: SessionDeleted) -> None:
        if message.was_current:
            try:
                await self.main.show_session()
            except StoreError as exc:
                self.notify(str(exc), severity="error")
