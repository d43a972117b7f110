"""A command's processes die with Koroku, however Koroku ends (Linux and other POSIX).

Koroku kills the command's process group itself on every path it lives to
see: the command ends, its time limit, a cancel, SIGTERM or SIGHUP (see
``koroku_tui/agent/loop/stopping.py``). Against a death it does not see (SIGKILL, a
crash, the OOM killer) the command is started with two guards:

1. **The lifeline** (the one that covers the whole group): the shell is given
   the read end of a pipe whose only write end Koroku holds, close-on-exec.
   Before it runs the command, the shell starts a tiny watcher in the
   command's process group that blocks reading that pipe. The kernel closes
   Koroku's descriptors however it dies, so the watcher reads end-of-file
   and kills the command's whole session (``KILL_SESSION_SCRIPT``): the
   shell, a foreground ``sleep``, background jobs, and what moved into a
   group of its own (``timeout``, ``set -m``). It needs no timing: if Koroku
   is already gone when the watcher starts, it reads end-of-file at once.
2. **PR_SET_PDEATHSIG** (Linux): the shell itself asks the kernel for SIGKILL
   when its parent dies, set in the child before exec. It does not carry over
   to the shell's own children (the kernel clears it on fork), hence the
   lifeline. The kernel sends it when the parent *thread* that forked the
   child exits, not the process: asyncio spawns from the event loop's
   thread, which lives as long as the loop does, so this holds as long as
   Koroku's loop is not run in a short-lived thread.

What can still survive: a process that leaves the session on purpose
(``setsid``, a daemon that double-forks into its own session) and a watcher
killed by the command itself; the time-limit and cancel paths cannot reach
those either.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable

__all__ = ["KILL_SESSION_SCRIPT", "LIFELINE_SCRIPT", "Lifeline", "die_with_parent"]

LIFELINE_SCRIPT = (
    # Keep the pipe on fd 3 and give the command no input, as before.
    "exec 3<&0 </dev/null; "
    # The watcher: blocks until Koroku's end of the pipe closes, then kills
    # the session (this shell's pid ``$$`` is its id: start_new_session). It
    # execs a fresh shell so that the killer's own ``$$`` is its pid and it
    # can spare itself until the end. Its output goes nowhere so it never
    # holds the command's output pipes open.
    '(read _ <&3; exec /bin/sh -c "$2" koroku-watcher $$) >/dev/null 2>&1 & '
    # The command runs in a fresh shell with this pid and without the pipe;
    # the watcher is not one of its jobs.
    'exec 3<&-; exec /bin/sh -c "$1"'
)
"""Run by ``/bin/sh -c`` with the command as ``$1``, ``KILL_SESSION_SCRIPT`` as ``$2``
and the lifeline pipe as stdin."""

KILL_SESSION_SCRIPT = (
    "sid=$1; "
    # Linux: every process whose session (field 6 of /proc/PID/stat; after
    # the last ") " it is the 4th) is the command's, zombies aside, pass after
    # pass while a pass found one (a process may fork meanwhile), at most 50.
    "if [ -r /proc/self/stat ]; then n=0; while [ $n -lt 50 ]; do found=; "
    'for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = "$$" ] && continue; '
    'read -r s < "$d/stat" || continue; s=${s##*") "}; set -- $s; '
    '[ "$1" != Z ] && [ "$4" = "$sid" ] && kill -9 "$p" && found=1; '
    'done; [ -z "$found" ] && break; n=$((n + 1)); done; fi; '
    # Everywhere: the group, this watcher included, last.
    "kill -9 0"
)
"""Run by the watcher as ``/bin/sh -c`` with the session id as ``$1``."""

_PR_SET_PDEATHSIG = 1


class Lifeline:
    """The pipe of one command: the child gets ``read_end``, Koroku holds the write end.

    Use as a context manager around the command's life. Each end is closed
    exactly once (a second close could hit a descriptor reused meanwhile by
    another thread, such as the database's).
    """

    def __init__(self) -> None:
        # Non-inheritable (PEP 446): no other child can hold the write end.
        self.read_end, self._write_end = os.pipe()
        self._open = {self.read_end, self._write_end}

    def child_started(self) -> None:
        """Drop Koroku's copy of the read end once the child holds its own."""
        self._close(self.read_end)

    def _close(self, fd: int) -> None:
        if fd in self._open:
            self._open.discard(fd)
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> Lifeline:
        return self

    def __exit__(self, *exc_info: object) -> None:
        # Closing the write end alone would make the watcher kill the group;
        # the caller has already killed it, this only releases the pipe.
        for fd in list(self._open):
            self._close(fd)


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when Koroku dies; None off Linux.

    The libc function is looked up here, in the parent: the child only makes
    the call, so nothing between fork and exec imports or takes a lock.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    kill = int(signal.SIGKILL)

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)  # Koroku died before the request took effect

    return arm
