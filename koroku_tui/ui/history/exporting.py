"""Writing a session to a Markdown file, for the history screen's export action."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

# Private like the database the export is read from.
from koroku_tui.privacy.file_modes import FILE_MODE
from koroku_tui.store import SessionManager
from koroku_tui.store.export import export_filename, export_markdown
from koroku_tui.ui.safe_text import sanitize

__all__ = ["export_session"]
_MAX_NAME_TRIES = 1000


async def export_session(manager: SessionManager, session_id: int, folder: Path) -> Path:
    """Write ``<title-slug>-<id>.md`` into ``folder`` and return its path.

    The whole history is read (what compaction hid included). Control
    characters are stripped: the file may well be ``cat``-ed in a terminal.
    The file is always a new one, mode 0600: an existing file (an earlier
    export, or a symbolic link planted in the folder) is never written
    through; the name gets ``-2``, ``-3``... instead. Raises ``StoreError``
    when reading fails and ``OSError`` when writing does.
    """
    info = await manager.get_session(session_id)
    messages = await manager.load_all(session_id)
    text = sanitize(export_markdown(info, messages))
    # Off the event loop: a large export to a slow disk must not freeze the UI.
    return await asyncio.to_thread(_write_new, folder, export_filename(info), text)


def _write_new(folder: Path, name: str, text: str) -> Path:
    """Write ``text`` to a file that did not exist, named ``name`` or ``<stem>-N<suffix>``."""
    stem, suffix = os.path.splitext(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    for attempt in range(1, _MAX_NAME_TRIES + 1):
        path = folder / (name if attempt == 1 else f"{stem}-{attempt}{suffix}")
        try:
            fd = os.open(path, flags, FILE_MODE)
        except FileExistsError:
            continue  # O_EXCL also refuses a symbolic link, dangling or not
        with open(fd, "w", encoding="utf-8") as file:
            file.write(text)
        return path
    raise FileExistsError(f"{folder / name} and {_MAX_NAME_TRIES - 1} variants already exist")
