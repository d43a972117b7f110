"""Messages typed while a turn runs: queued above the prompt, sent when the turn ends.

As in Claude Code and Gemini CLI. Enter during a turn (or a compaction, a
session switch...) adds the prompt's text to the queue, shown as one
``Queued: <first line>`` row each. Until it is sent a queued message can be
taken back: ↑ on an empty prompt puts the newest one back in the prompt to
edit (Enter queues it again), ``main.unqueue`` (ctrl+n) removes it.

When the job ends, what happens to the queue depends on how it ended:

- done: the queued messages go out as ONE message, joined by a blank line
  (Gemini CLI does the same). The user wrote them while seeing the same
  answer, so the model should read all of them before answering: a later
  "actually, don't" must reach it with the request it cancels, not a turn later.
- cancelled (Escape) or failed: nothing is sent. The messages go back into the
  prompt, before any draft, to be edited and sent (or not) by the user: the
  turn they followed did not happen as they expected. A message the store
  refused (the session busy in another window) comes first, as it was sent first.
- the app closing: they are added to ``unsent.txt`` in the Koroku home, with
  their session, and put back in the prompt at the next start, which says
  which session they were queued for (``restore_unsent``, ``ui.main.unsent``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Static

from koroku_tui.text.safety import escape_controls, escape_hidden
from koroku_tui.ui.main import unsent
from koroku_tui.ui.main.slash import as_typed
from koroku_tui.ui.main.unsent import UNSENT_FILENAME
from koroku_tui.ui.safe_text import literal, visible

if TYPE_CHECKING:
    from koroku_tui.ui.main.screen import MainScreen

__all__ = ["UNQUEUE_BINDING", "UNSENT_FILENAME", "MessageQueue", "QueuedMessages"]

logger = logging.getLogger(__name__)

UNQUEUE_BINDING = "main.unqueue"
"""The binding id of the key that removes the newest queued message."""

SHOWN_ROWS = 4
"""Queued messages listed one per row; past this many, a row says how many more."""

JOIN = "\n\n"


class Restored(NamedTuple):
    """What a start put back in the prompt from ``unsent.txt``, and the files it came from."""

    text: str
    """The prompt's text once restored: saved as ``blocks`` at quit if still untouched."""
    blocks: list[unsent.Unsent]
    """The kept queues the text was made of, each with the session it was queued for."""
    home: Path
    held: tuple[str, ...]
    """The taken files (names in ``home``), kept until the text is safe again (kept at
    quit, or sent): a window killed meanwhile gives them to the next start. Empty once
    released; the text and blocks stay, to tell the untouched text at quit."""


def key_of(screen: Screen[Any], binding_id: str) -> str | None:
    """The key of ``binding_id`` as the footer shows it (``keymap.toml`` may have moved it)."""
    for active in screen.active_bindings.values():
        if active.binding.id == binding_id:
            return screen.app.get_key_display(active.binding)
    return None


class QueuedMessages(Static):
    """The queue's rows above the prompt; hidden while it is empty."""

    DEFAULT_CSS = """
    QueuedMessages {
        display: none;
        height: auto;
        padding: 0 1;
        color: $text-muted;
    }
    QueuedMessages.-shown {
        display: block;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)

    def show(self, texts: list[str], remove_key: str) -> None:
        """Show ``texts`` (oldest first), or hide the rows when there are none."""
        self.set_class(bool(texts), "-shown")
        if not texts:
            self.update("")
            return
        shown = Text(no_wrap=True, overflow="ellipsis")
        for text in texts[:SHOWN_ROWS]:
            lines = text.splitlines() or [""]
            shown.append("Queued: ", style="bold")
            shown.append(visible(lines[0]))
            if len(lines) > 1:
                shown.append(f" (+{len(lines) - 1} lines)", style="dim")
            shown.append("\n")
        if len(texts) > SHOWN_ROWS:
            shown.append(f"… and {len(texts) - SHOWN_ROWS} more\n")
        hint = f"↑ edit · {remove_key} remove · sent when the turn ends"
        shown.append(literal(hint, style="dim italic"))
        self.update(shown)


class MessageQueue:
    """The queue flow of one ``MainScreen``: hold, take back, remove, then send or give back."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.texts: list[str] = []
        """The queued messages, oldest first (kept here: the rows go before the app's end)."""
        self._failed = False
        self._unsent: str | None = None
        self._escaped = False
        self._restored: Restored | None = None
        """What the start put back in the prompt (``restore_unsent``); ``None``: nothing."""

    def _redraw(self) -> None:
        key = key_of(self.screen, UNQUEUE_BINDING) or "ctrl+n"
        self.screen.query_one(QueuedMessages).show(self.texts, key)
        self.screen.refresh_bindings()  # the footer names the unqueue key only while one waits

    def hold(self, text: str) -> None:
        """Queue ``text``, to be sent when the running job ends."""
        self.texts.append(text)
        self._redraw()

    def take_key(self, key: str) -> bool:
        """↑ on an empty prompt: the newest queued message back in the prompt, out of the queue.

        The prompt hands its keys here (``Prompt.queued``) before acting on them.
        """
        prompt = self.screen.prompt
        if key != "up" or not self.texts or prompt.text:
            return False
        prompt.text = as_typed(self.texts.pop())
        prompt.move_cursor(prompt.document.end)
        self._redraw()
        return True

    def remove_last(self) -> None:
        """Drop the newest queued message: it will never be sent."""
        if not self.texts:
            self.screen.app.notify("No message is queued.")
            return
        text = self.texts.pop()
        self._redraw()
        first = (text.splitlines() or [""])[0]
        self.screen.app.notify(f"Removed from the queue, not sent: {escape_hidden(first[:60])}")

    def turn_failed(self, unsent: str | None = None) -> None:
        """The turn ended in an error; ``unsent``: its message, refused before it was stored."""
        self._failed = True
        if unsent is not None:
            self._unsent = unsent

    def cancelling(self) -> None:
        """The user cancels the running job (Escape): the queue will come back to the prompt."""
        self._escaped = True

    async def job_ended(self, *, cancelled: bool, failed: bool, job: str = "turn") -> None:
        """A turn or another job ended: send the queue as the next turn, or give it back.

        ``job`` names it in the notice ("The compaction failed: ...").
        """
        if self.screen.running:
            return  # another job started meanwhile: the queue waits for it
        if cancelled and not self._escaped:
            return  # the app closing (or a stop signal): ``save_unsent`` keeps the queue
        self._escaped = False
        failed, unsent = failed or self._failed, self._unsent
        self._failed, self._unsent = False, None
        queued, self.texts = self.texts, []
        self._redraw()
        if not (cancelled or failed):
            if queued:
                await self.screen.send(JOIN.join(queued))
            return
        if unsent is None and not queued:
            return
        prompt = self.screen.prompt
        parts = [as_typed(t) for t in ([unsent] if unsent is not None else []) + queued]
        if prompt.text.strip():
            parts.append(prompt.text)  # the draft: typed after all of them
        prompt.text = JOIN.join(parts)
        prompt.move_cursor(prompt.document.end)
        if queued:
            how = "was cancelled" if cancelled else "failed"
            some = "message is" if len(queued) == 1 else f"{len(queued)} messages are"
            self.screen.app.notify(
                f"The {job} {how}: your queued {some} back in the prompt, not sent."
            )

    # -- the app closing with a queue ---------------------------------------

    def save_unsent(self, home: Path, session_id: int | None, title: str) -> None:
        """The app is closing: add the queue and the prompt's draft to ``unsent.txt``, for
        the next start's prompt."""
        first = [t for t in (self.screen.turns.unstored, self._unsent) if t is not None]
        texts = first + self.texts
        prompt = self.screen.prompt
        blocks: list[unsent.Unsent] = []
        if self._restored is not None and prompt.text == self._restored.text:
            # Untouched since the start: kept as they came, each with the session it
            # was queued for (not as this window's draft: the next start says whose).
            blocks, draft = self._restored.blocks, ""
        else:
            typed = bool(prompt.text.strip()) and prompt.text != prompt.suggested
            draft = prompt.text if typed else ""
        if texts or draft:
            blocks = [*blocks, unsent.Unsent(texts, session_id, title, draft)]
        if not blocks:
            self.release_held()
            return
        try:
            for block in blocks:
                unsent.keep(home, block)
        except OSError as exc:  # a refusal is one sentence, already logged
            logger.warning(
                "could not keep the queued messages and draft (%s); they were: %r, %r",
                exc,
                texts,
                draft,
            )
            return  # the taken files stay: the next start restores what they held
        self.release_held()
        logger.info(
            "kept %d queued message(s)%s in %s",
            len(texts),
            " and the draft" if draft else "",
            UNSENT_FILENAME,
        )

    def release_held(self) -> None:
        """The restored text is safe again (kept at quit, or sent): its taken files go."""
        restored = self._restored
        if restored is not None and restored.held:
            self._restored = restored._replace(held=())
            unsent.release(restored.home, restored.held)

    def restore_unsent(self, home: Path, session_id: int | None) -> None:
        """At start: the queues windows closed with, back in the prompt (their file held till
        they are safe again: ``release_held``)."""
        taken = unsent.take(home)
        if taken.problem is not None:
            self.screen.app.notify(taken.problem, severity="warning", timeout=20, markup=False)
        if not taken.blocks:
            unsent.release(home, taken.held)  # nothing restored: nothing to keep them for
            return
        prompt = self.screen.prompt
        # Controls as the prompt takes a paste: the file is only a file in the home (the
        # agent's own commands can write it), and a hidden U+202E would make the prompt
        # show other text than Enter sends. What the prompt itself kept has none left.
        texts = [escape_controls(as_typed(t)) for b in taken.blocks for t in b.texts]
        drafts = [escape_controls(b.draft) for b in taken.blocks]  # as typed: never a message
        prompt.text = JOIN.join(p for p in (*texts, *drafts, prompt.text) if p.strip())
        prompt.move_cursor(prompt.document.end)
        self._restored = Restored(prompt.text, taken.blocks, home, taken.held)
        for block in taken.blocks:
            self.screen.app.notify(_restored(block, session_id), timeout=20)


def _restored(block: unsent.Unsent, session_id: int | None) -> str:
    """The notice for one restored queue: how many, and which session they were queued for."""
    n = len(block.texts)
    some = "1 queued message" if n == 1 else f"{n} queued messages"
    draft = bool(block.draft.strip())
    it = "it" if n + draft == 1 else "them"
    if draft:
        some = f"{some} and what you were typing" if n else "what you were typing"
    if block.session_id is None:
        whence = ""
    elif block.session_id == session_id:
        whence = " from this session"
    else:
        title = escape_hidden(block.title[:60]) if block.title else "untitled"
        whence = f' from session {block.session_id} "{title}" (not this one)'
    return f"Restored {some}{whence}, back in the prompt: Koroku closed before sending {it}."
