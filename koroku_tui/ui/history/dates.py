"""Human dates for the history screen, relative to an injectable clock.

The clock is a parameter (not ``datetime.now`` called inline) so tests and
snapshots render the same text whatever day they run on.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

__all__ = ["Clock", "full_when", "local_now", "short_when"]

Clock = Callable[[], datetime]
"""Returns "now" as an aware datetime; its timezone is the one dates are shown in."""


def local_now() -> datetime:
    """The real clock, in the user's local timezone."""
    return datetime.now().astimezone()


def full_when(timestamp: float, now: datetime) -> str:
    """``2025-06-01 14:05`` in ``now``'s timezone: unambiguous, for headings and messages."""
    return datetime.fromtimestamp(timestamp, tz=now.tzinfo).strftime("%Y-%m-%d %H:%M")


def short_when(timestamp: float, now: datetime) -> str:
    """A compact date for lists: ``just now``, ``5 min ago``, ``14:05``, ``Mon 14:05``, ``3 Jun``.

    Dates in the future (clock skew between machines sharing a database) fall
    back to the absolute forms rather than saying something odd like "-3 min ago".
    """
    when = datetime.fromtimestamp(timestamp, tz=now.tzinfo)
    seconds = (now - when).total_seconds()
    if 0 <= seconds < 60:
        return "just now"
    if 0 <= seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    days = (now.date() - when.date()).days
    if days == 0:
        return when.strftime("%H:%M")
    if days == 1:
        return when.strftime("yesterday %H:%M")
    if 1 < days < 7:
        return when.strftime("%a %H:%M")
    if when.year == now.year:
        return f"{when.day} {when:%b}"
    return f"{when.day} {when:%b %Y}"
