"""The palette's "Show instructions": what the model is told from the instruction files.

Each file used, in the order of the system instruction, under a line with
its path, size and scope, its text whole (as sent: cut where the cap cut
it) with every hidden character a highlighted ``\\u`` escape, as the model
receives it. Then the files refused, left out past the cap, or not used
because the folder is not trusted. Read-only; Escape closes it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from koroku_tui.agent.context.instruction_files import (
    InstructionFile,
    InstructionFiles,
    LoadedInstructions,
)
from koroku_tui.agent.context.project_files import size_text
from koroku_tui.text.safety import hidden_characters
from koroku_tui.ui.safe_text import literal, visible

__all__ = ["InstructionsView", "file_header"]


def file_header(file: InstructionFile, loaded: LoadedInstructions) -> Text:
    """``~/proj/AGENTS.md · 2.1 KB · project``, then what is odd about it (cut, not UTF-8)."""
    header = visible(loaded.shown(file.path), "bold")
    read = file.read
    if read.refused is not None:
        header.append(literal(f" · not read: it {read.refused}", "italic"))
        return header
    header.append(f" · {size_text(read.size)} · {file.scope}")
    if read.cut:
        header.append(f" · cut at the {size_text(loaded.cap)} limit", style="bold")
    if read.undecodable:
        header.append(" · not UTF-8: bad bytes shown as �", style="italic")
    if hidden := hidden_characters(read.text):
        header.append(f" · ⚠ hidden characters ({', '.join(hidden[:6])}) shown as escapes")
    return header


class InstructionsView(ModalScreen[None]):
    """The instruction files as last read, whole and with hidden characters shown."""

    DEFAULT_CSS = """
    InstructionsView {
        align: center middle;
        background: $background 60%;
    }
    InstructionsView > Vertical {
        width: 90%;
        height: 90%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    InstructionsView #instructions-title {
        text-style: bold;
    }
    InstructionsView .instructions-text {
        margin: 0 0 1 2;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="instructions.close"),
    ]

    def __init__(self, source: InstructionFiles, loaded: LoadedInstructions) -> None:
        super().__init__()
        self.source = source
        self.loaded = loaded

    def compose(self) -> ComposeResult:
        loaded = self.loaded
        with Vertical():
            yield Static(Text("Instructions the model is told"), id="instructions-title")
            with VerticalScroll(id="instructions-body"):
                if not loaded.files:
                    yield Static(literal(self._none_found()), id="instructions-none")
                for file in loaded.files:
                    yield Static(file_header(file, loaded), classes="instructions-file")
                    if file.used:
                        yield Static(visible(file.read.text), classes="instructions-text")
                if loaded.left_out:
                    left = ", ".join(loaded.shown(path) for path in loaded.left_out)
                    said = f"Left out, past the {size_text(loaded.cap)} limit: {left}"
                    yield Static(literal(said, "bold"), id="instructions-left-out")
                if loaded.ignored:
                    ignored = ", ".join(loaded.shown(path) for path in loaded.ignored)
                    said = (
                        f"Not used, this folder is not trusted: {ignored}. Trusting it "
                        "(the prompt at start, or trusted_folders in config.toml) uses them."
                    )
                    yield Static(literal(said, "italic"), id="instructions-ignored")
            yield Static(Text("Escape closes", "italic"))

    def _none_found(self) -> str:
        source = self.loaded
        names = ", ".join(self.source.names) or "(no names configured)"
        where = [source.shown(self.source.workspace)]
        if self.source.personal_dir is not None:
            where.insert(0, source.shown(self.source.personal_dir))
        return (
            f"No instruction files are used. Koroku looks for {names} in "
            f"{' and '.join(where)} (and the folders up to the repository root); "
            "[instructions] files in config.toml names others."
        )

    def action_close(self) -> None:
        """Back to the conversation."""
        self.dismiss(None)
