"""Keeping file tools inside the workspace folder, with no window between check and use.

A path is walked one component at a time from an open descriptor of the
workspace: each folder is opened with ``O_NOFOLLOW`` relative to the folder
before it (``openat``), ``..`` goes back to a folder already held, and a
symbolic link is read (``readlinkat``) and its target walked the same way.
The kernel never follows a link or a ``..`` for us, so a folder swapped for a
link by another process between two steps cannot lead outside: the worst it
can do is make the call fail. ``../x``, absolute paths elsewhere and links
whose target lies outside are refused with the same sentence.

The walk ends at an open folder and the final name in it; the tools open that
name with ``O_NOFOLLOW`` relative to the folder and check what they opened
with ``fstat`` (see ``files.py``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from koroku_tui.agent.tools.path_text import is_plain_name, path_bytes, shown_path
from koroku_tui.agent.tools.result import ToolError

__all__ = ["MAX_LINKS", "Located", "locate", "refuse_new_name"]

MAX_LINKS = 40
"""Symbolic links followed in one path before giving up (Linux's own limit)."""

# O_PATH: a folder the user may enter but not list can still be walked through.
_WALK_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC
_ROOT = b""


@dataclass
class Located:
    """Where a path leads: an open folder inside the workspace and a name in it.

    Close it (or use ``with``) to release the folder's descriptor.
    """

    folder_fd: int
    """The folder holding the target, opened while walking (never through a link)."""
    name: bytes | None
    """The target's name in that folder; ``None`` when the target is the folder itself."""
    parts: tuple[bytes, ...]
    """The target's path from the workspace, links resolved (for messages)."""
    status: os.stat_result | None
    """The target's own status (``lstat``): ``None`` when nothing has that name."""

    @property
    def shown(self) -> str:
        """The target's path relative to the workspace, as the model may read it."""
        return shown_path(self.parts)

    def open(self, flags: int, mode: int = 0o666) -> int:
        """Open the target with ``O_NOFOLLOW`` relative to its folder; returns the descriptor.

        Raises ``ToolError`` if the name became a link (or vanished) since the walk.
        """
        name = self.name if self.name is not None else b"."
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=self.folder_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOENT, errno.EEXIST):
                raise ToolError(
                    f"{self.shown} changed while it was being opened; try again."
                ) from None
            if exc.errno == errno.ENXIO:  # a FIFO nobody reads, swapped in meanwhile
                raise ToolError(f"{self.shown} is not a regular file.") from None
            raise

    def close(self) -> None:
        """Release the folder's descriptor."""
        if self.folder_fd >= 0:
            os.close(self.folder_fd)
            self.folder_fd = -1

    def __enter__(self) -> Located:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def locate(
    workspace: Path, path: str, *, make_folders: bool = False, follow_last: bool = True
) -> Located:
    """Walk ``path`` (relative to ``workspace``, or absolute inside it) without leaving it.

    Folders on the way that do not exist are created when ``make_folders``,
    else the result has ``status=None``. Raises ``ToolError`` when the path
    leads outside the workspace, runs through a file, or loops. With
    ``follow_last=False`` a link as the last component is not followed: the
    result is the link itself (a restore refuses it).
    """
    root = os.fsencode(workspace)
    wanted = path_bytes(path)
    if wanted.startswith(b"/"):
        wanted = _inside(wanted, root, path, workspace)
    walk = _Walk(os.open(root, _WALK_FLAGS), path, workspace)
    try:
        return walk.run(wanted, make_folders=make_folders, follow_last=follow_last)
    finally:
        walk.release()


def refuse_new_name(name: bytes, path: str) -> None:
    """Raise ``ToolError`` unless ``name`` may be given to a new file or folder.

    A new name must be shown as itself (see ``path_text.is_plain_name``): the
    model cannot plant an ESC byte or undecodable bytes in the user's folder.
    """
    if name in (b"..", b".") or is_plain_name(name):
        return
    raise ToolError(
        f"Cannot use the path {path!r}: new files and folders are not given names with "
        "control characters or bytes that are not UTF-8; choose a plain name."
    )


def _inside(absolute: bytes, root: bytes, path: str, workspace: Path) -> bytes:
    """``absolute`` relative to the workspace root, or ``ToolError`` if it lies elsewhere."""
    if root == b"/":
        return absolute.lstrip(b"/")
    if absolute == root or absolute.startswith(root + b"/"):
        return absolute[len(root) :].lstrip(b"/")
    raise _outside(path, workspace)


def _outside(path: str, workspace: Path) -> ToolError:
    return ToolError(
        f"The path {path!r} is outside the workspace ({workspace}); "
        "only files inside the workspace can be used."
    )


class _MissingFolder(Exception):
    """A folder on the way does not exist (and was not to be made)."""


class _Walk:
    """The folders held so far: ``stack[0]`` is the workspace, each next one inside the last."""

    def __init__(self, root_fd: int, path: str, workspace: Path) -> None:
        self.stack: list[tuple[bytes, int]] = [(_ROOT, root_fd)]
        self.path = path
        self.workspace = workspace
        self.links = 0

    def run(self, wanted: bytes, *, make_folders: bool, follow_last: bool = True) -> Located:
        pending = _components(wanted)  # reversed: the next component is last
        while pending:
            name = pending.pop()
            if name == b"..":
                if len(self.stack) == 1:
                    raise _outside(self.path, self.workspace)
                os.close(self.stack.pop()[1])
                continue
            if not pending:
                status = self._lstat(name)
                if status is not None and stat.S_ISLNK(status.st_mode) and follow_last:
                    self._follow(name, pending)
                    continue
                return self._located(name, status)
            try:
                fd = self._enter(name, pending, make_folders=make_folders)
            except _MissingFolder:
                return self._located(name, None)  # nothing below it exists either
            if fd is not None:
                self.stack.append((name, fd))
        return self._located(None, None)

    def _enter(self, name: bytes, pending: list[bytes], *, make_folders: bool) -> int | None:
        """Open folder ``name`` and return its descriptor.

        ``None`` when there is more to walk first: ``name`` was a link (its
        target is now in ``pending``), or it was just made or changed and is
        looked at again. Raises ``_MissingFolder`` when it does not exist.
        """
        folder = self.stack[-1][1]
        try:
            return os.open(name, _WALK_FLAGS | os.O_NOFOLLOW, dir_fd=folder)
        except FileNotFoundError:
            if pending[-1] == b"..":
                # "missing/..": a folder that does not exist is no link, so the
                # two cancel out, as they did when paths were resolved as text.
                pending.pop()
                return None
            if not make_folders:
                raise _MissingFolder from None
            # Everything from here down will be new, so every name of it must be plain.
            for new in (name, *pending):
                refuse_new_name(new, self.path)
            self._count_step()
            # Made meanwhile by someone else is fine: the next step looks again.
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=folder)
            pending.append(name)
            return None
        except OSError as exc:
            # Linux says ENOTDIR for a link opened with O_DIRECTORY|O_NOFOLLOW; others ELOOP.
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            status = self._lstat(name)
            if status is not None and stat.S_ISLNK(status.st_mode):
                self._follow(name, pending)
                return None
            if status is None:
                pending.append(name)  # removed meanwhile: look again
                self._count_step()
                return None
            where = shown_path([*self._names(), name])
            raise ToolError(
                f"Cannot use the path {self.path!r}: {where} is a file, not a folder."
            ) from None

    def _follow(self, name: bytes, pending: list[bytes]) -> None:
        """Put the target of link ``name`` in front of what is left to walk."""
        self._count_step()
        try:
            target = os.readlink(name, dir_fd=self.stack[-1][1])
        except OSError:
            pending.append(name)  # no longer a link: look again
            return
        if target.startswith(b"/"):
            relative = _inside(target, os.fsencode(self.workspace), self.path, self.workspace)
            while len(self.stack) > 1:
                os.close(self.stack.pop()[1])
            pending.extend(_components(relative))
        else:
            pending.extend(_components(target))

    def _count_step(self) -> None:
        # Links, and names that change under us, are bounded like the kernel bounds links.
        self.links += 1
        if self.links > MAX_LINKS:
            raise ToolError(
                f"Cannot use the path {self.path!r}: too many symbolic links "
                "(or it keeps changing)."
            )

    def _lstat(self, name: bytes) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=self.stack[-1][1], follow_symlinks=False)
        except FileNotFoundError:
            return None

    def _names(self) -> list[bytes]:
        return [name for name, _ in self.stack[1:]]

    def _located(self, name: bytes | None, status: os.stat_result | None) -> Located:
        parts = (*self._names(), name) if name is not None else tuple(self._names())
        folder_fd = self.stack[-1][1]
        if name is None:
            status = os.fstat(folder_fd)
        # The caller owns the last folder's descriptor now.
        self.stack.pop()
        return Located(folder_fd, name, parts, status)

    def release(self) -> None:
        while self.stack:
            os.close(self.stack.pop()[1])


def _components(path: bytes) -> list[bytes]:
    """Path components, ``.`` and empty ones dropped, reversed (pop takes the next)."""
    return [part for part in reversed(path.split(b"/")) if part not in (b"", b".")]
