"""SIGTERM and SIGHUP (a closed terminal): stop the turn cleanly instead of dying mid-tool.

Python's default for both signals is to end the process at once, which left
an approved command running and its call unanswered. Here the running turn is
cancelled with ``INTERRUPTED_BY_STOP`` as the cancel message: the tool kills
its command's process group on the way out, and the agent answers the call
with that text (so the stored history stays valid) before the process exits
with ``128 + signal``, at the latest ``STOP_GRACE_SECONDS`` after the
signal. A SIGKILL cannot be caught; ``tools/lifeline.py`` covers it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from types import FrameType
from typing import Any, TypeVar

from koroku_tui.agent.loop.guardrail import INTERRUPTED_BY_STOP

__all__ = [
    "INTERRUPTED_BY_STOP",
    "STOP_GRACE_SECONDS",
    "STOP_SIGNALS",
    "StopSignals",
    "Stopped",
    "once_ended",
    "run_stoppable",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Stopped(Exception):
    """The work was cancelled because the process received ``signum``."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + its number."""
        return 128 + self.signum

    @property
    def name(self) -> str:
        """The signal's name, e.g. ``SIGTERM``."""
        return signal.Signals(self.signum).name


STOP_GRACE_SECONDS = 5.0
"""How long the clean stop may take before the process exits regardless.

Killing a command takes up to a second and storing its answer milliseconds;
the bound is for a stop that wedges, e.g. the full-screen app writing to a
terminal that closed (Textual then blocks for ever). Exiting still kills the
command: its lifeline closes with the process.
"""


@contextlib.asynccontextmanager
async def once_ended(lock: asyncio.Lock, grace: float = STOP_GRACE_SECONDS) -> AsyncIterator[None]:
    """Hold ``lock`` once the work under it has ended; without it after ``grace`` seconds.

    A quit cancels the turn and closes the store at once, while the turn,
    cancelled, still stores what arrived: the reply, then the answers to its
    calls. Closing in between lost the answers (a restart showed the calls
    as lost in a crash), so closing waits for the turn's last write.
    """
    try:
        await asyncio.wait_for(lock.acquire(), grace)
    except TimeoutError:
        logger.warning("the turn did not end within %g s; closing anyway", grace)
        yield
        return
    try:
        yield
    finally:
        lock.release()


class _Deadline:
    """A thread started in advance that ends the process ``grace`` seconds after ``arm``.

    ``arm`` runs in a signal handler, so it only writes one byte to a pipe:
    starting a thread there (``threading.Timer``) takes locks of the
    threading module, which the interrupted main thread may be holding.
    """

    def __init__(self, grace: float) -> None:
        self._grace = grace
        # Non-inheritable (PEP 446): a command never holds the write end.
        self._read_end, self._write_end = os.pipe()
        self._open = True
        threading.Thread(target=self._watch, name="koroku-stop-deadline", daemon=True).start()

    def arm(self, signum: int) -> None:
        """Start the count-down (async-signal-safe: one ``write``)."""
        with contextlib.suppress(OSError):
            os.write(self._write_end, bytes([signum]))

    def close(self) -> None:
        """No signal will come: the watching thread ends (an armed deadline still runs)."""
        if self._open:
            self._open = False
            os.close(self._write_end)

    def _watch(self) -> None:
        try:
            first = os.read(self._read_end, 1)
        finally:
            os.close(self._read_end)
        if not first:
            return  # closed without a signal
        time.sleep(self._grace)
        line = f"koroku-tui: stopping took more than {self._grace:g} s; exiting now.\n"
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            os.write(2, line.encode())
        os._exit(128 + first[0])


class StopSignals:
    """Calls ``on_stop(signum)`` on the event loop when SIGTERM or SIGHUP arrives.

    The Python-level handler (not ``loop.add_signal_handler``) runs in the
    main thread even while the loop is blocked, so the deadline below is set
    however stuck the loop is. Only the first signal counts: a second one
    while the turn winds down must not cut that clean-up short. Install from
    the main thread, with the loop running.
    """

    def __init__(self, on_stop: Callable[[int], None], grace: float = STOP_GRACE_SECONDS) -> None:
        self._on_stop = on_stop
        self._grace = grace
        self.received: int | None = None
        """The signal that arrived first, if any."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[signal.Signals, Any] = {}
        self._deadline: _Deadline | None = None

    def install(self) -> None:
        """Take over SIGTERM and SIGHUP (their previous handlers are kept for ``remove``)."""
        if threading.current_thread() is not threading.main_thread():
            # Signals are only delivered to the main thread's handlers: the
            # default action stays, and the lifeline still stops commands.
            logger.info("not the main thread: SIGTERM and SIGHUP keep their default action")
            return
        self._loop = asyncio.get_running_loop()
        self._deadline = _Deadline(self._grace)
        for signum in STOP_SIGNALS:
            self._previous[signum] = signal.signal(signum, self._arrived)

    def remove(self) -> None:
        """Give the signals their previous handlers back (a deadline already set stays)."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        if self._deadline is not None:
            self._deadline.close()

    def _arrived(self, signum: int, _frame: FrameType | None) -> None:
        # In a signal handler: no logging and no new thread (their locks may
        # be held right here); only set the deadline and hand the work to the loop.
        if self.received is not None or self._loop is None or self._deadline is None:
            return
        self.received = signum
        self._deadline.arm(signum)
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            self._loop.call_soon_threadsafe(self._stop, signum)

    def _stop(self, signum: int) -> None:
        logger.warning("received %s: stopping the turn and exiting", signal.Signals(signum).name)
        self._on_stop(signum)


async def run_stoppable(work: Coroutine[Any, Any, T]) -> T:
    """Await ``work``; on SIGTERM or SIGHUP cancel it and raise :class:`Stopped`.

    The cancel carries ``INTERRUPTED_BY_STOP`` so that a tool call cut short
    is answered with it. If ``work`` finishes anyway (the signal came as it
    ended), its result is returned.
    """
    task = asyncio.ensure_future(work)

    def stop(_signum: int) -> None:
        task.cancel(INTERRUPTED_BY_STOP)

    signals = StopSignals(stop)
    signals.install()
    try:
        return await task
    except asyncio.CancelledError:
        if signals.received is not None and task.cancelled():
            raise Stopped(signals.received) from None
        raise
    finally:
        signals.remove()
