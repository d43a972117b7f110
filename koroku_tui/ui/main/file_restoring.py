"""Asking about files when rewinding or forking, and undoing a restore.

The logic is the agent's (``koroku_tui.agent.tools.file_restore``: the plan,
the restore, the undo; ``rewound_commands``: which turns ran commands); this
module only shows and asks. :class:`RestoreChoice` offers "conversation only"
or "conversation and files" and names the turns whose commands no restore can
take back; each file changed since Koroku wrote it is asked about with its
diff (``ConfirmDialog``, which takes no key in its first moments).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from koroku_tui.agent.tools.change_preview import FileChange
from koroku_tui.agent.tools.file_restore import (
    FileToRestore,
    RestorePlan,
    RestoreReport,
    plan_rewind,
    plan_undo,
    restore_diff,
    restore_files,
)
from koroku_tui.agent.tools.rewound_commands import turns_that_ran_commands
from koroku_tui.store import StoredMessage, StoreError
from koroku_tui.text.safety import escape_hidden
from koroku_tui.ui.history.dialogs import ConfirmDialog
from koroku_tui.ui.key_bar import KeyBar
from koroku_tui.ui.main.rewind import first_line
from koroku_tui.ui.safe_text import literal

if TYPE_CHECKING:
    from koroku_tui.ui.main.screen import MainScreen

__all__ = ["FileRestoring", "RestoreChoice"]

_SHOWN_FILES = 8
"""Files (or turns, or refusals) named in the choice and the toast; the rest are counted."""


class RestoreChoice(ModalScreen[bool | None]):
    """Conversation only (``False``) or conversation and files (``True``); Escape: ``None``."""

    DEFAULT_CSS = """
    RestoreChoice { align: center middle; background: $background 60%; }
    RestoreChoice > Vertical {
        width: 90; max-width: 95%; height: auto; max-height: 80%;
        padding: 1 2; border: thick $accent; background: $surface;
    }
    RestoreChoice Static { margin-bottom: 1; }
    RestoreChoice OptionList { height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Cancel", id="restore.close"),
        Binding("c", "choose(False)", "Conversation only", id="restore.conversation"),
        Binding("f", "choose(True)", "Conversation and files", id="restore.files"),
    ]

    def __init__(self, heading: str, plan: RestorePlan, commands: list[StoredMessage]) -> None:
        super().__init__()
        self.heading = heading
        self.plan = plan
        self.commands = commands

    def compose(self) -> ComposeResult:
        with Vertical(id="restore-choice"):
            yield Static(literal(self.heading, "bold"))
            yield Static(files_said(self.plan), id="restore-files")
            if self.commands:
                yield Static(commands_said(self.commands), id="restore-commands")
            yield OptionList(
                Option("Conversation only (c)", id="conversation"),
                Option("Conversation and files (f)", id="files", disabled=not self.plan.files),
                id="restore-options",
            )
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected, "#restore-options")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_choose(event.option.id == "files")

    def action_choose(self, files: bool) -> None:
        """Close with the choice (files only when there are some to put back)."""
        self.dismiss(files and bool(self.plan.files))

    def action_close(self) -> None:
        self.dismiss(None)


def files_said(plan: RestorePlan) -> Text:
    """Which files "conversation and files" would put back, and which were changed since."""
    if not plan.files:
        return literal("No file written by these turns needs putting back.")
    possible = [item for item in plan.files if item.problem is None]
    said = (
        f"Files these turns wrote (put back as they were): {_named(possible)}" if possible else ""
    )
    if plan.conflicts:
        said += (
            f" Changed since Koroku wrote them (you are asked about each): {_named(plan.conflicts)}"
        )
    if plan.blocked:
        said += (
            " These turns wrote files that cannot be put back now (a link, a folder...: "
            f"each is said after): {_named(plan.blocked)}"
        )
    return literal(said.strip())


def _named(items: Sequence[FileToRestore]) -> str:
    """The first files' paths, escaped, the rest counted: "a, b and 3 more."."""
    names = ", ".join(escape_hidden(item.shown) for item in items[:_SHOWN_FILES])
    more = len(items) - _SHOWN_FILES
    return f"{names} and {more} more." if more > 0 else f"{names}."


def commands_said(commands: list[StoredMessage]) -> Text:
    """The turns that ran commands: their changes cannot be put back."""
    turns = "; ".join(f"#{turn.id} {first_line(turn, 40)}" for turn in commands[:_SHOWN_FILES])
    more = len(commands) - _SHOWN_FILES
    turns += f"; and {more} more" if more > 0 else ""
    return literal(f"These turns ran commands, whose changes cannot be put back: {turns}", "bold")


class ConflictQuestion(ConfirmDialog):
    """Put one changed file back (``y``) or keep it (``n``); Escape keeps it and every
    changed file after it, unasked (``stopped``): a thousand questions need a way out."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "keep_rest", "Keep this and the rest", id="restore.keep_rest"),
        Binding("n", "cancel", "Keep it", id="restore.keep"),
        Binding("y", "confirm", "Put it back", id="restore.put_back"),
    ]

    stopped = False
    """Escape was pressed: ask about no more files."""

    def action_keep_rest(self) -> None:
        """Keep this file and the rest as they are."""
        self.stopped = True
        self.dismiss(False)


def conflict_question(item: FileToRestore, change: FileChange, place: str = "") -> Text:
    """The question about one changed file, with ``change``: what restoring it would do.
    ``place``: which of the changed files it is ("2 of 40: "), when there are several."""
    text = literal(
        f"{place}{escape_hidden(item.shown)} was changed since Koroku wrote it. Put it back "
        "as it was anyway (y), keep yours (n), or keep it and every other (escape)? "
        "Restoring changes it so:\n",
        "bold",
    )
    if change.unreadable is not None:
        text.append_text(literal(change.unreadable))
    for line in change.lines:
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
        text.append_text(literal("\n" + escape_hidden(line), style))
    if change.more_lines:
        text.append_text(literal(f"\n… {change.more_lines:,} more lines", "dim"))
    return text


class FileRestoring:
    """The file side of one ``MainScreen``'s rewind and fork, and "Undo file restore"."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen

    @property
    def workspace(self) -> Path:
        """The folder the file tools work in (the instruction files' project folder)."""
        return self.screen.koroku.parts.instruction_files.workspace

    async def ask(self, message: StoredMessage, fork: bool) -> RestorePlan | Literal[False] | None:
        """Ask what goes back to before ``message``: a plan (files too), ``False``
        (conversation only) or ``None`` (cancelled). Nothing to ask about: ``False``."""
        store = self.screen.koroku.store
        assert store is not None
        session = None if not fork else message.session_id
        plan = await plan_rewind(store, self.workspace, message.id, session)
        spec_for = self.screen.koroku.parts.tools.spec_for
        commands = await turns_that_ran_commands(store, message.id, spec_for, session)
        if not plan.files and not commands:
            return False
        verb = "Fork at" if fork else "Rewind to before"
        heading = f"{verb} #{message.id}: the conversation only, or its files too?"
        choice = await self.screen.app.push_screen_wait(RestoreChoice(heading, plan, commands))
        if choice is None:
            return None
        return plan if choice else False

    async def restore(self, plan: RestorePlan) -> RestoreReport:
        """Put back the plan's files, asking (with its diff) about each one changed since."""
        overwrite = set()
        grace = self.screen.koroku.parts.approval_grace
        conflicts = plan.conflicts
        for number, item in enumerate(conflicts, 1):
            # A diff of large files takes seconds: never on the UI's loop.
            change = await asyncio.to_thread(restore_diff, item)
            place = f"{number} of {len(conflicts)}: " if len(conflicts) > 1 else ""
            question = conflict_question(item, change, place)
            dialog = ConflictQuestion(question, "Put it back", grace=grace)
            if await self.screen.app.push_screen_wait(dialog):
                overwrite.add(item.path)
            if dialog.stopped:
                break
        store = self.screen.koroku.store
        assert store is not None
        return await restore_files(store, self.workspace, plan, overwrite=overwrite)

    async def put_back(self, plan: RestorePlan) -> None:
        """Restore ``plan`` (asking about changed files) and say what was done, or why not."""
        try:
            report = await self.restore(plan)
        except StoreError as exc:  # another window holds the session, the disk is full...
            self.screen.app.notify(escape_hidden(f"Files: {exc}"), severity="error", markup=False)
            return
        self.tell(report)

    def tell(self, report: RestoreReport) -> None:
        """Say what a restore did (one toast; the first files left alone named, the rest
        counted: a toast of a thousand sentences fills the screen)."""
        said = f"Files: {report.summary()}"
        if report.refused:
            said += " " + " ".join(report.refused[:_SHOWN_FILES])
            more = len(report.refused) - _SHOWN_FILES
            said += f" And {more} more left as they are." if more > 0 else ""
        if report.restore_id is not None:
            said += " Undo it from the palette: Undo file restore."
        self.screen.app.notify(escape_hidden(said), markup=False)

    def undo(self) -> None:
        """The palette's "Undo file restore": put back what the latest restore replaced."""
        screen = self.screen
        if screen.running:
            screen.app.notify("A turn is running: wait for it to undo a file restore.")
        elif not screen.busy():
            screen.begin(self._undo(), "undo file restore")

    async def _undo(self) -> None:
        store = self.screen.koroku.store
        assert store is not None
        latest = await store.latest_file_restore()
        if latest is None:
            self.screen.app.notify("No file restore in this session to undo.")
            return
        await self.put_back(await plan_undo(store, self.workspace, latest.id))
