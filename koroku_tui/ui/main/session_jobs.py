"""The main screen's session jobs: which session it shows, and how much of it.

A new session (``main.new_session``) and a switch from the history screen
(``main.history``, opening at the end or at a search hit) change the
current session; they run as the screen's one writing job (``TurnRunner``,
group "agent"), like a turn, and never while one runs. After either, and
after a rewind, a fork or a delete, ``show`` reloads the transcript from the
store and has the agent re-read its context. The sidebar (every tool call of
the session, group "sidebar") and the pages above and below the transcript
(group "pages") are read by workers of their own, which write nothing.

A plain class holding its screen rather than a mixin or ``@work`` methods,
for the reasons ``ui.main.turn_runner`` gives: the workers are the screen's
(``screen.run_worker``), with the names the ``@work`` methods had; the
state (the marked search hit) and the flows live here.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.timer import Timer
from textual.widget import Widget
from textual.worker import Worker

from koroku_tui.agent import AgentError
from koroku_tui.store import StoreError
from koroku_tui.ui.history.messages import OpenSession
from koroku_tui.ui.main.gauge import ContextGauge
from koroku_tui.ui.main.transcript import Transcript
from koroku_tui.ui.safe_text import sanitize

if TYPE_CHECKING:
    from koroku_tui.ui.main.screen import MainScreen

__all__ = ["HIT_MARK_SECONDS", "SessionJobs"]

HIT_MARK_SECONDS = 5.0
"""How long an opened search hit stays marked in the transcript (sending, or a key
the screen sees, ends it sooner)."""


class SessionJobs:
    """New session, switch, reload and paging for one ``MainScreen``."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self._hit: Widget | None = None
        """The block of the search hit the session was opened at, while marked."""
        self._hit_timer: Timer | None = None

    # -- showing the current session -------------------------------------

    async def show(self, at: int | None = None) -> Widget | None:
        """After a switch, a clear or a delete: the new current session, and its gauge.

        ``at``: a row to open the session at (a search hit) instead of its
        end; its first block is returned, to be scrolled to.
        """
        screen = self.screen
        view = screen.view
        if view is None:
            return None
        hit: Widget | None = None
        if at is None:
            info = await view.show_current()
        else:
            info, hit = await view.show_at(at)
        screen.app.title = sanitize(info.title or "New session")
        screen.query_one(ContextGauge).forget_turn()
        self.fill_sidebar()
        agent = screen.koroku.agent
        if agent is not None:
            try:
                await agent.refresh()  # the gauge must describe this session, and its model
                screen.koroku.model = screen.app.sub_title = agent.model
                await view.show_stored_since_page()
            except AgentError as exc:
                screen.app.notify(exc.user_message, severity="error")
            except StoreError as exc:
                screen.app.notify(str(exc), severity="error")
            screen.query_one(ContextGauge).show(agent.budget)
        return hit

    def fill_sidebar(self) -> None:
        """Every tool call of the session in the sidebar; after start-up, never in its way."""
        self._reader(self._fill_sidebar, "_fill_sidebar", "sidebar", exclusive=True)

    async def _fill_sidebar(self) -> None:
        screen = self.screen
        if screen.view is None:
            return
        try:
            await screen.view.show_earlier_calls()
        except StoreError as exc:
            screen.app.notify(str(exc), severity="error")

    def _reader(
        self,
        work: Callable[[], Coroutine[Any, Any, None]],
        name: str,
        group: str,
        exclusive: bool = False,
    ) -> Worker[None]:
        """Run ``work()`` as a worker of the screen that reads the store and writes nothing."""
        return self.screen.run_worker(
            work, name=name, group=group, exclusive=exclusive, exit_on_error=False
        )

    # -- a new session ---------------------------------------------------

    def new(self) -> None:
        """Start a fresh conversation (unless busy); the previous one stays in the history."""
        if not self.screen.busy():
            self.screen.turns.start(self._new_session, "_new_session_worker")

    async def _new_session(self) -> None:
        screen = self.screen
        app = screen.koroku
        assert app.store is not None
        try:
            await app.store.new_session()
        except StoreError as exc:
            app.notify(str(exc), severity="error")
            return
        if app.agent is not None:
            app.agent.tool_settings.session_allowed.clear()  # approvals are per session
        await self.show()
        read = app.parts.instruction_files.loaded  # what the new session's model is told
        if read is not None and (line := read.summary()):
            await screen.query_one(Transcript).add_notice(line)
        screen.prompt.focus()  # the focused block, if any, went with the old session
        app.notify("New session. The previous one stays in the history (ctrl+r).")

    # -- switching from the history screen -------------------------------

    def open_history(self, *, memories: bool = False) -> None:
        """The history screen, to browse, search and open past sessions (unless busy).

        ``memories``: on its memory pane (``/memory``), as its ctrl+y shows it.
        """
        screen = self.screen
        # Deleting or switching sessions under a running turn (or start-up)
        # would send its writes, or its first page, to another session.
        store = screen.koroku.store
        if screen.busy() or store is None:
            return
        # Imported on first use, off the first frame (see ui.app.SCREENS_SHOWN_LATER).
        from koroku_tui.ui.history.screen import HistoryScreen

        grace = screen.koroku.parts.approval_grace  # a delete's confirmation waits as approvals do
        history = HistoryScreen(store, store.session_id, grace=grace)
        screen.app.push_screen(history, self.history_closed)
        if memories:
            history.call_after_refresh(history.action_toggle_memories)

    def history_closed(self, result: OpenSession | None) -> None:
        """The history screen's answer: a session to open (at a hit, with a prompt), or none."""
        if result is not None and not self.screen.busy():
            switch = partial(self._switch, result.session_id, result.prompt, result.message_id)
            self.screen.turns.start(switch, "_switch_worker")

    async def _switch(
        self, session_id: int, prompt: str | None = None, at: int | None = None
    ) -> None:
        screen = self.screen
        app = screen.koroku
        assert app.store is not None
        try:
            await app.store.switch_session(session_id)
        except StoreError as exc:
            app.notify(str(exc), severity="error")
            return
        if app.agent is not None:
            app.agent.tool_settings.session_allowed.clear()
        hit = await self.show(at)
        if hit is not None:
            transcript = screen.query_one(Transcript)
            await transcript.laid_out()  # the block's place is known once laid out
            transcript.bring_into_view(hit)
            self._mark_hit(hit)
        if prompt and screen.give_back(prompt):  # a fork at a message: to edit and send
            screen.prompt.move_cursor(screen.prompt.document.end)

    def _mark_hit(self, block: Widget) -> None:
        """Mark the opened search hit so the eye finds it, for a moment."""
        self.unmark_hit()
        self._hit = block
        block.add_class("-hit")
        self._hit_timer = self.screen.set_timer(HIT_MARK_SECONDS, self.unmark_hit)

    def unmark_hit(self) -> None:
        """The opened search hit, if still marked, no longer is."""
        if self._hit_timer is not None:
            self._hit_timer.stop()
        hit, self._hit, self._hit_timer = self._hit, None, None
        if hit is not None:
            hit.remove_class("-hit")

    # -- pages above and below -------------------------------------------

    def older(self, quiet: bool = False) -> None:
        """Load the page above the first message shown (``quiet``: no notice at the start)."""
        # Not exclusive: a page load cut half way would leave pages half mounted.
        self._reader(partial(self._older, quiet), "_older_worker", "pages")

    async def _older(self, quiet: bool) -> None:
        screen = self.screen
        assert screen.view is not None
        await screen.koroku.ready.wait()  # start-up is still mounting the first page above
        try:
            older = await screen.view.show_older()
        except StoreError as exc:
            screen.app.notify(str(exc), severity="error")
            return
        if older == "start" and not quiet:
            screen.app.notify("This is the start of the session.")
        elif older == "wait":
            screen.app.notify("Older messages load once this turn ends.")

    # -- scrolling from the prompt ---------------------------------------

    def page_up(self) -> None:
        """PageUp in the prompt: the transcript a screen up (at the top, the page above)."""
        transcript = self.screen.query_one(Transcript)
        if transcript.scroll_y <= 0:
            if self.screen.view is not None:
                self.older(quiet=True)  # no scroll happens there to load it
        else:
            transcript.scroll_page_up()

    def page_down(self) -> None:
        """PageDown in the prompt: the transcript a screen down (at the bottom, the page below)."""
        transcript = self.screen.query_one(Transcript)
        if transcript.scroll_y >= transcript.max_scroll_y:
            if self.screen.view is not None and transcript.edges.away:
                self.newer()
        else:
            transcript.scroll_page_down()

    def newest(self) -> None:
        """Down to the newest message, following new output again (ctrl+b's way back down).

        From pages far back, the newest page is mounted again in their place,
        as sending a message does.
        """
        self.unmark_hit()
        self._reader(self._newest, "_newest_worker", "pages")

    async def _newest(self) -> None:
        screen = self.screen
        transcript = screen.query_one(Transcript)
        if screen.view is not None:
            await screen.koroku.ready.wait()  # start-up is still mounting the first page above
            try:
                await screen.view.back_to_live()
            except StoreError as exc:
                screen.app.notify(str(exc), severity="error")
                return
        transcript.anchor()

    def newer(self) -> None:
        """Load the page below the last message shown, back towards the live end."""
        self._reader(self._newer, "_newer_worker", "pages")

    async def _newer(self) -> None:
        screen = self.screen
        assert screen.view is not None
        try:
            await screen.view.show_newer()
        except StoreError as exc:
            screen.app.notify(str(exc), severity="error")
