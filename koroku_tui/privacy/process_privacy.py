"""Keeping a command from reading Koroku's credentials out of Koroku's own process (Linux).

A command can read ``/proc/$PPID/environ``: the environment block Koroku was
started with, which the kernel shows as it was, whatever ``os.environ``
became since (``unsetenv`` only drops a pointer). Two guards, applied once
at start-up while Koroku has a single thread:

1. :func:`blank_initial_environment` overwrites the *values* of the given
   variables in that original block with NUL bytes, in place. Only strings
   inside the block the kernel reports (``env_start``..``env_end`` in
   ``/proc/self/stat``) are touched: a string ``setenv`` made lives
   elsewhere, is not shown by the kernel, and is left alone.
2. :func:`forbid_inspection` sets ``PR_SET_DUMPABLE`` to 0: the kernel then
   refuses ``/proc/<pid>/environ``, ``mem``, ``maps`` and ptrace to
   processes of the same user that lack ``CAP_SYS_PTRACE`` (a command run as
   root with that capability can still read them, and Koroku writes no core
   dump). A command's own processes are dumpable again after ``exec``.

Both are best effort: each returns whether it took effect and never raises.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
from collections.abc import Iterable

__all__ = ["blank_initial_environment", "forbid_inspection", "is_inspectable"]

_PR_SET_DUMPABLE = 4
_PR_GET_DUMPABLE = 3
# Fields 50 and 51 of /proc/self/stat, counted after "pid (comm)".
_ENV_START_FIELD = 50 - 3


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _environment_block() -> tuple[int, int] | None:
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[_ENV_START_FIELD]), int(fields[_ENV_START_FIELD + 1])
    except (OSError, IndexError, ValueError):
        return None
    return (start, end) if 0 < start < end else None


def blank_initial_environment(names: Iterable[str]) -> list[str]:
    """NUL out the values of ``names`` in the block ``/proc/self/environ`` shows; returns those.

    Call before ``os.environ`` drops them: the entries are found through
    libc's ``environ``, which ``unsetenv`` changes.
    """
    libc = _libc()
    block = _environment_block()
    if libc is None or block is None:
        return []
    wanted = {name.encode() + b"=" for name in names}
    done: list[str] = []
    with contextlib.suppress(ValueError):  # libc without an ``environ`` symbol
        entries = ctypes.POINTER(ctypes.c_void_p).in_dll(libc, "environ")
        index = 0
        while (address := entries[index]) is not None:
            index += 1
            entry = ctypes.string_at(address)
            prefix = next((p for p in wanted if entry.startswith(p)), None)
            if prefix is None or not block[0] <= address < block[1]:
                continue
            ctypes.memset(address + len(prefix), 0, len(entry) - len(prefix))
            done.append(prefix[:-1].decode())
    return done


def forbid_inspection() -> bool:
    """Make this process non-dumpable (see the module docstring); True if it took."""
    libc = _libc()
    if libc is None:
        return False
    return bool(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)


def is_inspectable() -> bool | None:
    """Whether this process is dumpable (readable by the user's other processes); None off Linux."""
    libc = _libc()
    if libc is None:
        return None
    return bool(libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0))
