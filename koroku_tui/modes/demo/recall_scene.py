"""The demo's total-recall scene: the user asks about an earlier session, the model looks it up.

"What did we decide about the backup script last time?" makes the scripted
model call ``search_history``, then ``read_session`` on the first hit's
session (the ids are read from the search's answer, as a real model would),
then answer citing ``session N``. So that there is something to find, the
demo's database holds one earlier session with a memorable decision
(``seed_earlier_session``), stored through the ``SessionManager`` a few
days back, the first time the demo runs.

Pure functions over the request's tool exchanges: the script stays stateless.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from koroku_tui.events import SessionEvent, TextPart
from koroku_tui.store import SessionManager
from koroku_tui.text import recall

__all__ = [
    "DEFAULT_TOPIC",
    "EARLIER_SESSION",
    "EARLIER_TITLE",
    "RECALL",
    "SEARCH_LIMIT",
    "FirstHit",
    "Step",
    "best_line",
    "first_hit",
    "next_step",
    "recall_topic",
    "seed_earlier_session",
]

EARLIER_TITLE = "Backup script decision"
EARLIER_SESSION: tuple[tuple[str, str], ...] = (
    ("user", "Can we settle how the backup script should work? I keep putting it off."),
    (
        "model",
        "Here is a plan: run it nightly, copy ~/Documents and ~/Projects, keep old copies "
        "for a while. Which machine should it copy to?",
    ),
    ("user", "The NAS in the hall. And keep a month of history."),
    (
        "model",
        "Decided: the backup script runs every night at 02:00, copies ~/Documents and "
        "~/Projects to the NAS with rsync, and keeps 30 daily snapshots.",
    ),
)
"""The earlier demo session: a decision the scene finds again."""

DEFAULT_TOPIC = "backup script"
"""Searched when the user's words name no topic ("do you remember?")."""

SEARCH_LIMIT = 30
"""Hits asked for: enough that the earliest mention is among them after many demo runs."""

_DAYS_AGO = 3
_SEED_MARK = "30 daily snapshots"
"""Words only the seeded decision says: found means the session is there already."""

RECALL = re.compile(
    r"\b(remember\w*|recall\w*|last time|earlier session|previous session|"
    r"did we (decide|agree|say|settle)\w*|we decided)\b"
)
"""Words that refer to an earlier conversation."""

_ABOUT = re.compile(r"\b(?:about|on|regarding)\s+(.+)", re.IGNORECASE)
_FILLER = frozenset(
    {"a", "an", "the", "our", "my", "we", "us", "last", "time", "month", "week", "again"}
    | {"session", "sessions", "earlier", "previous", "before", "ago", "did", "do", "you"}
    | {"remember", "recall", "decide", "decided", "what", "that", "this", "it"}
)
_HIT = re.compile(r"^session (\d+) .*· message (\d+) · .* · ([^·\n]+)$", re.MULTILINE)
"""A hit's heading: ``session N "title" · message M · when · who``."""


def recall_topic(said: str) -> str:
    """What to search for: the words after "about", filler dropped (at most four)."""
    found = _ABOUT.search(said)
    words = re.findall(r"[\w'-]+", found.group(1) if found else "")
    kept = [w for w in words if w.lower() not in _FILLER][:4]
    return " ".join(kept) or DEFAULT_TOPIC


@dataclass(frozen=True)
class FirstHit:
    """The hit of a ``search_history`` answer to read: where the thing was first said."""

    session_id: int
    message_id: int


def first_hit(answer: str) -> FirstHit | None:
    """The earliest model message among the hits (else the best hit), or ``None``.

    The user asks what was decided: the source is the earliest place the
    model said it. Later sessions only repeat it (the demo's own answers to
    this very question quote it, and would otherwise be found first).
    """
    if not recall.matches_in(answer):
        return None
    hits = [
        (FirstHit(int(found.group(1)), int(found.group(2))), found.group(3).strip())
        for found in _HIT.finditer(answer)
    ]
    said_by_model = [hit for hit, who in hits if who == "model"]
    if said_by_model:
        return min(said_by_model, key=lambda hit: hit.message_id)
    return hits[0][0] if hits else None


def best_line(excerpt: str, topic: str) -> str | None:
    """The message line of a ``read_session`` answer sharing most words with ``topic``.

    Ties go to the later line: a decision comes after the question that led to it.
    """
    wanted = {w.lower() for w in re.findall(r"\w+", topic)}
    best: tuple[int, str] | None = None
    for line in excerpt.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "session ", "before:", "after:")):
            continue
        score = len(wanted & {w.lower() for w in re.findall(r"\w+", line)})
        if score and (best is None or score >= best[0]):
            best = (score, line)
    return best[1] if best else None


@dataclass(frozen=True)
class Step:
    """The scripted model's next step: a call (``text`` said before it), or the answer."""

    text: str
    call: tuple[str, dict[str, Any]] | None = None


def next_step(said: str, responses: list[dict[str, Any] | None]) -> Step:
    """Search, then read the first hit's session, then answer citing it.

    ``responses`` are this turn's tool responses so far, in call order.
    """
    topic = recall_topic(said)
    if not responses:
        call = ("search_history", {"query": topic, "limit": SEARCH_LIMIT})
        return Step("That was in an earlier session; let me look it up.", call)
    found = _output(responses[0])
    if found is None:
        return Step(f"I could not search: {_error(responses[0])}")
    hit = first_hit(found)
    if hit is None:
        return Step(
            f"I searched every earlier session for **{topic}** and found nothing. "
            "Try other words, or open the history (`ctrl+r`) to look yourself."
        )
    if len(responses) == 1:
        args = {"session_id": hit.session_id, "around_message_id": hit.message_id}
        return Step("", ("read_session", args))
    excerpt = _output(responses[-1])
    line = best_line(excerpt, topic) if excerpt is not None else None
    if line is None:
        return Step(
            f"Session {hit.session_id} mentions **{topic}**, but I could not read it "
            f"({_error(responses[-1])})."
        )
    return Step(
        f"From **session {hit.session_id}**:\n\n> {line}\n\n"
        "I found it with `search_history` and read it with `read_session`: select "
        "the search row above (Enter or a click) to see every hit."
    )


def _output(response: dict[str, Any] | None) -> str | None:
    value = (response or {}).get("output")
    return value if isinstance(value, str) else None


def _error(response: dict[str, Any] | None) -> str:
    error = " ".join(str((response or {}).get("error") or "no answer").split())
    return error if len(error) <= 200 else error[:199] + "…"


async def seed_earlier_session(database: Path, *, now: float | None = None) -> bool:
    """Store ``EARLIER_SESSION`` a few days back, unless it is there already; True if stored.

    Opens the demo's database through the ``SessionManager`` (never SQL) and
    leaves the current session as it found it: the demo starts a new one anyway.
    """
    stamp = (now or time.time()) - _DAYS_AGO * 86_400
    async with SessionManager(database) as store:
        # A phrase, and in the seeded session: any message with "daily" (the
        # files scene reads one) must not pass for the seeded decision.
        hits = await store.search(f'"{_SEED_MARK}"', 10)
        if any(hit.session_title == EARLIER_TITLE for hit in hits):
            return False
        current = await store.get_session(store.session_id)
        if current.message_count:
            await store.new_session(EARLIER_TITLE)
        else:  # a new database opens on an empty session: use it, leave no blank one behind
            await store.rename_session(current.id, EARLIER_TITLE)
        for n, (role, text) in enumerate(EARLIER_SESSION):
            event = SessionEvent(role=role, parts=[TextPart(text=text)])
            await store.add_message(event, created_at=stamp + 60 * n)
    return True
