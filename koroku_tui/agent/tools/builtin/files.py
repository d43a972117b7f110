"""File tools: read a file, list a folder, write a file, all inside the workspace.

Every path is walked with ``workspace.locate`` and the target opened relative
to its folder with ``O_NOFOLLOW``; what was opened is checked with ``fstat``,
never what a name pointed to a moment before. Files with more than one hard
link are neither read nor written: a link inside the workspace to a file
outside it cannot be told from any other, so the tools refuse them all and say
why (``run_command`` can still reach them, after the user approves).

The link count alone can be raced: another process can link an outside file
in, let the tool open it, and unlink the workspace name at once, so the count
reads 1. Hence:

* ``write_file`` never writes into an existing file. It writes a new file
  (``O_EXCL``) in the same folder and renames it over the name, so the
  worst a race can do is replace a workspace *name*; an outside file linked
  there keeps its contents.
* ``read_file``, after reading, checks that the file had no other name
  (see ``tools/single_link.py``); otherwise it refuses.

Before ``write_file`` writes, the file's previous state (its bytes, or "did
not exist", and its mode) is handed to the session's ``file_keeper``, which
stores it and returns once it is committed, so that a rewind can put it back
(``tools/file_restore.py``). What it cannot keep it does not write.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from koroku_tui.agent.tools.builtin.file_io import (
    OPEN_FLAGS,
    absolute_path,
    create_file,
    os_errors,
    read_state,
    refuse_hard_links,
    replace_file,
    require_regular,
)
from koroku_tui.agent.tools.path_text import shown_name
from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.single_link import only_name
from koroku_tui.agent.tools.tool_settings import ToolSettings
from koroku_tui.agent.tools.workspace import Located, locate, refuse_new_name
from koroku_tui.privacy.home_files import read_at_most
from koroku_tui.store.file_records import FileState

__all__ = [
    "MAX_LIST_ENTRIES",
    "MAX_READ_BYTES",
    "OpenedFile",
    "list_directory",
    "looks_binary",
    "opened_file",
    "read_file",
    "write_file",
]

MAX_READ_BYTES = 1_000_000
"""Larger files are refused: the model could only see the first 20,000 characters."""
MAX_LIST_ENTRIES = 1_000
_BINARY_SNIFF_BYTES = 8_192


def read_file(path: str, context: ToolSettings) -> str:
    """Read a text file from the workspace and return its contents.

    Args:
        path: The file's path, relative to the workspace folder.
    """
    with opened_file(path, context.workspace) as file:
        _refuse_size(path, file.size)
        # One byte more than the limit tells a file that grew since fstat.
        data = read_at_most(file.fd, MAX_READ_BYTES + 1)
    if len(data) > MAX_READ_BYTES:
        _refuse_size(path, len(data), grew=True)
    if looks_binary(data):
        raise ToolError(
            f"{path!r} looks like a binary file ({len(data):,} bytes); read_file only reads text."
        )
    return data.decode("utf-8", errors="replace")


def looks_binary(data: bytes) -> bool:
    """True when ``data`` (a file's start) holds a NUL byte near its start."""
    # UTF-8 and other text encodings in practice never contain one.
    return b"\x00" in data[:_BINARY_SNIFF_BYTES]


@dataclass(frozen=True)
class OpenedFile:
    """A regular workspace file opened to read (see :func:`opened_file`)."""

    fd: int
    size: int
    """Its size when opened (``fstat``)."""
    shown: str
    """Its path from the workspace, links resolved, as the model may read it."""


@contextmanager
def opened_file(path: str, workspace: Path) -> Iterator[OpenedFile]:
    """Open ``path`` to read under the file tools' rules; yields it open.

    Confined to ``workspace``, no link followed out of it, regular files
    only, no file with other hard links; on a normal exit, checks the file
    still had no other name while it was read. Every refusal is a
    ``ToolError`` (one sentence naming ``path``).
    """
    with os_errors(path), locate(workspace, path) as target:
        status = target.status
        if status is None:
            raise ToolError(f"There is no file {path!r} in the workspace.")
        if stat.S_ISDIR(status.st_mode):
            raise ToolError(
                f"{path!r} is a folder, not a file; use list_directory to see inside it."
            )
        require_regular(path, status)
        fd = target.open(os.O_RDONLY | OPEN_FLAGS)
        try:
            opened = os.fstat(fd)
            require_regular(path, opened)
            refuse_hard_links(path, opened, "read")
            yield OpenedFile(fd, opened.st_size, target.shown)
            _require_still_the_only_link(path, target, fd)
        finally:
            os.close(fd)


def list_directory(context: ToolSettings, path: str = ".") -> str:
    """List a folder in the workspace: one name per line, folders end with "/".

    Names that are not valid UTF-8 or hold control characters are shown with
    \\xNN escapes (and a backslash as \\\\); use them as they are shown. Other
    characters ("/", ".", letters) are never escaped, and paths may not escape them.

    Args:
        path: The folder's path, relative to the workspace folder. Defaults to the workspace itself.
    """
    with os_errors(path), locate(context.workspace, path) as target:
        if target.status is None:
            raise ToolError(f"There is no folder {path!r} in the workspace.")
        if not stat.S_ISDIR(target.status.st_mode):
            raise ToolError(f"{path!r} is a file, not a folder; use read_file to read it.")
        fd = target.open(os.O_RDONLY | os.O_DIRECTORY | OPEN_FLAGS)
        try:
            with os.scandir(fd) as entries:
                # Names from a descriptor come back as str with surrogate escapes.
                names = sorted(
                    shown_name(os.fsencode(entry.name)) + ("/" if _is_folder(entry) else "")
                    for entry in entries
                )
        finally:
            os.close(fd)
        if not names:
            return f"{target.shown} is empty."
    shown = names[:MAX_LIST_ENTRIES]
    if len(names) > MAX_LIST_ENTRIES:
        shown.append(f"[... {len(names) - MAX_LIST_ENTRIES:,} more entries not shown]")
    return "\n".join(shown)


def write_file(path: str, content: str, context: ToolSettings) -> str:
    """Write text to a file in the workspace, creating it (and its folders) or replacing it.

    Args:
        path: The file's path, relative to the workspace folder.
        content: The complete new contents of the file.
    """
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(f"The content is not valid text (at character {exc.start:,}).") from None
    with os_errors(path), locate(context.workspace, path, make_folders=True) as target:
        status = target.status
        if status is not None and stat.S_ISDIR(status.st_mode):
            raise ToolError(f"{path!r} is a folder; give a file path to write to.")
        if status is None:
            assert target.name is not None  # a path without a name is a folder
            refuse_new_name(target.name, path)
            _keep(context, path, target, data)
            create_file(target, data)
        else:
            require_regular(path, status)
            refuse_hard_links(path, status, "write")
            _keep(context, path, target, data)
            replace_file(path, target, data, stat.S_IMODE(status.st_mode), status)
        shown = target.shown
    verb = "Created" if status is None else "Replaced"
    return f"{verb} {shown} ({len(content):,} characters)."


def _keep(context: ToolSettings, path: str, target: Located, data: bytes) -> None:
    """Have the session keep the file's state before ``data`` is written there (committed
    first: see ``file_keeping.py``); without a store (a bare registry) nothing is kept."""
    if context.file_keeper is None:
        return
    before = FileState(None) if target.status is None else read_state(path, target, "write")
    after = FileState(data, before.mode)
    context.file_keeper.keep_before_write(absolute_path(context.workspace, target), before, after)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows links, so a link to a folder ends with "/"
    except OSError:  # a link loop, or one gone meanwhile
        return False


def _require_still_the_only_link(path: str, target: Located, fd: int) -> None:
    """Refuse what was read unless the file was known only by its workspace name."""
    assert target.name is not None
    if not only_name(fd, target.folder_fd, target.name):
        raise ToolError(
            f"{path!r} changed while it was being read (it gained or lost a hard link); try again."
        )


def _refuse_size(path: str, size: int, *, grew: bool = False) -> None:
    if size <= MAX_READ_BYTES:
        return
    how_big = (
        f"grew past {MAX_READ_BYTES:,} bytes while it was read" if grew else f"is {size:,} bytes"
    )
    raise ToolError(
        f"{path!r} {how_big}; read_file reads files up to {MAX_READ_BYTES:,} bytes. "
        "Use run_command with head, tail or grep to read part of it."
    )
