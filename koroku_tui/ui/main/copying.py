"""Copying an answer: the text selected with the mouse (ctrl+c), or the last answer whole.

Both go to the clipboard through Textual (``App.copy_to_clipboard``: the
terminal's OSC 52, which tmux passes on with ``set-clipboard on``). The last
answer is read from the store, as the transcript shows it (after a rewind,
the answer the conversation continues from), so it is there whether or not
its page is mounted: every answer text of the newest turn that has one,
after the message it answers, cleaned of terminal escape sequences as the
screen shows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from koroku_tui.events import SessionEvent
from koroku_tui.events.views import Said, part_views
from koroku_tui.store import SessionManager, StoreError
from koroku_tui.ui.main.page_reading import PageReplay
from koroku_tui.ui.main.session_view import PAGE_SIZE
from koroku_tui.ui.safe_text import sanitize

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["copy_last_answer", "copy_selection", "last_answer"]


def _typed(event: SessionEvent) -> bool:
    """True for a message the user typed (not a step's tool results)."""
    return any(isinstance(v, Said) and not v.thought and v.text for v in part_views(event))


async def last_answer(store: SessionManager) -> str | None:
    """The newest answer: its turn's step texts, blank-line apart (None: no answer yet).

    A turn still running (or ended) without any text gives the turn before.
    """
    _page, events = await PageReplay.read(store, limit=PAGE_SIZE)
    texts: list[str] = []
    for event in reversed(events):
        if not isinstance(event, SessionEvent):  # a summary, a rewind, an error
            if texts:
                break
            continue
        if event.role == "user" and _typed(event):
            if texts:
                break
            continue  # a turn with no answer yet (running, or cut): the one before
        if event.role == "model" and event.text:
            texts.append(sanitize(event.text))
    return "\n\n".join(reversed(texts)) or None


async def copy_last_answer(app: App[Any], store: SessionManager) -> None:
    """Put the last answer on the clipboard and say so (or why not)."""
    try:
        text = await last_answer(store)
    except StoreError as exc:
        app.notify(str(exc), severity="error")
        return
    if text is None:
        app.notify("There is no answer to copy yet.")
        return
    app.copy_to_clipboard(text)
    app.notify(f"Copied the last answer ({len(text):,} characters).")


def copy_selection(app: App[Any], text: str) -> None:
    """Put text selected on screen on the clipboard and say so."""
    app.copy_to_clipboard(text)
    app.notify(f"Copied {len(text):,} characters.")
