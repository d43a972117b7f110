"""Python's full garbage collections wait while a turn runs.

A step of a thousand calls makes some ten thousand objects that live on
(calls, answers, their rows and wire forms), and Python's collector, which
scans every object made since start-up (``cli.freeze_heap`` exempts the
earlier ones) once a quarter as many are new, ran a full collection two or
three times during such a step: 15-35 ms each, with the GIL held, so the
keys and frames waited. While a turn runs the oldest generation's threshold
is raised out of reach; the young generations are still collected (short
cycles are freed as before), and the full collection runs as usual a second
after the last turn ended, once the screen has drawn it.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["HELD_THRESHOLD", "RELEASE_AFTER", "hold", "release", "restored"]

HELD_THRESHOLD = 1_000_000
"""The oldest generation's threshold while a turn runs: gen1 collections it never reaches."""
RELEASE_AFTER = 1.0
"""Seconds the hold outlasts the turn: the screen is still drawing its end meanwhile.

Given back at once, the full collection a big step put off ran right away,
while the app drew the step's last rows and answer (measured: two of 38
and 70 ms in the 0.5 s after a 1,000-call turn ended).
"""

restored = threading.Event()
"""Set while the process's own threshold is in force (no turn holds it)."""
restored.set()

_lock = threading.Lock()
_holders = 0
_saved: int | None = None


def hold() -> None:
    """A turn starts: no full collection until every turn that held them released them."""
    global _holders, _saved
    with _lock:
        _holders += 1
        if _saved is None:
            young, middle, _saved = gc.get_threshold()
            gc.set_threshold(young, middle, HELD_THRESHOLD)
            restored.clear()


def release() -> None:
    """A turn ends: the process's own threshold again ``RELEASE_AFTER`` s after the last one.

    A turn that starts meanwhile keeps the hold. A timer thread, not the
    turn's event loop: a loop closed before the second is up (an agent
    closed, a test ended) would never give it back.
    """
    global _holders
    with _lock:
        if _holders == 0:
            return
        _holders -= 1
        if _holders > 0:
            return
    timer = threading.Timer(RELEASE_AFTER, _restore)
    timer.daemon = True  # never holds up the exit
    timer.start()


def _restore() -> None:
    global _saved
    with _lock:
        if _holders > 0 or _saved is None:
            return  # another turn began: it gives it back
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, _saved)
        _saved = None
        restored.set()
