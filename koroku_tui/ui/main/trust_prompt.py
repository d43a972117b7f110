"""The trust prompt: may this project's files steer Koroku?

Shown once per start in an untrusted folder that holds project files
(instruction files, ``.koroku/config.toml``): a cloned repository's
``AGENTS.md`` can try to steer the model, its config can name commands.
The prompt lists each file with its size and first lines, every hidden
character a highlighted escape and flagged in words, and offers Trust, Not
now (asked again at the next start) and Never (never asked again for the
folder). It opens on Not now, and like the approval dialog it takes no key
or click in its first moments (``KeyGrace``): letters typed as it opens
never trust a folder. Escape always means Not now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Static

from koroku_tui.agent.context.instruction_files import INSTRUCTIONS_CAP
from koroku_tui.agent.context.project_files import FileText, read_project_text, size_text
from koroku_tui.config.files import PROJECT_CONFIG, shown_path
from koroku_tui.text.safety import hidden_characters
from koroku_tui.ui.grace_dialog import GraceButton, GraceDialog
from koroku_tui.ui.safe_text import literal, visible

__all__ = [
    "FIRST_LINES",
    "TRUST_KEYS",
    "FilePreview",
    "TrustAnswer",
    "TrustScreen",
    "takes_effect",
]

TrustAnswer = Literal["trust", "not_now", "never"]
_ANSWERS: dict[str, TrustAnswer] = {"trust": "trust", "not_now": "not_now", "never": "never"}

FIRST_LINES = 4
"""Lines of each file shown in the prompt."""
LINE_CHARS = 160
"""A longer first line is cut (with "…"): the prompt lists files, the view shows them whole."""

TRUST_KEYS = "t trust · n or Esc not now (asked again next start) · x never ask again"


@dataclass(frozen=True)
class FilePreview:
    """What the prompt shows of one project file."""

    path: Path
    read: FileText | None
    """``None``: the file went away since it was found."""

    @classmethod
    def of(cls, path: Path, root: Path) -> FilePreview:
        """Read ``path`` as a project file of ``root`` (links out of it refused)."""
        return cls(path, read_project_text(path, limit=INSTRUCTIONS_CAP, root=root))

    @property
    def hidden(self) -> list[str]:
        """``U+XXXX`` of each hidden character in what was read."""
        return hidden_characters(self.read.text) if self.read is not None else []

    def first_lines(self) -> list[str]:
        """Its first lines (each cut at ``LINE_CHARS``), or ``[]``."""
        if self.read is None:
            return []
        lines = self.read.text.splitlines()[:FIRST_LINES]
        return [line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…" for line in lines]


def takes_effect(paths: Sequence[Path]) -> str:
    """When trusting counts, for the files there are: instruction files from the next
    message; a ``.koroku/config.toml`` at the next start (settings are read once, as
    Koroku starts, so none of it is applied to the running app)."""
    configs = [path for path in paths if path.parts[-2:] == PROJECT_CONFIG.parts]
    said = ["its instructions apply from your next message"] if len(configs) < len(paths) else []
    if configs:
        said.append("its .koroku/config.toml takes effect at the next start, not in this one")
    return "; ".join(said)


def _header(preview: FilePreview, home: Path | None) -> Text:
    header = visible(shown_path(preview.path, home), "bold")
    read = preview.read
    if read is None:
        header.append(" · gone since it was found", style="italic")
    elif read.refused is not None:
        header.append(literal(f" · not read: it {read.refused}", "italic"))
    else:
        more = " (first part read)" if read.cut else ""
        header.append(f" · {size_text(read.size)}{more}")
        if preview.hidden:
            header.append(" · ⚠ hidden characters", style="bold")
    return header


class TrustScreen(GraceDialog[TrustAnswer]):
    """Trust the folder's project files, not now, or never; dismissed with the answer."""

    DEFAULT_CSS = """
    TrustScreen {
        align: center middle;
        background: $background 60%;
    }
    TrustScreen > Vertical {
        width: 96;
        max-width: 100%;
        height: auto;
        max-height: 100%;
        padding: 0 1;
        border: thick $warning;
        background: $surface;
    }
    TrustScreen #trust-files {
        height: auto;
        margin: 1 0;
    }
    /* Too many files for the screen: the list scrolls, the buttons stay in view. */
    TrustScreen > Vertical.-fill {
        height: 100%;
    }
    TrustScreen > Vertical.-fill #trust-files {
        height: 1fr;
    }
    TrustScreen .trust-first-lines {
        padding-left: 2;
        color: $text-muted;
    }
    TrustScreen .trust-hidden {
        padding-left: 2;
        text-style: bold;
        color: $warning;
    }
    TrustScreen #trust-buttons {
        height: auto;
        align-horizontal: right;
    }
    TrustScreen #trust-buttons Button {
        margin-left: 2;
    }
    """
    PARTS = ("trust-dialog", "trust-buttons")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "answer('trust')", "Trust", id="trust.trust"),
        Binding("n,escape", "answer('not_now')", "Not now", id="trust.not_now"),
        Binding("x", "answer('never')", "Never", id="trust.never"),
    ]

    def __init__(
        self,
        folder: Path,
        files: list[FilePreview],
        *,
        config_file: Path,
        home: Path | None = None,
        in_repository: bool = True,
        grace: float | None = None,
    ) -> None:
        super().__init__(grace)
        self.folder = folder
        self.files = files
        self.config_file = config_file
        self.home = home
        self.in_repository = in_repository

    def compose(self) -> ComposeResult:
        where = shown_path(self.folder, self.home)
        with Vertical(id="trust-dialog"):
            title = literal("Trust the project files in ")
            title.append_text(visible(where, "bold"))
            title.append("?")
            yield Static(title, id="trust-title")
            restricting = (
                ", but for the deny and ask rules of a .koroku/config.toml (they only restrict)"
                if any(p.path.parts[-2:] == PROJECT_CONFIG.parts for p in self.files)
                else ""
            )
            yield Static(
                Text(
                    "These files would steer Koroku: instruction files are told to the model, "
                    ".koroku/config.toml changes settings. A cloned repository's files are "
                    "someone else's text: trust only a project you know. Until then they are "
                    f"not used{restricting}."
                ),
                id="trust-why",
            )
            with VerticalScroll(id="trust-files"):
                for preview in self.files:
                    yield Static(_header(preview, self.home), classes="trust-file")
                    if lines := preview.first_lines():
                        shown = Text("\n").join(visible(line) for line in lines)
                        yield Static(shown, classes="trust-first-lines")
                    if hidden := preview.hidden:
                        warning = (
                            f"⚠ holds hidden characters ({', '.join(hidden[:6])}"
                            f"{' and more' if len(hidden) > 6 else ''}), shown as escapes: "
                            "they can hide text from you, not from the model."
                        )
                        yield Static(Text(warning), classes="trust-hidden")
            yield Static(Text(self._scope_note(where)), id="trust-scope")
            yield Static(Text(TRUST_KEYS, "italic"), id="trust-keys")
            with Horizontal(id="trust-buttons"):
                yield GraceButton(Content("Trust [t]"), id="trust", variant="warning")
                yield GraceButton(Content("Not now [n]"), id="not_now", variant="primary")
                yield GraceButton(Content("Never [x]"), id="never")

    def _scope_note(self, where: str) -> str:
        span = (
            "the repository's root, which the project files span: its subfolders too"
            if self.in_repository
            else "this folder and its subfolders"
        )
        effect = takes_effect([preview.path for preview in self.files])
        return (
            f"Trust adds {where} ({span}) to trusted_folders in "
            f"{shown_path(self.config_file, self.home)}: {effect}. Never adds it to "
            "ignored_folders."
        )

    def on_mount(self) -> None:
        self.query_one("#not_now", Button).focus()  # a stray Enter answers "not now"
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.query_one("#trust-dialog").remove_class("-fill")  # measured again at its own size
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        # Laid out at its natural height, the dialog may run past the screen,
        # its buttons out of sight: then it takes the screen and the list scrolls.
        dialog = self.query_one("#trust-dialog")
        buttons = self.query_one("#trust-buttons")
        if buttons.region.bottom > dialog.region.bottom:
            dialog.add_class("-fill")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id:
            self.action_answer(event.button.id)

    def action_answer(self, answer: str) -> None:
        """Dismiss with ``answer`` (``trust``, ``not_now`` or ``never``)."""
        if (chosen := _ANSWERS.get(answer)) is not None:
            self.dismiss(chosen)
