"""A modal dialog whose first moments take no answer (``KeyGrace``), and its buttons.

The history screen's confirmations (delete, empty the trash) and the trust
prompt are such dialogs: no key or click counts (Escape, which only ever
means "no", aside) until the dialog has been on screen for a moment and
since the last input it ignored, and the first input ignored is said in
the dialog, above its buttons.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from rich.text import Text
from textual import events
from textual.app import App
from textual.errors import NoWidget
from textual.geometry import Region
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Button, Static

from koroku_tui.ui.key_grace import IGNORED_NOTICE, KeyGrace

__all__ = ["GraceButton", "GraceDialog", "Press", "click_time"]

AnswerT = TypeVar("AnswerT")


@dataclass(frozen=True)
class Press:
    """A mouse button pressed, as the terminal read it: when, and on which widget.

    Kept by the App (``KorokuApp.press``) as it handles the press: the click
    Textual makes of it later carries the time it was handled instead.
    """

    at: float
    widget: Widget | None

    @classmethod
    def read(cls, app: App[Any], event: events.MouseDown) -> Press:
        """The press ``event``, on the widget under it now (the one its click goes to)."""
        try:
            widget, _ = app.get_widget_at(event.x, event.y)
        except NoWidget:
            return cls(event.time, None)
        return cls(event.time, widget)


def click_time(widget: Widget, click: events.Click) -> float:
    """When ``click`` on ``widget`` was made: when its button went down.

    Textual stamps a click when it handles the button's release, and again as it
    hands it to ``widget``: a click handled late (held behind keys typed before it,
    ``ui.key_order``, or the app busy) looked made after a dialog drawn meanwhile,
    and answered it. A key keeps the time it was typed; a click now does too.
    """
    press = getattr(widget.app, "press", None)
    if isinstance(press, Press) and press.widget is widget:
        return min(press.at, click.time)
    return click.time


class GraceDialog(ModalScreen[AnswerT]):
    """A dialog that ignores its first moments' keys and clicks; subclasses name ``PARTS``."""

    PARTS: ClassVar[tuple[str, str]]
    """The ids of the dialog's box and of its buttons' row: the notice goes above the row,
    with the box's name (``"confirm"`` -> ``#confirm-ignored``)."""

    def __init__(self, grace: float | None = None) -> None:
        super().__init__()
        self.grace = KeyGrace(grace)

    def render_lines(self, crop: Region) -> list[Strip]:
        """Draw the dialog; the first time, note that it is now on screen.

        Stamped as the first frame is composed, in the step that writes it to
        the terminal: a key pressed by someone who saw the dialog is always
        later. (A callback after the refresh may run after such a key.)
        """
        if self.grace.drawn_at is None:
            self.grace.drawn(time.monotonic())
        return super().render_lines(crop)

    def takes_input(self, at: float) -> bool:
        """Whether a key or click made at ``at`` may answer; says so the first time it may not."""
        if self.grace.takes(at):
            return True
        if self.grace.ignored == 1:
            box, buttons = self.PARTS
            name = box.removesuffix("-dialog")
            notice = Static(Text(IGNORED_NOTICE, "italic"), id=f"{name}-ignored")
            self.query_one(f"#{box}").mount(notice, before=f"#{buttons}")
        return False

    def on_key(self, event: events.Key) -> None:
        # Keys reach the focused button first and bubble up here before the
        # app looks up the bindings: stopping an early one here keeps it from
        # doing anything. Escape only ever says no, so it needs no wait.
        if event.key != "escape" and not self.takes_input(event.time):
            event.prevent_default()
            event.stop()


class GraceButton(Button):
    """A button of a :class:`GraceDialog`: a click counts only once the dialog takes input."""

    async def _on_click(self, event: events.Click) -> None:
        screen = self.screen
        if isinstance(screen, GraceDialog) and not screen.takes_input(click_time(self, event)):
            event.prevent_default()  # Textual then skips Button's own click handler: no press
            event.stop()
