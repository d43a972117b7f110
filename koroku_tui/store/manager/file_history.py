"""File snapshots and restores: what files held before Koroku wrote them.

``write_file`` keeps a file's previous state (``keep_file_write``) in its own
transaction before it writes, under the session's lease like any write of the
turn; a restore records itself (``begin_file_restore``) and each file it puts
back (``keep_restored_file``) before writing it. The store takes and returns
bytes: paths, contents and modes are the caller's (see
``koroku_tui.agent.tools.file_restore``). The SQL is ``store/file_snapshots.py``.
"""

from __future__ import annotations

from koroku_tui.store import file_snapshots
from koroku_tui.store.errors import StoreReadError, translate_errors
from koroku_tui.store.file_records import FileRestoreRecord, FileState, FileWrite
from koroku_tui.store.manager.core import now
from koroku_tui.store.manager.turns import TurnsMixin

__all__ = ["FileHistoryMixin"]


class FileHistoryMixin(TurnsMixin):
    """Snapshots of written files, and the restores that put them back."""

    async def keep_file_write(
        self, path: bytes, before: FileState, after: FileState, message_id: int, call_index: int
    ) -> int:
        """Keep ``path``'s state before a ``write_file`` call and what it will write.

        ``message_id`` is the current session's model row holding the call. One
        transaction, committed before this returns (the caller writes the file
        after); ``SessionBusyError`` while another process holds the session.
        """
        conn = self._connection()

        async def keep() -> int:
            async with self._lock:
                session_id = self.session_id
                when = now()
                async with self._transaction(conn):
                    await self._check_writable(conn, session_id, when)
                    return await file_snapshots.insert_snapshot(
                        conn,
                        session_id=session_id,
                        path=path,
                        before=before,
                        after=after,
                        when=when,
                        message_id=message_id,
                        call_index=call_index,
                    )

        return await self._shielded(keep())

    async def first_file_writes_from(
        self, message_id: int, session_id: int | None = None
    ) -> list[FileWrite]:
        """The first ``write_file`` snapshot of each path a session's calls from
        ``message_id`` on wrote (what a rewind puts back), oldest first."""
        conn = self._connection()
        async with self._lock:
            sid = self.session_id if session_id is None else session_id
            with translate_errors(self._path, StoreReadError):
                return await file_snapshots.fetch_first_writes_from(conn, sid, message_id)

    async def last_file_write(self, path: bytes) -> FileWrite | None:
        """The newest snapshot of ``path`` (a call's or a restore's): what Koroku last put there."""
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                return await file_snapshots.latest_write_of(conn, path)

    async def begin_file_restore(
        self, from_message_id: int | None, *, undoes: int | None = None
    ) -> int:
        """Record a restore in the current session (of the writes from ``from_message_id``
        on, or undoing restore ``undoes``); return its id. Its files follow with
        ``keep_restored_file``. ``SessionBusyError`` while another process holds the
        session: two windows never restore (or undo) the same session's files at once."""
        conn = self._connection()

        async def begin() -> int:
            async with self._lock:
                session_id = self.session_id
                when = now()
                async with self._transaction(conn):
                    await self._check_writable(conn, session_id, when)
                    return await file_snapshots.insert_restore(
                        conn, session_id, from_message_id, undoes, when
                    )

        return await self._shielded(begin())

    async def keep_restored_file(
        self, restore_id: int, path: bytes, before: FileState, after: FileState
    ) -> int:
        """Keep what a restore found at ``path`` and what it will put there (before writing)."""
        conn = self._connection()

        async def keep() -> int:
            async with self._lock:
                restore = await file_snapshots.fetch_restore(conn, restore_id)
                if restore is None:
                    raise ValueError(f"There is no file restore {restore_id}.")
                async with self._transaction(conn):
                    return await file_snapshots.insert_snapshot(
                        conn,
                        session_id=restore.session_id,
                        path=path,
                        before=before,
                        after=after,
                        when=now(),
                        restore_id=restore_id,
                    )

        return await self._shielded(keep())

    async def forget_restored_file(self, restore_id: int, snapshot_id: int) -> None:
        """Drop ``keep_restored_file``'s record ``snapshot_id``: the file was left untouched
        (and restore ``restore_id`` itself once it holds no file)."""
        conn = self._connection()

        async def forget() -> None:
            async with self._lock, self._transaction(conn):
                await file_snapshots.forget_restored(conn, restore_id, snapshot_id)

        await self._shielded(forget())

    async def file_restore(self, restore_id: int) -> FileRestoreRecord | None:
        """Restore ``restore_id``'s row, or ``None``."""
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                return await file_snapshots.fetch_restore(conn, restore_id)

    async def latest_file_restore(self) -> FileRestoreRecord | None:
        """The current session's newest restore that changed a file and was not undone: what
        "undo" takes back (never another window's restore, of another session)."""
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                return await file_snapshots.latest_restore(conn, self.session_id)

    async def restored_files(self, restore_id: int) -> list[FileWrite]:
        """The files restore ``restore_id`` wrote or removed, with their states before and after."""
        conn = self._connection()
        async with self._lock:
            with translate_errors(self._path, StoreReadError):
                return await file_snapshots.fetch_restore_rows(conn, restore_id)
