"""Killing every process of a command's session, however it regrouped itself.

A command runs as the leader of a new session (``start_new_session``), so
its pid is the session id of everything it starts. Killing its process group
was not enough: GNU ``timeout``, ``set -m`` job control and anything else
that calls ``setpgid`` move into a group of their own in the *same* session,
and survived every stop. Here every process whose session id is the
command's gets SIGKILL, pass after pass until none is left (a process may
fork while a pass runs), within a bounded time.

Only ``setsid`` (a new session, as daemons do) leaves for good; nothing a
tool can do without root follows it.

The session id cannot name a stranger while one of its processes lives: the
kernel does not reuse a pid that is still some process's session id. On
systems without ``/proc`` only the group is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

__all__ = ["kill_session", "reap_orphans", "session_members"]

_PROC = Path("/proc")
_PASS_INTERVAL = 0.01


def _processes(sid: int) -> list[tuple[int, bytes, int]] | None:
    """``(pid, state, ppid)`` of every process in session ``sid``; None without ``/proc``."""
    try:
        entries = [entry.name for entry in os.scandir(_PROC) if entry.name.isdigit()]
    except OSError:
        return None
    found: list[tuple[int, bytes, int]] = []
    for name in entries:
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                line = stat.read()
        except OSError:
            continue  # gone meanwhile
        # "pid (comm) state ppid pgrp session ...": comm may hold spaces and
        # parentheses, so split after the last ")".
        fields = line.rsplit(b")", 1)[-1].split()
        if len(fields) > 3 and fields[3] == str(sid).encode():
            found.append((int(name), fields[0], int(fields[1])))
    return found


def session_members(sid: int) -> list[int] | None:
    """Pids of the live (not zombie) processes in session ``sid``; None without ``/proc``."""
    processes = _processes(sid)
    if processes is None:
        return None
    return [pid for pid, state, _ in processes if state != b"Z"]


def reap_orphans(sid: int) -> None:
    """Reap the session's zombies that were handed to Koroku, all but the leader (``sid``).

    Orphans go to Koroku when it runs as PID 1 (a container without an
    init): nothing else would ever wait for them. The leader
    (the shell) is asyncio's to reap; the others were never asyncio's.
    """
    if os.getpid() != 1:
        return  # orphans go to init (or a subreaper such as systemd --user), not to Koroku
    for pid, state, parent in _processes(sid) or ():
        if state == b"Z" and parent == 1 and pid != sid:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


async def kill_session(sid: int, within: float) -> list[int]:
    """SIGKILL session ``sid`` until it is empty; returns what still ran after ``within`` s.

    Zombies count as gone: they hold no resources but their exit status,
    and whoever reaps them (Koroku for the shell, init for the rest) does.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(sid, signal.SIGKILL)  # the fast path, and all there is without /proc
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        members = session_members(sid)
        if not members:
            return []
        for pid in members:
            _kill(pid)
        if loop.time() >= deadline:
            return members
        # A killed process leaves the list once it is a zombie: a few ms.
        await asyncio.sleep(_PASS_INTERVAL)
