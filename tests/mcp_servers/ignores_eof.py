"""A stdio MCP server that outlives its client: it ignores stdin's end, SIGTERM, SIGHUP and SIGINT.

Usage: python ignores_eof.py [--pid-file PATH] [--child-pid-file PATH]
                             [--child-regroups] [--lifetime SECONDS]

At start it forks a child that ignores the same signals and never reads
stdin (it keeps the inherited pipes open); ``--child-regroups`` puts that
child in a process group of its own (still in the server's session), as GNU
``timeout`` would. Only SIGKILL ends either before ``--lifetime`` (120 s by
default: a safety net, so a failed test leaves nothing running for long).

Each pid file gets the pid and a newline (``helpers.processes.wait_for_pid``
reads it). Each trapped signal is reported on stderr as ``server ignored
SIGTERM`` / ``child ignored SIGTERM``, and stdin's end as ``server ignored
EOF on stdin``, so a test can wait for those lines instead of sleeping.
Tools: ``echo``, and ``pids``, answering ``{"server": pid, "child": pid}``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: holds mcp_servers.raw_rpc
from mcp_servers.raw_rpc import RawServer, RawTool, echo_tool, says

TRAPPED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)

who = "server"
"""Which process a report comes from (the child sets it after the fork)."""


def report(text: str) -> None:
    """One line on stderr, in one write: the server's and the child's lines never interleave."""
    os.write(sys.stderr.fileno(), f"{who} {text}\n".encode())


def ignore(signum: int, frame: FrameType | None) -> None:
    """Say a signal came, and carry on."""
    report(f"ignored {signal.Signals(signum).name}")


def live_until(deadline: float) -> None:
    """Do nothing (signals included) until the safety-net deadline."""
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(left, 1.0))


def write_pid(path: str | None) -> None:
    """Write this process's pid and a newline to ``path``, if one is given."""
    if path is not None:
        Path(path).write_text(f"{os.getpid()}\n")


def main() -> None:
    """Fork the child, then serve; after stdin ends, stay anyway."""
    global who
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pid-file", default=None)
    parser.add_argument("--child-pid-file", default=None)
    parser.add_argument("--child-regroups", action="store_true")
    parser.add_argument("--lifetime", type=float, default=120.0, metavar="SECONDS")
    options = parser.parse_args()
    deadline = time.monotonic() + options.lifetime
    for signum in TRAPPED:
        signal.signal(signum, ignore)
    child = os.fork()
    if child == 0:
        who = "child"
        if options.child_regroups:
            os.setpgid(0, 0)
        write_pid(options.child_pid_file)
        live_until(deadline)
        os._exit(0)
    write_pid(options.pid_file)
    pids = json.dumps({"server": os.getpid(), "child": child})
    RawServer(
        "ignores-eof", [echo_tool(), RawTool("pids", says(pids), "This server's pids.")]
    ).serve()
    report("ignored EOF on stdin")
    live_until(deadline)


if __name__ == "__main__":
    main()
