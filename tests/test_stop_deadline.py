"""The stop deadline: a wedged clean stop still ends the process, and says so.

A real Python process installs :class:`StopSignals`, sends itself SIGTERM,
then blocks its event loop, as a Textual app writing to a closed terminal
does. It must exit with 143 within the grace time and write one line to
stderr, and the signal handler must not start a thread (``threading``'s
locks may be held by the code the signal interrupted).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.timeout(60)

WEDGED = textwrap.dedent(
    """
    import asyncio, signal, threading, time
    from koroku_tui.agent.loop.stopping import StopSignals

    async def main():
        signals = StopSignals(lambda signum: None, grace=0.2)
        signals.install()
        before = threading.active_count()
        signal.raise_signal(signal.SIGTERM)  # the handler runs right here
        print(before, threading.active_count(), flush=True)
        time.sleep(30)  # the loop is stuck; only the deadline can end this

    asyncio.run(main())
    """
)


def test_a_wedged_stop_exits_after_the_grace_time_and_says_so() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WEDGED], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 143, done.stderr
    before, after = done.stdout.split()
    assert after == before  # no thread was started in the signal handler
    assert done.stderr == "koroku-tui: stopping took more than 0.2 s; exiting now.\n"
