"""Python's full garbage collections wait while a turn runs.

A step of a thousand calls makes some ten thousand objects that live on
(calls, answers, their rows and wire forms), and Python's collector, which
scans every object made since start-up (``cli.freeze_heap`` exempts the
earlier ones) once a quarter as many are new, ran a full collection two or
three times during such a step: 15-35 ms each, with the GIL held, so the
keys and frames waited. While a turn runs the oldest generation's threshold
is raised out of reach; the young generations are still collected (short
cycles are freed as before), and the full collection runs as usual once no
turn is left.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["HELD_THRESHOLD", "hold", "release"]

HELD_THRESHOLD = 1_000_000
"""The oldest generation's threshold while a turn runs: gen1 collections it never reaches."""

_lock = threading.Lock()
_holders = 0
_saved: int | None = None


def hold() -> None:
    """A turn starts: no full collection until every turn that held them released them."""
    global _holders, _saved
    with _lock:
        _holders += 1
        if _holders == 1:
            young, middle, _saved = gc.get_threshold()
            gc.set_threshold(young, middle, HELD_THRESHOLD)


def release() -> None:
    """A turn ends: the process's own threshold again once no turn holds it."""
    global _holders, _saved
    with _lock:
        if _holders == 0:
            return
        _holders -= 1
        if _holders == 0 and _saved is not None:
            young, middle, _ = gc.get_threshold()
            gc.set_threshold(young, middle, _saved)
            _saved = None
