"""Plain records of file snapshots and restores (see ``store/file_snapshots.py``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FileRestoreRecord", "FileState", "FileWrite"]


@dataclass(frozen=True, slots=True)
class FileState:
    """A file's state: its bytes and permission bits, or ``data=None``: no such file."""

    data: bytes | None
    mode: int | None = None

    @property
    def exists(self) -> bool:
        """True when there was a file (``data`` holds its bytes)."""
        return self.data is not None


@dataclass(frozen=True, slots=True)
class FileWrite:
    """One snapshot row: a file before and after one write by Koroku (a call or a restore)."""

    id: int
    path: bytes
    """The path as the writer gave it (opaque to the store)."""
    message_id: int | None
    """The model row of the ``write_file`` call; ``None`` for a restore's row."""
    before: FileState
    after: FileState


@dataclass(frozen=True, slots=True)
class FileRestoreRecord:
    """A restore: files put back to their state before a message (or an undone restore's)."""

    id: int
    session_id: int
    from_message_id: int | None
    """The message whose turns' writes were taken back (``None`` for an undo)."""
    undoes: int | None
    """The restore this one undid, if it is an undo."""
    created_at: float
    undone_by: int | None
    """The restore that undid this one, if any."""
    files: int
    """How many files it wrote or removed."""
