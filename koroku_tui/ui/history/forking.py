"""Where ``f`` on a row of the raw history forks the session.

A fork copies a session's conversation before one of the user's messages
(``SessionManager.fork(session, before)``), or all of it. So ``f`` on:

* a message the user sent forks before it, and its text goes to the prompt
  (to say it differently in the fork);
* any other row (an answer, a tool call, a summary) forks after that row's
  turn: before the next message the user sent, or the whole conversation
  when there is none;
* on a branch a rewind abandoned, the same, within that branch (a fork
  continues it); a row after the branch's last message of the user's is
  refused with a sentence (there is no point in that branch to fork at).
"""

from __future__ import annotations

from dataclasses import dataclass

from koroku_tui.events import SessionEvent
from koroku_tui.store import StoredMessage
from koroku_tui.ui.history.message_text import HistoryMoment

__all__ = ["ForkPoint", "fork_point"]


@dataclass(frozen=True, slots=True)
class ForkPoint:
    """``before``: the user message the fork stops before (``None``: all of it)."""

    before: int | None
    what: str
    """The point in words, for the notice: "before #12", "the whole conversation"."""
    prompt: str | None = None
    """The text to put in the fork's prompt."""


def _sent_by_user(message: StoredMessage) -> bool:
    event = message.event
    return isinstance(event, SessionEvent) and event.is_real_user_turn and bool(event.parts)


def fork_point(
    message: StoredMessage, shown: list[StoredMessage], moment: HistoryMoment
) -> ForkPoint | str:
    """Where to fork for ``f`` on ``message``; a sentence when there is nowhere.

    ``shown`` are the rows loaded in the view, oldest first: always every row
    after ``message`` (the view loads the tail first and pages back).
    """
    if _sent_by_user(message):
        event = message.event
        text = event.text if isinstance(event, SessionEvent) else ""
        return ForkPoint(message.id, f"before #{message.id}", text or None)
    for later in shown:
        if later.id <= message.id:
            continue
        if later.rewind is not None and later.rewind.before_message_id <= message.id:
            # The conversation went back to before this row: what follows is
            # another line (merged spans cannot tell lines apart).
            break
        if _sent_by_user(later):
            return ForkPoint(later.id, f"after #{message.id} (before #{later.id})")
    if moment.abandoned_span(message) is not None:
        return (
            f"#{message.id} is on a branch a rewind abandoned, after its last message of "
            "yours: press f on one of your messages there to fork that branch."
        )
    return ForkPoint(None, "the whole conversation")
