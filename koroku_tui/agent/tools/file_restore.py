"""Putting files back: what a rewind (or a fork, or an undo) would restore, and doing it.

A plan (:func:`plan_rewind`, :func:`plan_undo`) lists each file the taken-back
writes touched, with the state to put back (the one before the first of
them), what Koroku last wrote there, and what is there now. A file whose
bytes differ from what Koroku last wrote was changed by someone else (the
user, a command): :func:`restore_files` leaves it as it is unless the caller
names it in ``overwrite`` (the app asks, showing :func:`restore_diff`;
``--print`` never does). A link, a folder, or a path now outside the
workspace is refused with a sentence, and never followed.

Files are written the way ``write_file`` writes them (``builtin/file_io.py``:
confinement, no link followed, a new file renamed into place) with the mode
they had. A restore is recorded before each file it writes (its own row, and
a snapshot of what it found), so it is undone like any other: nothing is lost.
No Textual here: the UI only shows a plan and asks.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import stat
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from koroku_tui.agent.tools.builtin.file_io import (
    absolute_path,
    os_errors,
    read_state,
    replace_file,
)
from koroku_tui.agent.tools.change_preview import (
    MAX_DIFF_LINES,
    MAX_PREVIEW_BYTES,
    FileChange,
    cut_line,
)
from koroku_tui.agent.tools.path_text import shown_path
from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.workspace import Located, locate
from koroku_tui.store.file_records import FileRestoreRecord, FileState, FileWrite

__all__ = [
    "FileToRestore",
    "RestorePlan",
    "RestoreReport",
    "RestoreStore",
    "plan_rewind",
    "plan_undo",
    "restore_diff",
    "restore_files",
]

_NEW_FILE_MODE = 0o644
"""A file put back whose mode was not kept (none is missing in practice)."""


class RestoreStore(Protocol):
    """The store's side of a restore (``SessionManager`` is one)."""

    async def first_file_writes_from(
        self, message_id: int, session_id: int | None = None
    ) -> list[FileWrite]: ...

    async def last_file_write(self, path: bytes) -> FileWrite | None: ...

    async def begin_file_restore(
        self, from_message_id: int | None, *, undoes: int | None = None
    ) -> int: ...

    async def keep_restored_file(
        self, restore_id: int, path: bytes, before: FileState, after: FileState
    ) -> int: ...

    async def forget_restored_file(self, restore_id: int, snapshot_id: int) -> None: ...

    async def restored_files(self, restore_id: int) -> list[FileWrite]: ...

    async def file_restore(self, restore_id: int) -> FileRestoreRecord | None: ...


@dataclass(frozen=True)
class FileToRestore:
    """One file of a plan."""

    path: bytes
    """Its absolute path, as stored."""
    shown: str
    """Its path as the user reads it (from the workspace when inside it, escaped)."""
    target: FileState
    """What to put back (``data=None``: remove it, it did not exist)."""
    last_written: FileState
    """What Koroku last put there."""
    found: FileState | None
    """What is there now; ``None`` when it cannot be restored (``problem`` says why)."""
    problem: str | None = None
    unlanded: FileState | None = None
    """The file's state before Koroku's last write. Found there, that write never landed
    (Koroku was killed between keeping the snapshot and writing, or the write failed):
    the file is as Koroku left it, not changed by someone else."""

    @property
    def needed(self) -> bool:
        """Something is to be done (or refused): the file is not as it is to be put back."""
        if self.found is None:
            return True
        if self.found.data != self.target.data:
            return True
        return self.target.exists and self.target.mode not in (None, self.found.mode)

    @property
    def changed(self) -> bool:
        """Changed since Koroku last wrote it, by someone else: not overwritten unasked."""
        if self.found is None or not self.needed:
            return False
        found = self.found.data
        return found != self.last_written.data and (
            self.unlanded is None or found != self.unlanded.data
        )


@dataclass(frozen=True)
class RestorePlan:
    """The files a restore would put back (only those not already as they are to be)."""

    files: tuple[FileToRestore, ...]
    from_message_id: int | None = None
    undoes: int | None = None

    @property
    def conflicts(self) -> list[FileToRestore]:
        """Files changed since Koroku wrote them: the app asks about each."""
        return [item for item in self.files if item.problem is None and item.changed]

    @property
    def blocked(self) -> list[FileToRestore]:
        """Files that cannot be put back (``problem`` says why): a restore refuses each."""
        return [item for item in self.files if item.problem is not None]


@dataclass
class RestoreReport:
    """What a restore did: files put back or removed, and one sentence per file left alone."""

    restore_id: int | None = None
    """The restore's record; ``None`` when it put back nothing (nothing to undo)."""
    restored: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the user."""
        done = f"{len(self.restored)} file{'s' * (len(self.restored) != 1)} put back"
        if not self.refused:
            return f"{done}."
        left = len(self.refused)
        return f"{done}; {left} left as {'they are' if left > 1 else 'it is'}."


async def plan_rewind(
    store: RestoreStore, workspace: Path, from_message_id: int, session_id: int | None = None
) -> RestorePlan:
    """What rewinding to before ``from_message_id`` would put back: each file the calls
    from there on wrote, to its state before the first of them. ``session_id``: whose
    calls (a fork's source); the current session's when ``None``."""
    writes = await store.first_file_writes_from(from_message_id, session_id)
    plan = await _plan(store, await _resolved(workspace), writes)
    return RestorePlan(plan, from_message_id=from_message_id)


async def plan_undo(store: RestoreStore, workspace: Path, restore_id: int) -> RestorePlan:
    """What undoing restore ``restore_id`` would put back: each file as that restore found it."""
    record = await store.file_restore(restore_id)
    if record is None:
        raise ValueError(f"There is no file restore {restore_id}.")
    if record.undone_by is not None:
        raise ValueError(f"File restore {restore_id} was already undone.")
    plan = await _plan(store, await _resolved(workspace), await store.restored_files(restore_id))
    return RestorePlan(plan, undoes=restore_id)


async def _plan(
    store: RestoreStore, workspace: Path, writes: Sequence[FileWrite]
) -> tuple[FileToRestore, ...]:
    first: dict[bytes, FileWrite] = {}
    for write in writes:
        first.setdefault(write.path, write)  # the state before the first write wins
    files = []
    for path, write in first.items():
        last = await store.last_file_write(path)
        last_written = last.after if last is not None else write.after
        shown, found, problem = await asyncio.to_thread(_look, workspace, path)
        unlanded = last.before if last is not None else None
        item = FileToRestore(path, shown, write.before, last_written, found, problem, unlanded)
        if item.needed:
            files.append(item)
    return tuple(files)


async def restore_files(
    store: RestoreStore, workspace: Path, plan: RestorePlan, *, overwrite: Collection[bytes] = ()
) -> RestoreReport:
    """Put back the plan's files; those changed since Koroku wrote them only if in ``overwrite``.

    The restore is recorded in the store's current session (after a fork, the
    fork: its undo is there), each file (what was found, what is put) before it
    is written. Never raises for a file: each one refused is a sentence in the
    report. A ``StoreError`` (another window holds the session, the disk is
    full) stops it: files after that one are not touched.
    """
    report = RestoreReport()
    workspace = await _resolved(workspace)
    for item in plan.files:
        if item.problem is not None or item.found is None:
            report.refused.append(item.problem or f"{item.shown} cannot be restored.")
            continue
        if item.changed and item.path not in overwrite:
            report.refused.append(
                f"{item.shown} was changed since Koroku wrote it, so it was not restored."
            )
            continue
        if report.restore_id is None:
            report.restore_id = await store.begin_file_restore(
                plan.from_message_id, undoes=plan.undoes
            )
        kept = await store.keep_restored_file(report.restore_id, item.path, item.found, item.target)
        try:
            await asyncio.to_thread(_put_back, workspace, item)
        except ToolError as exc:
            # The file was not touched: a record saying it was put back would make the
            # next restore call it changed, and an empty undo would hide the one it undid.
            await store.forget_restored_file(report.restore_id, kept)
            report.refused.append(str(exc))
            continue
        report.restored.append(item.shown)
    if not report.restored:
        report.restore_id = None  # its record went with its last file
    return report


async def _resolved(workspace: Path) -> Path:
    """The workspace as the tools hold it (``ToolSettings`` resolves it): stored paths are."""
    return await asyncio.to_thread(Path.resolve, workspace)


def restore_diff(item: FileToRestore) -> FileChange:
    """What restoring ``item`` would change in the file as it is now (for the app to ask).

    Slow on large files (``difflib``): run it off the UI's loop. Beyond
    ``MAX_PREVIEW_BYTES`` no diff is computed (a near-20 MB file took minutes),
    and each line is cut to ``MAX_LINE_CHARS`` (a minified file is one line).
    """
    now = item.found.data if item.found is not None else None
    return _diff(item.shown, now, item.target.data)


def _diff(shown: str, old: bytes | None, new: bytes | None) -> FileChange:
    if b"\x00" in (old or b"")[:8192] or b"\x00" in (new or b"")[:8192]:
        return FileChange(shown, exists=old is not None, unreadable="A binary file: no diff shown.")
    largest = max(len(old or b""), len(new or b""))
    if largest > MAX_PREVIEW_BYTES:
        return FileChange(
            shown,
            exists=old is not None,
            unreadable=f"{largest:,} bytes: too large to compare, so no diff is shown.",
        )
    old_lines = [] if old is None else old.decode("utf-8", "replace").split("\n")
    new_lines = [] if new is None else new.decode("utf-8", "replace").split("\n")
    diff = list(
        difflib.unified_diff(
            old_lines, new_lines, fromfile=f"now/{shown}", tofile=f"restored/{shown}", lineterm=""
        )
    )
    return FileChange(
        shown,
        exists=old is not None,
        lines=[cut_line(line) for line in diff[:MAX_DIFF_LINES]],
        more_lines=max(0, len(diff) - MAX_DIFF_LINES),
    )


def _text_of(path: bytes) -> str:
    """``path`` as ``locate`` reads it (absolute, escaped like the model's paths)."""
    return shown_path(path.split(b"/"))


def _shown(workspace: Path, path: bytes) -> str:
    root = os.fsencode(workspace).rstrip(b"/") + b"/"
    inside = path[len(root) :] if path.startswith(root) else path
    return shown_path(inside.split(b"/"))


def _look(workspace: Path, path: bytes) -> tuple[str, FileState | None, str | None]:
    """What is at ``path`` now: ``(shown, state, None)``, or ``(shown, None, why not)``."""
    shown = _shown(workspace, path)
    try:
        with os_errors(shown), locate(workspace, _text_of(path), follow_last=False) as where:
            return shown, _state_at(shown, workspace, path, where), None
    except ToolError as exc:
        return shown, None, str(exc)


def _state_at(shown: str, workspace: Path, path: bytes, where: Located) -> FileState:
    """The state of what ``where`` names, never through a link."""
    if absolute_path(workspace, where) != path:
        # The stored path has no link in it (the walk resolved them when it was
        # written): the walk now led elsewhere, so a folder on the way became a link.
        raise ToolError(
            f"A folder on the way to {shown} is now a symbolic link; a restore follows "
            "no link, so it was left as it is."
        )
    status = where.status
    if status is None:
        return FileState(None)
    if stat.S_ISLNK(status.st_mode):
        raise ToolError(
            f"{shown} is now a symbolic link; a restore follows no link, so it was left as it is."
        )
    if stat.S_ISDIR(status.st_mode):
        raise ToolError(f"{shown} is now a folder, so it was left as it is.")
    return read_state(shown, where, "restore")


def _put_back(workspace: Path, item: FileToRestore) -> None:
    """Write (or remove) one file, if it is still as the plan found it."""
    assert item.found is not None
    making = item.target.exists
    with (
        os_errors(item.shown),
        locate(workspace, _text_of(item.path), make_folders=making, follow_last=False) as where,
    ):
        found = _state_at(item.shown, workspace, item.path, where)
        if found.data != item.found.data:
            raise ToolError(
                f"{item.shown} changed while it was being restored; it was left as it is."
            )
        assert where.name is not None
        if item.target.data is None:
            if where.status is not None:
                os.unlink(where.name, dir_fd=where.folder_fd)
            return
        mode = item.target.mode if item.target.mode is not None else _NEW_FILE_MODE
        replace_file(item.shown, where, item.target.data, mode, where.status)
