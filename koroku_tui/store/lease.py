"""One writer per session: the lease a process holds while a turn runs on a session.

Two Koroku windows (or several ``--print`` runs) on one conversation would
otherwise interleave their turns, and the history the model sees would pair
one window's tool calls with the other's results. So a turn starts by taking
the session's row in ``session_leases``, in the same transaction that stores
the user's message, and ends by deleting it. Another writer finds the row and
waits, then gives up with one sentence.

A lease whose holder died (crash, SIGKILL, power cut) must not lock the
session for ever. On the same host the holder's pid is checked, and its
process start time too, so a pid reused by an unrelated process does not
count as the holder. A holder on another host (a home on a network share)
cannot be checked: its lease lapses when it has not written for
``FOREIGN_HOST_LAPSE`` seconds.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from dataclasses import dataclass

import aiosqlite

logger = logging.getLogger(__name__)

__all__ = [
    "FOREIGN_HOST_LAPSE",
    "Holder",
    "Lease",
    "holder_is_alive",
    "read_lease",
    "release_lease",
    "renew_lease",
    "take_lease",
]

FOREIGN_HOST_LAPSE = 600.0
"""Seconds without a write after which a lease held from another host is taken over."""
_MAX_PID = 2**22
"""Above Linux's highest pid (and far above others'): such a row names no process."""


def process_start_time(pid: int) -> float | None:
    """When ``pid`` started, in clock ticks since boot (Linux), or ``None`` if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after
    # the last ")". Field 22, starttime, is then the 20th.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return float(fields[19])
    except (IndexError, ValueError):
        return None


@dataclass(frozen=True)
class Holder:
    """Who holds (or wants) a lease: one SessionManager of one process."""

    token: str
    pid: int
    host: str
    started: float | None

    @classmethod
    def for_this_process(cls) -> Holder:
        """A new holder identity: a random token, this process's pid, host and start time."""
        pid = os.getpid()
        return cls(secrets.token_hex(8), pid, socket.gethostname(), process_start_time(pid))


@dataclass(frozen=True)
class Lease:
    """A lease row as read from the file."""

    session_id: int
    holder: Holder
    renewed_at: float


def holder_is_alive(lease: Lease, me: Holder, now: float) -> bool:
    """Whether ``lease`` still binds ``me``: its holder may be writing right now."""
    other = lease.holder
    if other.token == me.token:
        return True
    if other.host != me.host:
        # A renewal "in the future" is a skewed clock, not a promise: it lapses too.
        return 0 <= now - lease.renewed_at < FOREIGN_HOST_LAPSE
    if not 0 < other.pid < _MAX_PID:
        return False  # not a process (os.kill(0) or (-1) would signal a whole group)
    if other.pid == me.pid:
        # Another SessionManager of this very process (a test, an embedding
        # program) is alive as long as we are, and releases on close(). A
        # process that died with this same pid (a container restarted as
        # pid 1) started at another time.
        return other.started is None or me.started is None or other.started == me.started
    try:
        os.kill(other.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    if other.started is None:
        return True
    return process_start_time(other.pid) == other.started


async def read_lease(conn: aiosqlite.Connection, session_id: int) -> Lease | None:
    """The session's lease row, if any."""
    async with conn.execute(
        "SELECT holder, pid, host, started, renewed_at FROM session_leases WHERE session_id = ?",
        (session_id,),
    ) as cursor:
        row = await cursor.fetchone()
    if row is None:
        return None
    try:
        started = None if row[3] is None else float(row[3])
        holder = Holder(str(row[0]), int(row[1]), str(row[2]), started)
        return Lease(session_id, holder, float(row[4]))
    except (TypeError, ValueError) as exc:
        # A row no Koroku wrote (hand-edited, damaged): it binds nobody, and
        # the next turn's lease replaces it.
        logger.warning("ignoring unreadable lease of session %d: %r (%s)", session_id, row, exc)
        return None


async def take_lease(
    conn: aiosqlite.Connection, session_id: int, holder: Holder, now: float
) -> None:
    """Make ``holder`` the session's writer (replacing a dead holder's row)."""
    await conn.execute(
        "INSERT OR REPLACE INTO session_leases "
        "(session_id, holder, pid, host, started, renewed_at) VALUES (?, ?, ?, ?, ?, ?)",
        (session_id, holder.token, holder.pid, holder.host, holder.started, now),
    )


async def renew_lease(
    conn: aiosqlite.Connection, session_id: int, holder: Holder, now: float
) -> None:
    """Record a write under ``holder``'s lease (keeps a cross-host lease from lapsing)."""
    await conn.execute(
        "UPDATE session_leases SET renewed_at = ? WHERE session_id = ? AND holder = ?",
        (now, session_id, holder.token),
    )


async def release_lease(conn: aiosqlite.Connection, session_id: int, holder: Holder) -> None:
    """Give the session back, if ``holder`` has it."""
    await conn.execute(
        "DELETE FROM session_leases WHERE session_id = ? AND holder = ?",
        (session_id, holder.token),
    )
