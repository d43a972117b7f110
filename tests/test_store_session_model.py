"""A session's model (schema 7): kept with the session, across reopenings and into forks;
and the README's schema section names every column the file has."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from pathlib import Path

from google.genai import types
from helpers.old_files import as_version

from koroku_tui.events import SessionEvent
from koroku_tui.store import SCHEMA_VERSION, SessionManager

README = Path(__file__).resolve().parents[1] / "README.md"


def said(text: str) -> SessionEvent:
    return SessionEvent.from_content(types.Content(role="user", parts=[types.Part(text=text)]))


async def test_a_new_sessions_model_is_stored_with_its_first_message_and_kept(
    tmp_path: Path,
) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        chosen = await store.set_model("gemini-3-pro-preview")  # not stored yet: no message
        assert chosen.model == "gemini-3-pro-preview"
        await store.add_message(said("hello"))
        first = store.session_id
        await store.new_session()
        assert (await store.current_session()).model is None  # a new one: the configured
        await store.add_message(said("other"))
    async with SessionManager(path, session_id=first) as store:
        assert (await store.current_session()).model == "gemini-3-pro-preview"
        fork = await store.fork(first)
        assert fork.model == "gemini-3-pro-preview"  # a fork starts with its source's
        assert (await store.set_model(None)).model is None  # back to the configured one
    async with SessionManager(path, session_id=first) as store:
        assert (await store.current_session()).model is None
        assert [s.model for s in await store.list_sessions()] == [
            "gemini-3-pro-preview",  # the fork
            None,
            None,
        ]


async def test_a_version_6_file_gains_the_column_and_keeps_its_sessions(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        await store.add_message(said("before the upgrade"))
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("ALTER TABLE sessions DROP COLUMN model")  # as version 6 made it
        as_version(conn, 6)
    async with SessionManager(path) as store:
        [info] = await store.list_sessions()
        assert (info.title, info.model) == ("before the upgrade", None)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


async def test_the_readme_names_every_column_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    async with SessionManager(path) as store:
        await store.add_message(said("hi"))
    section = README.read_text(encoding="utf-8").split("\n## The database\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert f"the current version is {SCHEMA_VERSION})" in section
    documented = set(re.findall(r"^\s+([a-z_]+)\s", section, re.MULTILINE))
    with closing(sqlite3.connect(path)) as conn:
        for table in ("sessions", "messages", "session_leases", "memories"):
            columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            assert columns <= documented, (table, columns - documented)
