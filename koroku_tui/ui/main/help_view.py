"""``/help``: the keys of the conversation and every slash command, each with what it does.

The keys are the screen's active ones as the key map left them (a remapped
key shows as remapped); the commands are the built-in table's
(``ui.main.commands``) and the custom commands last read. Read-only; Escape
closes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from koroku_tui.ui.main.commands import BUILTIN_COMMANDS
from koroku_tui.ui.safe_text import visible

if TYPE_CHECKING:
    from koroku_tui.ui.main.screen import MainScreen

__all__ = ["HelpView", "show_help"]

_COLUMN = 18


def show_help(screen: MainScreen) -> None:
    """Open the help over ``screen``, with its keys and commands as they are now."""
    screen.app.push_screen(HelpView(_keys(screen), _commands(screen)))


def _row(shown: Text, name: Text, description: Text) -> None:
    """``name  description`` as one line of ``shown``, the names in a column."""
    name.pad_right(max(2, _COLUMN - name.cell_len))
    shown.append_text(name)
    shown.append_text(description)
    shown.append("\n")


def _keys(screen: MainScreen) -> Text:
    shown, seen = Text(), set()
    for active in screen.active_bindings.values():
        binding = active.binding
        ours = (binding.id or "").startswith("main.") or binding.action == "command_palette"
        if not ours or not binding.description or binding.description in seen:
            continue  # the prompt's editing keys are a text box's; one action is listed once
        seen.add(binding.description)
        _row(shown, Text(screen.app.get_key_display(binding), "bold"), Text(binding.description))
    return shown


def _commands(screen: MainScreen) -> Text:
    shown = Text()
    for command in BUILTIN_COMMANDS:
        _row(shown, Text(f"/{command.name}", "bold"), Text(command.description))
    for custom in screen.slash.custom.values():  # whose it is first, as in the slash list
        described = Text(f"{custom.scope} · ", "italic dim")
        _row(shown, visible(f"/{custom.name}", "bold"), described + visible(custom.description))
    return shown


class HelpView(ModalScreen[None]):
    """The keys and the commands, in two tables."""

    DEFAULT_CSS = """
    HelpView {
        align: center middle;
        background: $background 60%;
    }
    HelpView > Vertical {
        width: 90%;
        height: 90%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    HelpView .help-title {
        text-style: bold;
        margin: 1 0 0 0;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="help.close"),
    ]

    def __init__(self, keys: Text, commands: Text) -> None:
        super().__init__()
        self.keys = keys
        self.commands = commands

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll(id="help-body"):
                yield Static(Text("Keys"), classes="help-title")
                yield Static(self.keys, id="help-keys")
                yield Static(
                    Text("Commands (type / at the start of the prompt)"), classes="help-title"
                )
                yield Static(self.commands, id="help-commands")
            yield Static(
                Text("Escape closes · ctrl+p: the palette, the same commands by name", "italic")
            )

    def action_close(self) -> None:
        """Back to the conversation."""
        self.dismiss(None)
