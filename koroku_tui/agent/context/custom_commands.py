"""Custom slash commands: Markdown files whose text is sent as a message.

Where they are (:class:`CommandFolders`, built by the assembly,
``modes/wiring.py``):

1. the user's: ``commands/*.md`` in the user config folder
   (``~/.config/koroku/commands``, the personal instruction files' folder),
   always used;
2. the project's: ``.koroku/commands/*.md`` in the workspace and each folder
   up to the repository root (the nearest one wins a name). Used only when
   the workspace is trusted (``config.trust``): a cloned repository must not
   put words in the user's mouth unasked.

A file ``review.md`` is the command ``/review``; its name is letters,
digits, ``-`` and ``_``. ``/review rest of line`` sends the file's text with
every ``$ARGUMENTS`` replaced by ``rest of line``, literally: one pass, no
shell, no other expansion (arguments holding ``$(...)`` or ``$ARGUMENTS``
stay as typed), into a message of at most :data:`MESSAGE_CAP` characters. A
first line ``description: ...`` is the one-line description the completion
list shows, and is not sent; without one the list shows the first non-empty
line (a heading's ``#`` left out).

What cannot be used is said, one sentence per file, never raised: a name
taken by a built-in command (the built-in wins), a project file whose name
the user's own file takes (the user's wins, as with MCP servers), a file
over :data:`COMMAND_CAP`, a file that is not UTF-8, a name with other
characters, a link out of the project (the file, ``.koroku`` or its
``commands`` folder). Files are read as a project's files are
(``agent.context.project_files``): regular files only, a FIFO cannot hang
Koroku.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from koroku_tui.agent.context.instruction_files import InstructionFiles
from koroku_tui.agent.context.project_files import read_project_text, size_text
from koroku_tui.config.files import project_folders, shown_path
from koroku_tui.text.safety import escape_hidden

__all__ = [
    "ARGUMENTS",
    "COMMAND_CAP",
    "LONGEST_NAME",
    "MESSAGE_CAP",
    "PROJECT_COMMANDS",
    "CommandFolders",
    "CustomCommand",
    "LoadedCommands",
    "expand",
    "load_commands",
]

ARGUMENTS = "$ARGUMENTS"
"""Where the rest of the command's line goes in the file's text."""

COMMAND_CAP = 64 * 1024
"""The largest command file used (64 KB): a bigger one is refused, with a notice."""

MESSAGE_CAP = 4_000_000
"""The most characters a command's message may hold, about a million tokens (a whole
context window): a file holding ``$ARGUMENTS`` thousands of times, given a long pasted
argument, would otherwise build a message of gigabytes before anything could refuse it."""

MOST_FILES = 500
"""The most files looked at in one folder: a folder of thousands stays quick to read."""

PROJECT_COMMANDS = Path(".koroku") / "commands"
"""A project's command folder, relative to the workspace or a parent up to the repository root."""

LONGEST_NAME = 64
"""The most characters in a command's name."""

_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_-]{{0,{LONGEST_NAME - 1}}}")
_DESCRIPTION = re.compile(r"description:[ \t]*(.*)", re.IGNORECASE)

Scope = Literal["user", "project"]


@dataclass(frozen=True)
class CustomCommand:
    """One command file, read: its name, what the list says of it, and the text it sends."""

    name: str
    """The command, without its slash (``review`` for ``review.md``)."""
    description: str
    """One line for the completion list (raw: the list shows hidden characters escaped)."""
    text: str
    """What is sent, ``$ARGUMENTS`` not yet replaced (the description line left out)."""
    path: Path
    scope: Scope

    @property
    def takes_arguments(self) -> bool:
        """The text has a place for the rest of the line."""
        return ARGUMENTS in self.text

    def message(self, arguments: str) -> str:
        """The text sent for ``/name arguments`` (:func:`expand`)."""
        return expand(self.text, arguments)

    def size(self, arguments: str) -> int:
        """How many characters :meth:`message` would hold, counted without building it."""
        return len(self.text) + self.text.count(ARGUMENTS) * (len(arguments) - len(ARGUMENTS))


def expand(text: str, arguments: str) -> str:
    """``text`` with each ``$ARGUMENTS`` replaced by ``arguments``, literally and once.

    One ``str.replace``: what ``arguments`` holds is never looked at again,
    so ``$ARGUMENTS`` or ``$(rm -rf ~)`` in it arrive as typed.
    """
    return text.replace(ARGUMENTS, arguments)


@dataclass(frozen=True)
class LoadedCommands:
    """The custom commands found, by name, and what was said about the files not used."""

    commands: dict[str, CustomCommand] = field(default_factory=dict)
    notices: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommandFolders:
    """Where a run's custom commands are (nothing is read until :func:`load_commands`).

    Both folders follow the run's instruction files (:meth:`of`), which the
    assembly (``modes/wiring.py``) built with the user config folder.
    """

    user: Path | None
    """``commands`` in the user config folder (``None``: no user folder)."""
    project: InstructionFiles
    """The run's instruction files: the workspace the project's folders are found from,
    whether it is trusted (the trust prompt may trust it meanwhile), the root no link may
    leave, and the user's home for paths written ``~/...``."""

    @classmethod
    def of(cls, files: InstructionFiles) -> CommandFolders:
        """``commands`` in the personal folder of ``files``, and the project ``files`` are in."""
        user = files.personal_dir / "commands" if files.personal_dir is not None else None
        return cls(user, files)

    def project_folders(self) -> list[Path]:
        """The project's command folders, outermost first (``.koroku/commands`` in each)."""
        return [folder / PROJECT_COMMANDS for folder in project_folders(self.project.workspace)]

    def shown(self, path: Path) -> str:
        """``path`` as the user reads it, hidden characters escaped."""
        return escape_hidden(shown_path(path, self.project.home))


def load_commands(folders: CommandFolders, *, builtins: Collection[str]) -> LoadedCommands:
    """Read the command files (touches the disk: off the UI's loop); ``builtins``: names taken.

    The project's files count only while its folder is trusted.
    """
    notices: list[str] = []
    taken = {name.casefold() for name in builtins}
    project: dict[str, CustomCommand] = {}
    if folders.project.trusted:
        for folder in folders.project_folders():  # outermost first: the nearest overwrites
            project.update(_read_folder(folder, "project", folders, notices))
    user = _read_folder(folders.user, "user", folders, notices) if folders.user else {}
    commands: dict[str, CustomCommand] = {}
    for name, command in [*user.items(), *project.items()]:
        where = folders.shown(command.path)
        if name.casefold() in taken:
            notices.append(f"{where} is not used: /{name} is a built-in command; rename the file.")
        elif name in commands:
            notices.append(
                f"{where} is not used: /{name} is your own "
                f"{folders.shown(commands[name].path)}, which wins over a project's."
            )
        else:
            commands[name] = command
    return LoadedCommands(dict(sorted(commands.items())), tuple(notices))


def _read_folder(
    folder: Path, scope: Scope, folders: CommandFolders, notices: list[str]
) -> dict[str, CustomCommand]:
    if scope == "project":  # ``.koroku`` or ``commands`` a link: its files are elsewhere
        real = Path(os.path.realpath(folder))
        if not real.is_relative_to(os.path.realpath(folders.project.link_root)):
            notices.append(
                f"{folders.shown(folder)} is not used: it is a link to "
                f"{folders.shown(real)}, outside the project."
            )
            return {}
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries if e.name.endswith(".md"))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError as exc:
        notices.append(f"{folders.shown(folder)} cannot be read ({exc.strerror or exc}).")
        return {}
    if len(names) > MOST_FILES:
        notices.append(
            f"{folders.shown(folder)} holds {len(names):,} command files; "
            f"only the first {MOST_FILES} are used."
        )
    found: dict[str, CustomCommand] = {}
    for file_name in names[:MOST_FILES]:
        command = _read_file(folder / file_name, scope, folders, notices)
        if command is not None:
            found[command.name] = command
    return found


def _read_file(
    path: Path, scope: Scope, folders: CommandFolders, notices: list[str]
) -> CustomCommand | None:
    where = folders.shown(path)
    name = path.name.removesuffix(".md")
    if not _NAME.fullmatch(name):
        notices.append(
            f"{where} is not used: a command's name is letters, digits, - and _ "
            "(at most 64), starting with a letter or digit."
        )
        return None
    root = folders.project.link_root if scope == "project" else None
    read = read_project_text(path, limit=COMMAND_CAP, root=root)
    if read is None:
        return None
    if read.refused is not None:
        notices.append(f"{where} is not used: it {read.refused}.")
        return None
    if read.cut:
        notices.append(
            f"{where} is not used: it is {size_text(read.size)}, "
            f"more than the {size_text(COMMAND_CAP)} a command may be."
        )
        return None
    if read.undecodable:
        notices.append(f"{where} is not used: it is not UTF-8 text.")
        return None
    description, text = _described(read.text)
    return CustomCommand(name, description, text, path, scope)


def _described(text: str) -> tuple[str, str]:
    """(description, text sent): a first line ``description: ...`` is taken out of the text."""
    text = text.removeprefix("\ufeff")  # the byte order mark a Windows editor starts with
    first, newline, rest = text.partition("\n")
    said = _DESCRIPTION.fullmatch(first.rstrip("\r"))
    if said is not None:
        return said.group(1).strip(), rest if newline else ""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line.lstrip("#").strip(), text
