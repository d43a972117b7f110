"""Small modal screens of the history screen: confirm a delete, rename, read a row whole.

Each is self-contained (its CSS is ``DEFAULT_CSS``), so another screen can
reuse it. Text from sessions reaches them as ``rich.text.Text`` only.
A confirmation starts on Cancel and takes no answer in its first moments
(``KeyGrace``), so letters typed on as it opens never confirm it.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static, TextArea

from koroku_tui.ui.key_grace import IGNORED_NOTICE, KeyGrace
from koroku_tui.ui.safe_text import sanitize

__all__ = ["ConfirmDialog", "RenameDialog", "TextReader"]

_DIALOG_CSS = """
{name} {{
    align: center middle;
    background: $background 60%;
}}
{name} > Vertical {{
    width: 72;
    max-width: 90%;
    height: auto;
    padding: 1 2;
    border: thick $primary;
    background: $surface;
}}
{name} .dialog-buttons {{
    height: auto;
    align-horizontal: right;
    margin-top: 1;
}}
{name} .dialog-buttons Button {{
    margin-left: 2;
}}
"""


class ConfirmDialog(ModalScreen[bool]):
    """A yes/no question; dismisses with ``True`` only on an explicit, deliberate confirmation.

    The focus starts on Cancel, so a stray Enter cancels, and no key or click
    (but Escape, which only cancels) counts until ``grace`` seconds (default
    0.6) have passed since the dialog was drawn and since the last one it
    ignored; keys typed before it was drawn are dropped. So ``y`` in a word
    typed on as it opened never answers.
    """

    DEFAULT_CSS = _DIALOG_CSS.format(name="ConfirmDialog")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "cancel", "Cancel", id="dialog.cancel"),
        Binding("y", "confirm", "Confirm", id="dialog.confirm"),
    ]

    def __init__(
        self, question: Text, confirm_label: str = "Delete", *, grace: float | None = None
    ) -> None:
        super().__init__()
        self._question = question
        self._confirm_label = confirm_label
        self.grace = KeyGrace(grace)

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(self._question, markup=False)
            with Horizontal(classes="dialog-buttons", id="confirm-buttons"):
                yield GraceButton("Cancel (n)", id="cancel")
                yield GraceButton(f"{self._confirm_label} (y)", variant="error", id="confirm")

    def on_mount(self) -> None:
        # The safe answer has the focus, so a stray enter cancels.
        self.query_one("#cancel", Button).focus()

    def on_screen_resume(self) -> None:
        if self.grace.drawn_at is None:
            self.call_after_refresh(lambda: self.grace.drawn(time.monotonic()))

    def takes_input(self, at: float) -> bool:
        """Whether a key or click made at ``at`` may answer; says so the first time it may not."""
        if self.grace.takes(at):
            return True
        if self.grace.ignored == 1:
            notice = Static(Text(IGNORED_NOTICE, "italic"), id="confirm-ignored")
            self.query_one("#confirm-dialog").mount(notice, before="#confirm-buttons")
        return False

    def on_key(self, event: events.Key) -> None:
        # Keys reach the focused button first and bubble up here before the
        # app looks up the bindings (y, n, Enter on a button): stopping an
        # early one here keeps it from doing anything. Escape only ever
        # cancels, so it needs no wait.
        if event.key != "escape" and not self.takes_input(event.time):
            event.prevent_default()
            event.stop()

    @on(Button.Pressed, "#confirm")
    def action_confirm(self) -> None:
        """Answer yes."""
        self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Answer no."""
        self.dismiss(False)


class GraceButton(Button):
    """A confirmation's button: a click counts only once the dialog takes input."""

    async def _on_click(self, event: events.Click) -> None:
        screen = self.screen
        if isinstance(screen, ConfirmDialog) and not screen.takes_input(event.time):
            # Textual then skips Button's own click handler: no press.
            event.prevent_default()
            event.stop()


class RenameDialog(ModalScreen[str | None]):
    """Asks for a new title; ``None`` means cancelled, ``""`` means "derive it again"."""

    DEFAULT_CSS = _DIALOG_CSS.format(name="RenameDialog")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
    ]

    def __init__(self, title: str) -> None:
        super().__init__()
        self._title = sanitize(title)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Rename the session (leave it empty to use its first message):")
            yield Input(self._title, id="rename-input", select_on_focus=True)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        """Close without renaming."""
        self.dismiss(None)


class TextReader(ModalScreen[None]):
    """A whole message or summary, read-only and selectable for copying."""

    DEFAULT_CSS = """
    TextReader {
        align: center middle;
        background: $background 60%;
    }
    TextReader > Vertical {
        width: 90%;
        height: 90%;
        border: thick $primary;
        background: $surface;
    }
    TextReader #reader-title {
        padding: 0 1;
        text-style: bold;
    }
    TextReader TextArea {
        height: 1fr;
        border: none;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,space", "close", "Close", id="reader.close"),
    ]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self._title = sanitize(title)
        self._body = sanitize(body)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self._title), id="reader-title")
            # TextArea takes plain text: nothing in it is ever parsed as markup.
            yield TextArea(self._body, read_only=True, soft_wrap=True, id="reader-body")

    def action_close(self) -> None:
        """Back to the history."""
        self.dismiss(None)
