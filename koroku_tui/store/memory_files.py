"""The daily memory files: ``memory/dd-mm-yyyy.md``, one ``[HH:MM]: summary`` line per compaction.

They are plain Markdown so a person (or the model, through the
``read_memory`` tool) can read what was summarised on a given day. They are
read and written through ``privacy.home_files``: a link in ``memory/`` (or a
``memory/`` that is a link) is refused, never followed.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

# Summaries quote the conversation: private like the database (0600 files, 0700 folder).
from koroku_tui.privacy.home_files import append_home_file, home_file_names, read_home_file

DAY_FORMAT = "%d-%m-%Y"
"""Memory files are named ``dd-mm-yyyy.md``."""
DAY_FILE = re.compile(r"^(\d{2})-(\d{2})-(\d{4})\.md$")
"""The name of a day's memory file (other files in ``memory/`` are not Koroku's)."""
MEMORY_FILE_LIMIT = 2_000_000
"""The most a day's memory file may hold, read or written (a summary is a few KB)."""
UNDECODABLE_NOTE = "(Some bytes of this file are not UTF-8; they show as \ufffd.)"
"""Added under a day's text that held bytes that are not UTF-8."""


def day_file(memory_dir: Path, day: datetime) -> Path:
    """The file that holds ``day``'s summaries."""
    return memory_dir / f"{day.strftime(DAY_FORMAT)}.md"


def format_memory_line(summary: str, when: datetime) -> str:
    """One line per compaction: paragraphs are joined so the line format holds."""
    flat = " ".join(summary.split())
    return f"[{when.strftime('%H:%M')}]: {flat}\n"


def append_summary(memory_dir: Path, summary: str, when: datetime | None = None) -> Path:
    """Append ``summary`` to the day's memory file and return that file's path.

    The write is fsynced: a summary is the only trace of the turns it
    replaced in the model's view, so it must survive a crash right after.
    Raises ``OSError`` (a ``HomeFileError`` with one sentence when refused).
    """
    when = when or datetime.now()
    line = format_memory_line(summary, when).encode("utf-8", errors="replace")
    name = day_file(memory_dir, when).name
    return append_home_file(
        memory_dir,
        name,
        line,
        own_folder=True,
        limit=MEMORY_FILE_LIMIT,
        on_new_line=True,
        sync=True,
    )


def read_day(memory_dir: Path, day: datetime) -> str:
    """The text of ``day``'s memory file, with a note when some bytes were not UTF-8.

    Raises ``FileNotFoundError`` when there is none, ``HomeFileError`` (one
    sentence) when it is refused: a link, not a regular file, too large.
    """
    read = read_home_file(
        memory_dir, day_file(memory_dir, day).name, limit=MEMORY_FILE_LIMIT, own_folder=True
    )
    return f"{read.text}\n{UNDECODABLE_NOTE}" if read.undecodable else read.text


def list_days(memory_dir: Path) -> list[datetime]:
    """Days that have a memory file, newest first (other files and links are ignored).

    Raises ``HomeFileError`` when ``memory/`` is a link.
    """
    days = []
    for name in home_file_names(memory_dir, own_folder=True):
        if DAY_FILE.match(name) is None:
            continue
        try:
            days.append(datetime.strptime(name[:-3], DAY_FORMAT))
        except ValueError:  # e.g. 31-02-2026.md written by hand
            continue
    return sorted(days, reverse=True)
