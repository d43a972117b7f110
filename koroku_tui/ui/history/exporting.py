"""Writing a session to a Markdown file, for the history screen's export action."""

from __future__ import annotations

import asyncio
from pathlib import Path

from koroku_tui.export import export_filename, export_markdown
from koroku_tui.store import SessionManager
from koroku_tui.ui.safe_text import sanitize

__all__ = ["export_session"]


async def export_session(manager: SessionManager, session_id: int, folder: Path) -> Path:
    """Write ``<title-slug>-<id>.md`` into ``folder`` and return its path.

    The whole history is read (what compaction hid included). Control
    characters are stripped: the file may well be ``cat``-ed in a terminal.
    Raises ``StoreError`` when reading fails and ``OSError`` when writing does.
    """
    info = await manager.get_session(session_id)
    messages = await manager.load_all(session_id)
    path = folder / export_filename(info)
    text = sanitize(export_markdown(info, messages))
    # Off the event loop: a large export to a slow disk must not freeze the UI.
    await asyncio.to_thread(path.write_text, text, encoding="utf-8")
    return path
