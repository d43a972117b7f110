"""Shared pieces of the rewind-with-files tests: a turn that writes files, and reading snapshots."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply


def writes(fake: FakeGemini, *files: tuple[str, str], answer: str = "Done.") -> None:
    """Script one turn: the model writes ``files`` (path, content) in one step, then answers."""
    calls = [("write_file", {"path": path, "content": content}) for path, content in files]
    fake.add(call_reply(*calls), text_reply(answer))


def snapshot_rows(db: Path) -> list[dict[str, Any]]:
    """Every file snapshot in the database, oldest first, with its contents."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(
            "SELECT s.*, b.data AS before_data, a.data AS after_data FROM file_snapshots AS s "
            "LEFT JOIN file_contents AS b ON b.hash = s.before_hash "
            "LEFT JOIN file_contents AS a ON a.hash = s.after_hash ORDER BY s.id"
        ).fetchall()
        return [dict(row) for row in rows]
    finally:
        conn.close()
