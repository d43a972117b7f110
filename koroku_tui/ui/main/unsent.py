"""``unsent.txt`` in the Koroku home: the queues windows closed with, for the next start.

One JSON line per closing window (appended in one write, so two windows
closing together both keep theirs), with the session the messages were
queued for: the next start may open another session, and must say so rather
than slip them into it unnoticed. The next start takes the file by renaming
it first: two windows starting together cannot both restore the same queue.
A file of the older format (the bare text) is read as one block.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["UNSENT_FILENAME", "Unsent", "keep", "take"]

logger = logging.getLogger(__name__)

UNSENT_FILENAME = "unsent.txt"
"""In the Koroku home: the queues left when windows closed, back in the prompt next time."""


@dataclass(frozen=True)
class Unsent:
    """One window's queue, as it closed."""

    texts: list[str]
    session_id: int | None
    title: str


def keep(home: Path, block: Unsent) -> None:
    """Append ``block`` to ``unsent.txt`` (raises ``OSError``)."""
    home.mkdir(parents=True, exist_ok=True)
    line = json.dumps(
        {"session": block.session_id, "title": block.title, "texts": block.texts},
        ensure_ascii=True,  # one line whatever the texts hold
    )
    path = home / UNSENT_FILENAME
    with path.open("a+b") as file:
        file.seek(0, os.SEEK_END)
        if file.tell() > 0:
            file.seek(-1, os.SEEK_END)
            if file.read(1) != b"\n":  # an older Koroku's file: its text ends unterminated
                line = "\n" + line
        file.write((line + "\n").encode())  # one write: two windows' lines do not mix


def take(home: Path) -> list[Unsent]:
    """The kept queues, oldest first, and the file gone; [] when there are none."""
    path = home / UNSENT_FILENAME
    taken = path.with_name(f"{UNSENT_FILENAME}.{os.getpid()}.taking")
    try:
        path.rename(taken)  # atomic: a second window starting finds nothing
    except FileNotFoundError:
        return []
    except OSError:
        logger.exception("could not take %s", path)
        return []
    try:
        raw = taken.read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        logger.exception("could not read %s; left as %s", path, taken)
        return []
    taken.unlink(missing_ok=True)
    return _parse(raw)


def _parse(raw: str) -> list[Unsent]:
    """Our JSON lines; any other lines (an older Koroku's bare text) make a block each run."""
    blocks: list[Unsent] = []
    older: list[str] = []
    for line in raw.splitlines():
        block = _block(line)
        if block is None:
            older.append(line)
            continue
        if older:
            blocks.append(Unsent(["\n".join(older)], None, ""))
            older = []
        blocks.append(block)
    if older:
        blocks.append(Unsent(["\n".join(older)], None, ""))
    return [
        Unsent(texts, b.session_id, b.title)
        for b in blocks
        if (texts := [t for t in b.texts if t.strip()])
    ]


def _block(line: str) -> Unsent | None:
    """One window's block, or None when ``line`` is not one."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("texts"), list):
        return None
    session, title = data.get("session"), data.get("title")
    return Unsent(
        [t for t in data["texts"] if isinstance(t, str)],
        session if isinstance(session, int) and not isinstance(session, bool) else None,
        title if isinstance(title, str) else "",
    )
