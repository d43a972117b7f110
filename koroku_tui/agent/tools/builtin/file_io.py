"""How the file tools touch a file: checks on what was opened, reading a state, writing one.

Shared by ``write_file`` (``files.py``) and restores
(``koroku_tui.agent.tools.file_restore``), so a restore writes a file exactly
the way ``write_file`` does: a new file (``O_EXCL``) in the same folder,
renamed over the name, never a write into an existing inode (see
``files.py`` for why). Everything is relative to a folder descriptor that
``workspace.locate`` opened without following links.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.workspace import Located
from koroku_tui.privacy.home_files import read_at_most
from koroku_tui.store.file_records import FileState

__all__ = [
    "MAX_KEPT_BYTES",
    "OPEN_FLAGS",
    "absolute_path",
    "create_file",
    "os_errors",
    "read_state",
    "refuse_hard_links",
    "replace_file",
    "require_regular",
]

# O_NONBLOCK: opening a FIFO or a device swapped in after the check must not hang.
OPEN_FLAGS = os.O_NONBLOCK | os.O_NOCTTY
MAX_KEPT_BYTES = 20_000_000
"""Largest file whose previous contents ``write_file`` keeps (for rewind); larger ones it
does not replace."""
# The new contents are written under this name first (a dot file, so that it
# stays out of the way should Koroku be killed before the rename).
_TEMP_PREFIX = b".koroku-write-"


def absolute_path(workspace: Path, target: Located) -> bytes:
    """``target``'s absolute path (links on the way resolved), as bytes: how it is stored."""
    return b"/".join([os.fsencode(workspace).rstrip(b"/"), *target.parts])


def read_state(path: str, target: Located, verb: str) -> FileState:
    """The bytes and mode of the regular file ``target`` (checked as ``write_file`` checks).

    Raises ``ToolError`` for a file that is not regular, has other hard links,
    or is over ``MAX_KEPT_BYTES``.
    """
    fd = target.open(os.O_RDONLY | OPEN_FLAGS)
    try:
        opened = os.fstat(fd)
        require_regular(path, opened)
        refuse_hard_links(path, opened, verb)
        if opened.st_size > MAX_KEPT_BYTES:
            raise ToolError(
                f"{path!r} is {opened.st_size:,} bytes; Koroku keeps what a file held before "
                f"it writes it (to rewind) up to {MAX_KEPT_BYTES:,} bytes, so it does not "
                f"{verb} this one. Use run_command (the user approves it) instead."
            )
        data = read_at_most(fd, MAX_KEPT_BYTES + 1)
    finally:
        os.close(fd)
    return FileState(data, stat.S_IMODE(opened.st_mode) & 0o777)


def create_file(target: Located, data: bytes) -> None:
    """Write ``data`` to a new file; ``O_EXCL``: a name that appeared since the walk is kept."""
    fd = target.open(os.O_WRONLY | os.O_CREAT | os.O_EXCL | OPEN_FLAGS)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def replace_file(
    path: str, target: Located, data: bytes, mode: int, status: os.stat_result | None
) -> None:
    """Put a new file holding ``data`` (permission bits ``mode``) at ``target``'s name.

    No existing inode is written. ``status``: what has the name now (its owner
    is kept where allowed; a read-only file stays refused, as a write into it
    would have been); ``None`` when nothing has it.
    """
    assert target.name is not None
    folder = target.folder_fd
    if status is not None and not os.access(target.name, os.W_OK, dir_fd=folder):
        raise ToolError(f"Cannot use the path {path!r}: permission denied.")
    temp = _TEMP_PREFIX + secrets.token_hex(8).encode("ascii")
    fd = os.open(
        temp,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC | OPEN_FLAGS,
        0o600,
        dir_fd=folder,
    )
    renamed = False
    try:
        try:
            if status is not None and (status.st_uid, status.st_gid) != (
                os.geteuid(),
                os.getegid(),
            ):
                # Keep the owner where allowed (as root); elsewhere the new file is ours.
                with contextlib.suppress(OSError):
                    os.fchown(fd, status.st_uid, status.st_gid)
            os.fchmod(fd, mode & 0o777)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        # rename replaces the name, never writes through it: were it swapped
        # for a link (hard or symbolic) meanwhile, what it linked to is untouched.
        os.rename(temp, target.name, src_dir_fd=folder, dst_dir_fd=folder)
        renamed = True
    except IsADirectoryError:
        raise ToolError(f"{path!r} became a folder while it was being written.") from None
    finally:
        if not renamed:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)


def require_regular(path: str, status: os.stat_result) -> None:
    """``ToolError`` unless ``status`` is a regular file's."""
    if not stat.S_ISREG(status.st_mode):
        # A FIFO or device would block the tool's thread forever, or worse.
        raise ToolError(f"{path!r} is not a regular file (a pipe, socket or device).")


def refuse_hard_links(path: str, status: os.stat_result, verb: str) -> None:
    """``ToolError`` for a file with more than one hard link (it may live outside)."""
    if status.st_nlink > 1:
        raise ToolError(
            f"{path!r} has {status.st_nlink} hard links, so it may be a file outside the "
            f"workspace under another name; file tools do not {verb} such files. "
            "Use run_command (the user approves it) if this file is meant to be used."
        )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@contextmanager
def os_errors(path: str) -> Iterator[None]:
    """An ``OSError`` (no permission, disk full...) as one sentence naming the model's path."""
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
        raise ToolError(f"Cannot use the path {path!r}: {reason.lower()}.") from None
