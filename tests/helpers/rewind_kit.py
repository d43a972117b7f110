"""Shared pieces of the rewind-with-files tests: a turn that writes files, and reading snapshots."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

from helpers.agent_kit import open_agent
from helpers.processes import KOROKU, koroku_env

from koroku_tui.agent.tools import ToolSettings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.store import SessionManager


def koroku(fake: FakeGemini, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``koroku-tui ARGS`` in the workspace ``tmp_path/ws``, home ``tmp_path/home``."""
    assert KOROKU is not None, "koroku-tui is not installed in the test environment"
    (tmp_path / "home").mkdir(exist_ok=True)
    return subprocess.run(
        [KOROKU, *args],
        env=koroku_env(fake, tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path / "ws",
    )


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


async def rewind_first_turn(store: SessionManager) -> int:
    """Rewind the session to before its first user message; that message's id."""
    first = (await store.user_turns())[-1]
    await store.rewind(first.id)
    return first.id


def another_window_takes_the_session(db: Path, session_id: int = 1) -> None:
    """Give the session's lease to another live holder (this pid, another token: alive)."""
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "INSERT OR REPLACE INTO session_leases VALUES (?, 'another window', ?, ?, NULL, ?)",
            (session_id, os.getpid(), socket.gethostname(), time.time()),
        )


@asynccontextmanager
async def after_a_turn_writing(
    fake: FakeGemini, tmp_path: Path, ctx: ToolSettings, *files: tuple[str, str]
) -> AsyncIterator[SessionManager]:
    """The session's store after one turn in which the model wrote ``files`` (path, content)."""
    writes(fake, *files)
    async with open_agent(fake, tmp_path, tool_settings=ctx) as agent:
        await agent.run_turn("edit")
        store = agent.session_manager
        assert store is not None
        yield store
