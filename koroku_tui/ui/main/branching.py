"""Rewind and fork from the main screen: open the list of messages, act on the choice.

A rewind (``SessionManager.rewind``) takes the current session back to
before a message the user sent: nothing is deleted, the later turns only
leave the model's context (the history screen still shows them, marked).
The message's text returns to the prompt to be edited and sent again. A
fork (``SessionManager.fork``) copies the conversation before a message (or
all of it) into a new session, which then opens; the original is untouched.

When the turns taken back wrote files (or ran commands), a dialog first asks
whether the files go back too (``file_restoring.py``); the files are put
back after the conversation is.

Both run as the screen's exclusive "agent" worker, like a turn: while one
runs nothing else can write, and neither starts while a turn runs. After
either, ``MainScreen.show_session`` reloads the transcript from the store and
has the agent re-read its context (``Agent.refresh``), as after a switch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from koroku_tui.events import SessionEvent
from koroku_tui.store import StoredMessage, StoreError
from koroku_tui.ui.history.dates import local_now
from koroku_tui.ui.main.file_restoring import FileRestoring
from koroku_tui.ui.main.rewind import Mode, RewindScreen, TurnChoice

if TYPE_CHECKING:
    from koroku_tui.ui.main.screen import MainScreen

__all__ = ["TurnActions"]


class TurnActions:
    """The rewind and fork flow of one ``MainScreen``."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.files = FileRestoring(screen)

    def open(self, mode: Mode) -> None:
        """Show the list of this session's messages (refused while a turn runs)."""
        screen = self.screen
        if screen.running:
            screen.app.notify(f"A turn is running: wait for it (or press Escape) to {mode}.")
        elif not screen.busy():
            screen.begin(self._list(mode), "turn list")

    async def _list(self, mode: Mode) -> None:
        screen = self.screen
        store = screen.koroku.store
        assert store is not None
        try:
            turns = await store.user_turns()
        except StoreError as exc:
            screen.app.notify(str(exc), severity="error")
            return
        if not turns and mode == "rewind":
            screen.app.notify("Nothing to rewind: no message of yours in this session yet.")
            return
        screen.app.push_screen(RewindScreen(turns, local_now(), mode), self._chosen)

    def _chosen(self, choice: TurnChoice | None) -> None:
        screen = self.screen
        screen.prompt.focus()
        if choice is None or screen.busy():
            return
        if choice.fork:
            screen.begin(self._fork(choice.message), "fork")
        elif choice.message is not None:
            screen.begin(self._rewind(choice.message), "rewind")

    async def _rewind(self, chosen: StoredMessage) -> None:
        screen = self.screen
        store = screen.koroku.store
        assert store is not None
        try:
            files = await self.files.ask(chosen, fork=False)
            if files is None:
                return  # cancelled: nothing was done
            message = await store.rewind(chosen.id)
        except (StoreError, ValueError) as exc:
            screen.app.notify(str(exc), severity="error")
            return
        await screen.show_session()  # the agent re-reads its context, the transcript its page
        screen.app.notify(
            f"Rewound to before #{message.id}; the turns from there on stay in the "
            f"history (ctrl+r).{self._to_prompt(message)}"
        )
        if files:
            await self.files.put_back(files)

    async def _fork(self, chosen: StoredMessage | None) -> None:
        screen = self.screen
        app = screen.koroku
        store = app.store
        assert store is not None
        try:
            files = await self.files.ask(chosen, fork=True) if chosen is not None else False
            if files is None:
                return  # cancelled: nothing was done
            info = await store.fork(store.session_id, chosen.id if chosen is not None else None)
            await store.switch_session(info.id)
        except (StoreError, ValueError) as exc:
            app.notify(str(exc), severity="error")
            return
        if app.agent is not None:
            app.agent.tool_settings.session_allowed.clear()  # approvals are per session
        await screen.show_session()
        said = self._to_prompt(chosen) if chosen is not None else ""
        app.notify(f"Forked into session #{info.id}; the original stays as it was.{said}")
        if files:
            await self.files.put_back(files)

    def _to_prompt(self, message: StoredMessage) -> str:
        """Put ``message``'s text in the prompt to edit; what to tell the user about it."""
        event = message.event
        text = event.text if isinstance(event, SessionEvent) else ""
        if not text:
            return ""
        if not self.screen.give_back(text):
            return " Your draft stays in the prompt; that message's text is in the history."
        prompt = self.screen.prompt
        prompt.move_cursor(prompt.document.end)
        return " Its text is back in the prompt, to edit and send."
