"""Small modal screens of the history screen: confirm a delete, rename, edit a memory, read.

Each is self-contained (its CSS is ``DEFAULT_CSS``), so another screen can
reuse it. Text from sessions reaches them as ``rich.text.Text`` only.
A confirmation starts on Cancel and takes no answer in its first moments
(``KeyGrace``), so letters typed on as it opens never confirm it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static, TextArea

from koroku_tui.text.safety import escape_hidden, unescape_hidden
from koroku_tui.ui.grace_dialog import GraceButton, GraceDialog
from koroku_tui.ui.own_keys import InOrderInput
from koroku_tui.ui.safe_text import sanitize

__all__ = ["ConfirmDialog", "MemoryDialog", "RenameDialog", "TextReader"]

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


class ConfirmDialog(GraceDialog[bool]):
    """A yes/no question; dismisses with ``True`` only on an explicit, deliberate confirmation.

    The focus starts on Cancel, so a stray Enter cancels, and no key or click
    (but Escape, which only cancels) counts until ``grace`` seconds (default
    0.6) have passed since the dialog was drawn and since the last one it
    ignored; keys typed before it was drawn are dropped. So ``y`` in a word
    typed on as it opened never answers.
    """

    DEFAULT_CSS = _DIALOG_CSS.format(name="ConfirmDialog")
    PARTS = ("confirm-dialog", "confirm-buttons")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "cancel", "Cancel", id="dialog.cancel"),
        Binding("y", "confirm", "Confirm", id="dialog.confirm"),
    ]

    def __init__(
        self, question: Text, confirm_label: str = "Delete", *, grace: float | None = None
    ) -> None:
        super().__init__(grace)
        self._question = question
        self._confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(self._question, markup=False)
            with Horizontal(classes="dialog-buttons", id="confirm-buttons"):
                yield GraceButton("Cancel (n)", id="cancel")
                yield GraceButton(f"{self._confirm_label} (y)", variant="error", id="confirm")

    def on_mount(self) -> None:
        # The safe answer has the focus, so a stray enter cancels.
        self.query_one("#cancel", Button).focus()

    @on(Button.Pressed, "#confirm")
    def action_confirm(self) -> None:
        """Answer yes."""
        self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Answer no."""
        self.dismiss(False)


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
            yield InOrderInput(self._title, id="rename-input", select_on_focus=True)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        """Close without renaming."""
        self.dismiss(None)


class MemoryDialog(ModalScreen[str | None]):
    """Asks for a memory's text (a new one, or an edit); ``None`` means cancelled.

    The text is shown as it is stored, with every hidden character a visible
    escape and lines joined (a memory is one line in the instruction); saved
    as typed, each such escape the character again, and left as it was stored
    when nothing was typed (an Enter must not change a memory's text).
    """

    DEFAULT_CSS = _DIALOG_CSS.format(name="MemoryDialog")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
    ]

    def __init__(self, question: str, text: str = "", *, limit: int) -> None:
        super().__init__()
        self._question = question
        self._stored = text
        self._text = " ".join(escape_hidden(text).split())
        self._limit = limit

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._question, markup=False)
            yield InOrderInput(
                self._text, id="memory-input", max_length=self._limit, select_on_focus=False
            )
            yield Static("Enter saves, Escape cancels.", classes="dialog-hint", markup=False)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        typed = event.value
        self.dismiss(self._stored if typed == self._text else unescape_hidden(typed))

    def action_cancel(self) -> None:
        """Close without saving."""
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
