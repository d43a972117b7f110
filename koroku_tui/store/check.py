"""A pre-flight check the CLI runs before it takes over the terminal."""

from __future__ import annotations

import asyncio
from pathlib import Path

from koroku_tui.store.session_manager import SessionManager


def check_database(path: Path, session_id: int | None = None) -> None:
    """Open and close the database (creating or migrating it), or raise ``StoreError``.

    Failing here, before the full-screen app starts, lets the error be one
    plain line on the terminal with a non-zero exit code.
    """

    async def _open_and_close() -> None:
        store = SessionManager(path, session_id=session_id)
        await store.initialize()
        await store.close()

    asyncio.run(_open_and_close())
