"""How the history screen tells the App what the user did.

* Opening a session ends the screen: it is dismissed with ``OpenSession``
  (``None`` when the user just closes it). The App switches sessions in the
  ``push_screen`` callback.
* Renames and deletes (to the trash) happen while the screen stays open: the
  screen posts ``SessionRenamed`` / ``SessionDeleted``, which bubble from the
  screen to the App (``on_session_renamed`` / ``on_session_deleted``) at once,
  so the App can retitle or reset the main view before the user closes the
  history.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from koroku_tui.store import SessionInfo

__all__ = ["OpenSession", "SessionDeleted", "SessionRenamed"]


@dataclass(frozen=True, slots=True)
class OpenSession:
    """The screen's dismiss result: the user chose to open (resume) this session.

    After a fork at a message the user sent, ``prompt`` is that message's
    text: it goes into the prompt, to be edited and sent in the fork.
    ``message_id`` is the row the raw history's cursor was on (a search hit
    the user jumped to): the main view opens scrolled to it, marked.
    """

    session_id: int
    prompt: str | None = None
    message_id: int | None = None


class SessionRenamed(Message):
    """A session got a new title (``info`` is the session as stored now)."""

    def __init__(self, info: SessionInfo) -> None:
        super().__init__()
        self.info = info


class SessionDeleted(Message):
    """A session was deleted: moved to the trash (or removed for good, the trash emptied).

    When it was the App's current session, ``was_current`` is True and
    ``replacement_id`` is the fresh empty session the SessionManager made
    current in its place (the manager does that itself): the App should reset
    its transcript and show that session.
    """

    def __init__(self, session_id: int, *, was_current: bool, replacement_id: int | None) -> None:
        super().__init__()
        self.session_id = session_id
        self.was_current = was_current
        self.replacement_id = replacement_id
