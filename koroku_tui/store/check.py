"""A pre-flight check the CLI runs before it takes over the terminal."""

from __future__ import annotations

import asyncio
from pathlib import Path

from koroku_tui.store.session_manager import SessionManager


def check_database(path: Path, session_id: int | None = None, *, read_only: bool = False) -> None:
    """Open and close the database (creating or migrating it), or raise ``StoreError``.

    ``read_only``: a read-only home's file, opened without writing (see ``SessionManager``).

    Failing here, before the full-screen app starts, lets the error be one
    plain line on the terminal with a non-zero exit code.
    """

    async def _open_and_close() -> None:
        store = SessionManager(path, session_id=session_id, read_only=read_only)
        await store.initialize()
        await store.close()

    asyncio.run(_open_and_close())
