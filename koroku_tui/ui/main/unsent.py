"""``unsent.txt`` in the Koroku home: the queues windows closed with, for the next start.

A window's queue holds the messages it had queued and, apart, what was in its
prompt (a draft never sent: ctrl+q or a closed terminal must not lose it).
One JSON line per closing window (appended in one write, so two windows
closing together both keep theirs), with the session the messages were
queued for: the next start may open another session, and must say so rather
than slip them into it unnoticed. The next start takes the file by renaming
it first: two windows starting together cannot both restore the same queue.
The renamed file stays until the restored text is safe again (kept at that
window's quit, or sent): a window killed before then leaves it, and the next
start takes it again.
A file of the older format (the bare text) is read as one block.

The file is read and written through ``privacy.home_files``: a link or a
FIFO in its place is refused with one sentence and left where it is, never
followed; a file over :data:`UNSENT_LIMIT` is renamed aside for the user to
read (so later closes are not appended to a file no start takes); it is
written 0600.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from koroku_tui.config.settings import UNSENT_FILENAME
from koroku_tui.privacy.home_files import (
    HomeFileError,
    append_home_file,
    check_home_file,
    read_home_file,
    size_text,
)

__all__ = ["UNSENT_FILENAME", "UNSENT_LIMIT", "Taken", "Unsent", "keep", "release", "take"]

logger = logging.getLogger(__name__)

UNSENT_LIMIT = 1_000_000
"""The most of ``unsent.txt`` put back in the prompt (a 1 MB prompt takes ~1.5 s to fill); a
larger file is left for the user to read."""


@dataclass(frozen=True)
class Unsent:
    """One window's queue, as it closed."""

    texts: list[str]
    session_id: int | None
    title: str
    draft: str = ""
    """What the prompt held (not queued), as it was typed."""


@dataclass(frozen=True)
class Taken:
    """What the next start found in ``unsent.txt``."""

    blocks: list[Unsent]
    """The kept queues, oldest first."""
    problem: str | None = None
    """One sentence for the screen: the file was refused, or held bytes that are not UTF-8."""
    held: tuple[str, ...] = ()
    """The taken files (names in the home), kept until :func:`release`: until then the
    restored text is only in a prompt, and a killed window would lose it."""


_TAKING = re.compile(re.escape(UNSENT_FILENAME) + r"\.(\d+)(?:\.\d+)?\.taking")
"""A taken file's name: the pid of the window that took it (and a number of its own)."""


def keep(home: Path, block: Unsent) -> None:
    """Append ``block`` to ``unsent.txt`` in one write (raises ``OSError``)."""
    line = json.dumps(
        {"session": block.session_id, "title": block.title, "texts": block.texts}
        | ({"draft": block.draft} if block.draft else {}),
        ensure_ascii=True,  # one line whatever the texts hold
    )
    # A line of its own: an older Koroku's file ends with its text unterminated.
    append_home_file(home, UNSENT_FILENAME, (line + "\n").encode(), on_new_line=True, one_name=True)


def take(home: Path) -> Taken:
    """The kept queues, the file renamed as taken (``held``); no blocks when there are none.

    Files a killed window had taken come first (its restored text was only in
    its prompt). A file that is refused stays where it is (one too large is
    renamed aside), and ``problem`` says why.
    """
    orphans = _adopt_orphans(home)
    taken = _take_unsent(home)
    if not orphans:
        return taken
    held = tuple(name for _, name in orphans) + taken.held
    return Taken([b for blocks, _ in orphans for b in blocks] + taken.blocks, taken.problem, held)


def release(home: Path, held: tuple[str, ...]) -> None:
    """The text taken in ``held`` is safe again (kept at quit, or sent): the files go."""
    for name in held:
        try:
            (home / name).unlink(missing_ok=True)
        except OSError as exc:  # left for the next start to take again
            logger.warning("could not remove %s: %s", home / name, exc)


def _taking_name() -> str:
    return f"{UNSENT_FILENAME}.{os.getpid()}.{time.monotonic_ns()}.taking"


def _adopt_orphans(home: Path) -> list[tuple[list[Unsent], str]]:
    """Files taken by windows that are gone (killed before they quit), renamed as ours."""
    adopted: list[tuple[list[Unsent], str]] = []
    try:
        names = sorted(entry.name for entry in os.scandir(home) if _TAKING.fullmatch(entry.name))
    except OSError:
        return []
    for name in names:
        match = _TAKING.fullmatch(name)
        if match is None or _alive(int(match.group(1))):
            continue
        ours = _taking_name()
        try:
            os.rename(home / name, home / ours)  # atomic: two windows starting adopt it once
            read = read_home_file(home, ours, limit=UNSENT_LIMIT, one_name=True)
        except OSError as exc:  # gone (another window adopted it), or refused: left
            logger.info("did not adopt %s: %s", home / name, exc)
            continue
        adopted.append((_parse(read.text), ours))
    return adopted


def _alive(pid: int) -> bool:
    """True when a process ``pid`` runs (this one included); a zombie does not.

    A window killed with -9 stays a zombie until its parent reaps it (a parent
    that exited leaves that to init, which may take its time): its pid still
    answers a signal, but it will never quit and release what it took.
    """
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process (a name's pid can be any)
        return False
    except OSError:  # someone else's process: alive
        pass
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # no /proc here: the signal's answer stands
        return True
    state = stat_line.rpartition(")")[2].split()[:1]  # after "pid (name)"
    return state not in (["Z"], ["X"])


def _take_unsent(home: Path) -> Taken:
    path = home / UNSENT_FILENAME
    taken = _taking_name()
    set_aside = _set_aside(home)
    if set_aside is not None:
        return Taken([], set_aside)
    try:
        # The file is checked before it is taken: one refused stays as it is.
        check_home_file(home, UNSENT_FILENAME, limit=UNSENT_LIMIT, one_name=True)
        os.rename(path, home / taken)  # atomic: a second window starting finds nothing
    except FileNotFoundError:
        return Taken([])
    except HomeFileError as exc:
        return Taken([], str(exc))
    except OSError as exc:
        logger.warning("could not take %s: %s", path, exc)
        return Taken([], f"{UNSENT_FILENAME} could not be read ({exc.strerror or exc}).")
    try:
        read = read_home_file(home, taken, limit=UNSENT_LIMIT, one_name=True)
    except OSError as exc:  # replaced between the two reads: left for the user
        logger.warning("could not read %s; left as %s: %s", path, taken, exc)
        return Taken([], f"{UNSENT_FILENAME} could not be read; it was left as {taken}.")
    problem = None
    if read.undecodable:
        problem = f"{UNSENT_FILENAME} held bytes that are not UTF-8; they show as \ufffd."
    return Taken(_parse(read.text), problem, (taken,))


def _set_aside(home: Path) -> str | None:
    """A regular ``unsent.txt`` too large to take, renamed beside it; the sentence saying so.

    Left in place, every later close would append to a file no start takes
    (a 2 MB paste once buried all the drafts after it); renamed, it is still
    there to read and the next close starts a new ``unsent.txt``. None: not
    such a file (a link, a FIFO...), left as it is.
    """
    path = home / UNSENT_FILENAME
    try:
        found = path.lstat()  # never follows a link
        if not stat.S_ISREG(found.st_mode) or found.st_size <= UNSENT_LIMIT or found.st_nlink > 1:
            return None
        aside = f"unsent-too-large-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
        os.rename(path, home / aside)  # renames a link itself, were one swapped in
    except FileNotFoundError:
        return None
    except OSError as exc:  # then refused as any file over the limit, and left as it is
        logger.warning("could not set %s aside: %s", path, exc)
        return None
    said = (
        f"{UNSENT_FILENAME} in the Koroku home was {size_text(found.st_size)}, more than the "
        f"{size_text(UNSENT_LIMIT)} Koroku puts back in the prompt: it was moved to {aside} "
        "for you to read (one JSON line per window that closed)."
    )
    logger.warning("%s (%s)", said, path)
    return said


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
    kept = [
        Unsent([t for t in b.texts if t.strip()], b.session_id, b.title, b.draft) for b in blocks
    ]
    return [b for b in kept if b.texts or b.draft.strip()]


def _block(line: str) -> Unsent | None:
    """One window's block, or None when ``line`` is not one."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("texts"), list):
        return None
    session, title, draft = data.get("session"), data.get("title"), data.get("draft")
    return Unsent(
        [t for t in data["texts"] if isinstance(t, str)],
        session if isinstance(session, int) and not isinstance(session, bool) else None,
        title if isinstance(title, str) else "",
        draft if isinstance(draft, str) else "",
    )
