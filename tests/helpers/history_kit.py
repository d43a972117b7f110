"""Driving the history screen's lists as a user does: letters act on a row only after a move."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import OptionList


async def move_to(pilot: Pilot[Any], widget: OptionList, index: int) -> None:
    """Focus ``widget`` and put its cursor on ``index`` with an arrow key, as a user would.

    The history screen's single-letter actions (rename, delete, export,
    fork...) act only once the user moved in the focused list: focusing it
    or setting its cursor from code is not enough, by design.
    """
    widget.focus()
    await pilot.pause()
    if index + 1 < widget.option_count:
        widget.highlighted = index + 1
        await pilot.press("up")
    elif index > 0:
        widget.highlighted = index - 1
        await pilot.press("down")
    else:
        widget.highlighted = index
        await pilot.press("home")
    await pilot.pause()
    assert widget.highlighted == index


def burst(app: App[Any], text: str) -> None:
    """Deliver ``text`` as a terminal does when it is typed fast: every key queued at once.

    Unlike ``Pilot.press``, nothing waits between keys, so a dialog a key
    opens is not on screen yet when the next keys arrive (English letters and
    spaces only).
    """
    for char in text:
        assert char == " " or (char.isascii() and char.isalpha()), char
        app.post_message(events.Key("space" if char == " " else char, char))
