"""What a call that writes a file would change, for the approval dialog to show.

Core code (no Textual): a tool's spec names its preview (``write_file``'s is
:func:`preview_file_write`); the executor computes the :class:`FileChange`
before it asks the user, and the dialog only draws it. The file is read the way the
file tools read it: walked with ``workspace.locate`` (a link out of the
workspace is refused, never followed), opened with ``O_NOFOLLOW`` and
``O_NONBLOCK`` and checked with ``fstat`` (a FIFO is never opened, a device
never read). Whatever cannot be read is said in one sentence instead.

The lines are returned raw: the dialog escapes their hidden characters as it
does the arguments'. They are split on ``\\n`` only, so a ``\\u2028`` or a
form feed stays inside its line, where the dialog shows it as an escape.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.workspace import locate

__all__ = [
    "MAX_DIFF_LINES",
    "MAX_LINE_CHARS",
    "MAX_PREVIEW_BYTES",
    "NEW_FILE_LINES",
    "FileChange",
    "cut_line",
    "preview_file_write",
    "preview_write",
]

MAX_DIFF_LINES = 200
"""Diff lines kept for the dialog; the rest are counted ("… N more lines")."""
NEW_FILE_LINES = 40
"""Lines of a new file shown."""
MAX_LINE_CHARS = 400
"""Characters of one line kept (a minified file is one huge line)."""
MAX_PREVIEW_BYTES = 1_000_000
"""Larger files are not read (read_file's own limit)."""
_BINARY_SNIFF_BYTES = 8_192


@dataclass(frozen=True)
class FileChange:
    """What writing a file would do: whether it exists, and the diff (or why there is none)."""

    path: str
    """The path as the model gave it."""
    exists: bool
    """True when something already has that name (the write replaces it)."""
    lines: list[str] = field(default_factory=list)
    """Unified diff lines (a new file: its first lines, each with "+"); raw, unescaped."""
    more_lines: int = 0
    """Lines of the diff (or of the new file) left out of ``lines``."""
    unreadable: str | None = None
    """Why the current contents cannot be shown; ``None`` when they could."""

    @property
    def unchanged(self) -> bool:
        """The file already holds exactly the new contents."""
        return self.exists and self.unreadable is None and not self.lines


def preview_file_write(args: Mapping[str, Any], workspace: Path) -> FileChange | None:
    """The change of a call writing ``args["content"]`` to ``args["path"]`` (a ``ChangePreview``).

    ``None`` when the arguments are not two texts: there is nothing to compare.
    """
    path, content = args.get("path"), args.get("content")
    if not isinstance(path, str) or not isinstance(content, str):
        return None
    return preview_write(workspace, path, content)


def preview_write(workspace: Path, path: str, content: str) -> FileChange:
    """What ``write_file(path, content)`` would change in ``workspace``; never raises for I/O."""
    try:
        old = _current(workspace, path)
    except ToolError as exc:
        return FileChange(path, exists=False, unreadable=str(exc))
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        return FileChange(path, exists=True, unreadable=f"{path} cannot be read: {reason}.")
    new_lines = content.split("\n")
    if old is None:
        shown = [f"+{line}" for line in new_lines[:NEW_FILE_LINES]]
        return FileChange(
            path,
            exists=False,
            lines=[cut_line(line) for line in shown],
            more_lines=max(0, len(new_lines) - NEW_FILE_LINES),
        )
    if isinstance(old, _Unshown):
        return FileChange(path, exists=True, unreadable=old.reason)
    diff = list(
        difflib.unified_diff(
            old.split("\n"), new_lines, fromfile=f"a/{path}", tofile=f"b/{path}", lineterm=""
        )
    )
    return FileChange(
        path,
        exists=True,
        lines=[cut_line(line) for line in diff[:MAX_DIFF_LINES]],
        more_lines=max(0, len(diff) - MAX_DIFF_LINES),
    )


@dataclass(frozen=True)
class _Unshown:
    reason: str


def _current(workspace: Path, path: str) -> str | _Unshown | None:
    """The file's text now; ``None`` when there is no such file; ``_Unshown`` with why not."""
    with locate(workspace, path) as target:
        status = target.status
        if status is None:
            return None
        if stat.S_ISDIR(status.st_mode):
            return _Unshown(f"{path} is a folder: write_file will refuse it.")
        if not stat.S_ISREG(status.st_mode):
            return _Unshown(f"{path} is not a regular file (a pipe, socket or device).")
        fd = target.open(os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode):
                return _Unshown(f"{path} is not a regular file (a pipe, socket or device).")
            if opened.st_size > MAX_PREVIEW_BYTES:
                return _Unshown(f"{path} is {opened.st_size:,} bytes: too large to compare.")
            data = _read_all(fd)
        finally:
            os.close(fd)
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        return _Unshown(f"{path} is a binary file ({len(data):,} bytes): no diff shown.")
    return data.decode("utf-8", errors="replace")


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
        if sum(map(len, chunks)) > MAX_PREVIEW_BYTES:
            break  # grew since fstat: compare what was read
    return b"".join(chunks)


def cut_line(line: str) -> str:
    """``line``, or its first ``MAX_LINE_CHARS`` characters and how many more there are."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]} … {len(line) - MAX_LINE_CHARS:,} more characters"
