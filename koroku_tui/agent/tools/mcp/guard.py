"""Runs one stdio MCP server so that it never outlives Koroku, however Koroku ends (POSIX).

The SDK starts a stdio server as the leader of a new session and offers no
hook to run before ``exec``. Koroku starts this file in the server's place
(``python -I -S guard.py --parent PID -- COMMAND ARGS...``, stdlib only, ~20 ms) with the
SDK's pipes; the guard

1. asks the kernel for SIGTERM when Koroku dies (``PR_SET_PDEATHSIG`` on
   Linux; elsewhere a one-second timer that looks at its parent), so even a
   SIGKILL of Koroku, which nothing in Koroku lives to see, reaches it;
2. starts the server with the same stdin, stdout and stderr (on Linux asking
   for SIGKILL when the guard dies: the SDK's own last resort kills the
   group), then drops its own copies, so the pipes close when the server ends;
3. waits: when the server ends, it kills what the server left behind in the
   session and exits with the server's status; when Koroku dies or asks it to
   stop (SIGTERM, SIGHUP, SIGINT), it kills the whole session and exits.

A server that cannot be started writes one line on its stderr ("cannot
start uvx: No such file or directory"): the line Koroku's failure sentence
quotes. What can still survive is what leaves the session on purpose
(``setsid``, a daemon), as for ``run_command``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_PASSES = 50
"""Sweeps of the session at most (a process may fork while one runs)."""
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _prctl() -> object | None:
    """libc's ``prctl`` on Linux, looked up before any fork; None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _session_members(sid: int) -> list[int]:
    """Live processes of session ``sid`` but this one (Linux ``/proc``; elsewhere none)."""
    found: list[int] = []
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return found
    me = os.getpid()
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[-1].split()
        except OSError:
            continue
        live = len(fields) > 3 and fields[0] != b"Z"
        if live and fields[3] == str(sid).encode() and int(name) != me:
            found.append(int(name))
    return found


def _sweep(server: int | None) -> None:
    """SIGKILL the server and everything else in this session (this guard excepted)."""
    if server is not None:
        _kill(server)
    if os.getsid(0) != os.getpid():
        return  # not our own session (setsid failed): Koroku may be in it
    for _ in range(_PASSES):
        members = _session_members(os.getpid())
        if not members:
            return
        for pid in members:
            _kill(pid)


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _quiet_own_pipes() -> None:
    """Point this process's stdin, stdout and stderr at /dev/null: the server holds the pipes."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def main(argv: list[str]) -> int:
    """Run ``argv`` (the server's command and arguments) under guard; returns its exit status.

    ``--parent PID`` first names Koroku: had it died before the guard got
    this far, ``getppid()`` would already name whoever adopted the guard,
    and the request to die with it would watch the wrong process.
    """
    parent = os.getppid()
    if argv[:1] == ["--parent"] and len(argv) > 1 and argv[1].isdigit():
        parent, argv = int(argv[1]), argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("koroku: the MCP guard needs a command to run", file=sys.stderr)
        return 2
    if os.getsid(0) != os.getpid():
        with contextlib.suppress(OSError):
            os.setsid()
    prctl = _prctl()
    server: int | None = None

    def stop(signum: int, _frame: object) -> None:
        _sweep(server)
        os._exit(128 + signum)

    for stop_signal in _STOP_SIGNALS:
        signal.signal(stop_signal, stop)
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)  # type: ignore[operator]
    else:

        def look_at_parent(_signum: int, frame: object) -> None:
            if os.getppid() != parent:
                stop(int(signal.SIGTERM), frame)

        signal.signal(signal.SIGALRM, look_at_parent)
        signal.setitimer(signal.ITIMER_REAL, 1.0, 1.0)
    if os.getppid() != parent:
        return 128 + int(signal.SIGTERM)  # Koroku died before the request took effect
    guard = os.getpid()
    pid = os.fork()
    if pid == 0:  # the server
        for stop_signal in (*_STOP_SIGNALS, signal.SIGALRM):
            signal.signal(stop_signal, signal.SIG_DFL)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)  # type: ignore[operator]
            if os.getppid() != guard:
                os._exit(1)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"cannot start {argv[0]}: {exc.strerror or exc}\n".encode(errors="replace"))
        os._exit(127)
    server = pid
    _quiet_own_pipes()
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            status = 0
        except InterruptedError:
            continue
        break
    _sweep(None)  # what the server left behind
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
