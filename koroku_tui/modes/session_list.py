"""``koroku-tui --list``: the conversations, one line each, to pick one for ``--session``.

Newest activity first, every stored conversation (a conversation in the trash
is left out, as the history screen's list does): its id, how many messages it
holds, when it last had one, and its title. A home without a database lists
nothing and creates nothing.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import TextIO

from koroku_tui.store import SessionInfo, SessionManager, StoreError, upgrade_pending
from koroku_tui.text.safety import escape_hidden

__all__ = ["format_sessions", "run_list"]

_PAGE = 500
_UPGRADING = "koroku-tui: updating the database after an upgrade (once; it can take a minute)…"


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


def format_sessions(sessions: list[SessionInfo]) -> list[str]:
    """The lines ``--list`` prints: a header, then one line per session."""
    id_width = max([len("ID"), *(len(str(info.id)) for info in sessions)])
    count_width = max([len("MESSAGES"), *(len(f"{info.message_count:,}") for info in sessions)])
    lines = [f"{'ID':>{id_width}}  {'MESSAGES':>{count_width}}  {'LAST ACTIVITY':<16}  TITLE"]
    for info in sessions:
        # A title is the user's text: hidden characters show as escapes.
        title = escape_hidden(info.display_title)
        lines.append(
            f"{info.id:>{id_width}}  {info.message_count:>{count_width},}  "
            f"{_when(info.updated_at):<16}  {title}"
        )
    return lines


async def _all_sessions(database: Path, read_only: bool) -> list[SessionInfo]:
    store = SessionManager(database, read_only=read_only)
    if upgrade_pending(database) and not read_only:
        print(_UPGRADING, file=sys.stderr, flush=True)
    await store.initialize()
    try:
        found: list[SessionInfo] = []
        while page := await store.list_sessions(limit=_PAGE, offset=len(found)):
            found += page
            if len(page) < _PAGE:
                break
        return found
    finally:
        await store.close()


def run_list(database: Path, out: TextIO, command: str, read_only: bool = False) -> int:
    """Print the sessions in ``database``; the exit code (1, with one sentence, on a failure).

    ``read_only``: the home cannot be written; the file is read without writing anything.
    """
    if not database.exists():
        print(f"No conversations yet in {database.parent}.", file=out)
        return 0
    try:
        sessions = asyncio.run(_all_sessions(database, read_only))
    except StoreError as exc:
        print(f"koroku-tui: {exc}", file=sys.stderr)
        return 1
    if not sessions:
        print(f"No conversations yet in {database.parent}.", file=out)
        return 0
    for line in format_sessions(sessions):
        print(line, file=out)
    print(
        f"\n{len(sessions):,} conversation{'s' if len(sessions) != 1 else ''}; "
        f"continue one with `{command} --session ID`.",
        file=out,
    )
    return 0
