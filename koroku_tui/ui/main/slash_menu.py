"""The list ``/`` opens above the prompt: the commands matching what follows the slash.

What matches ``/co``: a command named ``co`` first, then those whose name
starts with ``co``, then those that hold it; built-ins in the table's order
(``ui.main.commands``), then the custom ones by name; each on one line (a
description too wide ends in an ellipsis). A custom command's name and
description are someone's file: every hidden character shows as a
highlighted escape (``safe_text.visible``), never raw.

The list never takes the focus: the prompt keeps it, and hands the list the
keys it acts on while shown (``ui.main.slash``); a click on a row chooses it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from koroku_tui.agent.context.custom_commands import CustomCommand
from koroku_tui.ui.main.commands import BUILTIN_COMMANDS
from koroku_tui.ui.safe_text import visible

__all__ = ["Offer", "SlashMenu", "matching", "offers"]

_NAME_WIDTH = 16


@dataclass(frozen=True)
class Offer:
    """One row of the list: a command's name, what it does, and whose it is."""

    name: str
    description: str
    custom: CustomCommand | None = None
    """The file behind a custom command (``None``: a built-in)."""

    def row(self) -> Text:
        """``/name   description``; a custom command's ``/name   project · description``,
        hidden characters escaped. The scope comes first: a description too long for the
        line (or padded to end in "· user") cannot push it out of sight."""
        shown = visible(f"/{self.name}", "bold")
        shown.pad_right(max(1, _NAME_WIDTH - shown.cell_len))
        if self.custom is not None:
            shown.append(f"{self.custom.scope} · ", "italic dim")
        shown.append_text(visible(self.description or "(no description)", "dim"))
        return shown


def offers(custom: Iterable[CustomCommand]) -> list[Offer]:
    """Every command, built-ins first."""
    return [
        *(Offer(command.name, command.description) for command in BUILTIN_COMMANDS),
        *(Offer(command.name, command.description, command) for command in custom),
    ]


def matching(typed: str, every: list[Offer]) -> list[Offer]:
    """The offers for ``typed`` (what follows the slash): exact name, then prefix, then inside."""
    wanted = typed.casefold()

    def rank(offer: Offer) -> int:
        name = offer.name.casefold()
        return 0 if name == wanted else 1 if name.startswith(wanted) else 2

    return sorted((o for o in every if wanted in o.name.casefold()), key=rank)


class SlashMenu(OptionList):
    """The commands matching the prompt's ``/word``; shown only while there are some."""

    DEFAULT_CSS = """
    SlashMenu {
        height: auto;
        /* A share of the screen, not a fixed 10: on a short terminal the prompt stays. */
        max-height: 40%;
        display: none;
        border: round $accent;
        /* One line a command: a description too wide ends in an ellipsis. */
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    SlashMenu.-shown {
        display: block;
    }
    """

    can_focus = False

    def __init__(self, chosen: Callable[[Offer], object]) -> None:
        super().__init__(id="slash-menu", markup=False)
        self.shown: list[Offer] = []
        self._chosen = chosen
        """Called with the offer a click chose (the keys reach ``chosen`` through the prompt)."""

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """A click on a row chooses it, as Enter does."""
        event.stop()
        if event.option_index < len(self.shown):
            self._chosen(self.shown[event.option_index])

    def show(self, found: list[Offer]) -> None:
        """List ``found`` (the first highlighted), or hide the list when there are none."""
        if found != self.shown or not self.has_class("-shown"):
            self.shown = found
            self.set_options(Option(offer.row()) for offer in found)
            self.highlighted = 0 if found else None
        self.set_class(bool(found), "-shown")

    def hide(self) -> None:
        """Out of sight (what it listed is forgotten)."""
        self.shown = []
        self.remove_class("-shown")

    @property
    def is_open(self) -> bool:
        """The list is on screen."""
        return self.has_class("-shown")

    @property
    def chosen(self) -> Offer | None:
        """The highlighted offer."""
        index = self.highlighted
        return self.shown[index] if index is not None and index < len(self.shown) else None
