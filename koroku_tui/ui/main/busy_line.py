"""The one line that says the session is busy in another window (issue 22, item 9).

While another Koroku process runs a turn on this session, a message sent here
waits for it (the store tries again for a few seconds), then comes back to the
prompt unsent. Each attempt used to add the store's three-line sentence; now
one line says it, updated in place as the store tries again, and moved under
the message when the user sends again:

    Session 12 is busy in another window; retrying… (tried 3 times)
    Session 12 is busy in another window: not sent (tried 17 times).

The count runs on until this window gets the session; the line then goes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from koroku_tui.ui.main.blocks import NoticeBlock
from koroku_tui.ui.safe_text import literal

if TYPE_CHECKING:
    from koroku_tui.agent.hooks import SessionBusy
    from koroku_tui.ui.main.transcript import Transcript

__all__ = ["BusyLine", "busy_words", "follow", "gave_up"]


def busy_words(session_id: int, tries: int, *, waiting: bool) -> str:
    """The line's text: still trying (``waiting``), or given up for now."""
    tried = "tried once" if tries == 1 else f"tried {tries} times"
    if waiting:
        return f"Session {session_id} is busy in another window; retrying… ({tried})"
    return f"Session {session_id} is busy in another window: not sent ({tried})."


class BusyLine(NoticeBlock):
    """The transcript's line for a busy session; at most one is mounted (``follow``)."""

    def __init__(self, session_id: int, tries: int) -> None:
        super().__init__(busy_words(session_id, tries, waiting=True))
        self.add_class("-busy")
        self.session_id = session_id
        self.tries = tries
        self.waiting = True
        """Still trying; False once the attempt gave up (or was cancelled)."""

    def tried(self, session_id: int) -> None:
        """One more attempt found the session busy: count it, say it is still trying."""
        self.session_id, self.tries, self.waiting = session_id, self.tries + 1, True
        self._say()

    def gave_up(self) -> None:
        """The attempt ended without the session: the message is back in the prompt."""
        self.waiting = False
        self._say()

    def _say(self) -> None:
        self.update(literal(busy_words(self.session_id, self.tries, waiting=self.waiting)))


async def follow(transcript: Transcript, busy: SessionBusy) -> None:
    """Show ``busy`` on the transcript's one busy line: counted, moved to the end, or gone."""
    line = next(iter(transcript.query(BusyLine)), None)
    if busy.free:
        if line is not None:
            await line.remove()
        return
    if line is None:
        await transcript.add(BusyLine(busy.session_id, 1))
        return
    line.tried(busy.session_id)
    if transcript.children and transcript.children[-1] is not line:
        # Sent again: the line goes under the new message, still the only one.
        await line.remove()
        fresh = BusyLine(line.session_id, line.tries)
        await transcript.add(fresh)


def gave_up(transcript: Transcript) -> bool:
    """The attempt in progress stopped trying; False when no busy line shows it."""
    line = next(iter(transcript.query(BusyLine)), None)
    if line is None:
        return False
    line.gave_up()
    return True
