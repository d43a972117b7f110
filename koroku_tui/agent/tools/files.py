"""File tools: read a file, list a folder, write a file, all inside the workspace.

Every path is walked with ``workspace.locate`` and the target opened relative
to its folder with ``O_NOFOLLOW``; what was opened is checked with ``fstat``,
never what a name pointed to a moment before. Files with more than one hard
link are neither read nor written: a link inside the workspace to a file
outside it cannot be told from any other, so the tools refuse them all and say
why (``run_command`` can still reach them, after the user approves).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from koroku_tui.agent.tools.context import ToolContext
from koroku_tui.agent.tools.path_text import shown_name
from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.workspace import locate

__all__ = ["MAX_LIST_ENTRIES", "MAX_READ_BYTES", "list_directory", "read_file", "write_file"]

MAX_READ_BYTES = 1_000_000
"""Larger files are refused: the model could only see the first 20,000 characters."""
MAX_LIST_ENTRIES = 1_000
_BINARY_SNIFF_BYTES = 8_192
# O_NONBLOCK: opening a FIFO or a device swapped in after the check must not hang.
_OPEN_FLAGS = os.O_NONBLOCK | os.O_NOCTTY


def read_file(path: str, context: ToolContext) -> str:
    """Read a text file from the workspace and return its contents.

    Args:
        path: The file's path, relative to the workspace folder.
    """
    with _os_errors(path), locate(context.workspace, path) as target:
        status = target.status
        if status is None:
            raise ToolError(f"There is no file {path!r} in the workspace.")
        if stat.S_ISDIR(status.st_mode):
            raise ToolError(
                f"{path!r} is a folder, not a file; use list_directory to see inside it."
            )
        _require_regular(path, status)
        fd = target.open(os.O_RDONLY | _OPEN_FLAGS)
        try:
            opened = os.fstat(fd)
            _require_regular(path, opened)
            _refuse_hard_links(path, opened, "read")
            _refuse_size(path, opened.st_size)
            # One byte more than the limit tells a file that grew since fstat.
            data = _read_at_most(fd, MAX_READ_BYTES + 1)
        finally:
            os.close(fd)
    if len(data) > MAX_READ_BYTES:
        _refuse_size(path, len(data), grew=True)
    # A NUL byte near the start is the usual sign of a binary file; UTF-8 and
    # other text encodings in practice never contain one.
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        raise ToolError(
            f"{path!r} looks like a binary file ({len(data):,} bytes); read_file only reads text."
        )
    return data.decode("utf-8", errors="replace")


def list_directory(context: ToolContext, path: str = ".") -> str:
    """List a folder in the workspace: one name per line, folders end with "/".

    Names that are not valid UTF-8 or hold control characters are shown with
    \\xNN escapes (and a backslash as \\\\); use them as they are shown.

    Args:
        path: The folder's path, relative to the workspace folder. Defaults to the workspace itself.
    """
    with _os_errors(path), locate(context.workspace, path) as target:
        if target.status is None:
            raise ToolError(f"There is no folder {path!r} in the workspace.")
        if not stat.S_ISDIR(target.status.st_mode):
            raise ToolError(f"{path!r} is a file, not a folder; use read_file to read it.")
        fd = target.open(os.O_RDONLY | os.O_DIRECTORY | _OPEN_FLAGS)
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


def write_file(path: str, content: str, context: ToolContext) -> str:
    """Write text to a file in the workspace, creating it (and its folders) or replacing it.

    Args:
        path: The file's path, relative to the workspace folder.
        content: The complete new contents of the file.
    """
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(f"The content is not valid text (at character {exc.start:,}).") from None
    with _os_errors(path), locate(context.workspace, path, make_folders=True) as target:
        status = target.status
        if status is not None and stat.S_ISDIR(status.st_mode):
            raise ToolError(f"{path!r} is a folder; give a file path to write to.")
        existed = status is not None
        if status is not None:
            _require_regular(path, status)
            fd = target.open(os.O_WRONLY | _OPEN_FLAGS)
        else:
            # O_EXCL: a name that appeared since the walk is not silently taken over.
            fd = target.open(os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS)
        try:
            opened = os.fstat(fd)
            _require_regular(path, opened)
            _refuse_hard_links(path, opened, "write")
            if existed:
                os.ftruncate(fd, 0)  # only now: a refused file is left as it was
            _write_all(fd, data)
        finally:
            os.close(fd)
        shown = target.shown
    verb = "Replaced" if existed else "Created"
    return f"{verb} {shown} ({len(content):,} characters)."


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows links, so a link to a folder ends with "/"
    except OSError:  # a link loop, or one gone meanwhile
        return False


def _require_regular(path: str, status: os.stat_result) -> None:
    if not stat.S_ISREG(status.st_mode):
        # A FIFO or device would block the tool's thread forever, or worse.
        raise ToolError(f"{path!r} is not a regular file (a pipe, socket or device).")


def _refuse_hard_links(path: str, status: os.stat_result, verb: str) -> None:
    if status.st_nlink > 1:
        raise ToolError(
            f"{path!r} has {status.st_nlink} hard links, so it may be a file outside the "
            f"workspace under another name; file tools do not {verb} such files. "
            "Use run_command (the user approves it) if this file is meant to be used."
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


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@contextmanager
def _os_errors(path: str) -> Iterator[None]:
    """An ``OSError`` (no permission, disk full...) as one sentence naming the model's path."""
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
        raise ToolError(f"Cannot use the path {path!r}: {reason.lower()}.") from None
