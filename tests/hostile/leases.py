"""Lease rows no live Koroku holds: each must be taken over by the next turn, not lock the session.

One case a line: (name, SQL values for (holder, pid, host, started, renewed_at)).
"HOST" is replaced by this machine's host name, "NOW" by the current time.
"""

from __future__ import annotations

from typing import Any

STALE_LEASES: list[tuple[str, tuple[Any, ...]]] = [
    ("pid zero (os.kill would signal our group)", ("x", 0, "HOST", None, "NOW")),
    ("negative pid", ("x", -1, "HOST", None, "NOW")),
    ("pid beyond any kernel's (OverflowError in os.kill)", ("x", 2**40, "HOST", None, "NOW")),
    ("text in the pid column", ("x", "abc", "HOST", None, "NOW")),
    ("text in started", ("x", 1, "HOST", "yesterday", "NOW")),
    ("text in renewed_at", ("x", 1, "elsewhere", None, "soon")),
    ("another host, silent for an hour", ("x", 1, "elsewhere", None, "NOW-3600")),
    ("another host, renewed in the future (clock skew)", ("x", 1, "elsewhere", None, "NOW+86400")),
    (
        "this very pid, but a process that started at another time",
        ("x", "SELF", "HOST", -1.0, "NOW"),
    ),
]
