"""``in_daemon_thread``: awaited like ``asyncio.to_thread``, never waited for at exit."""

from __future__ import annotations

import subprocess
import sys

import pytest

from koroku_tui.daemon_thread import in_daemon_thread


async def test_the_work_returns_its_result_or_raises_its_error() -> None:
    assert await in_daemon_thread(lambda: 6 * 7) == 42
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        await in_daemon_thread(lambda: __import__("no_such_module"))


def test_a_program_that_stops_waiting_exits_while_the_work_still_runs() -> None:
    program = """
import asyncio, threading
from koroku_tui.daemon_thread import in_daemon_thread

started, never = threading.Event(), threading.Event()

def stuck():
    started.set()
    never.wait()  # an import that never ends

async def main():
    waiting = asyncio.ensure_future(in_daemon_thread(stuck))
    await asyncio.to_thread(started.wait)
    waiting.cancel()  # what quitting does to the worker awaiting it

asyncio.run(main())
print("exited")
"""
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout.strip()) == (0, "exited"), done.stderr
