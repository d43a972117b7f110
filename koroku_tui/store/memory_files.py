"""The daily memory files: ``memory/dd-mm-yyyy.md``, one ``[HH:MM]: summary`` line per compaction.

They are plain Markdown so a person (or the model, through the
``read_memory`` tool) can read what was summarised on a given day.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

# Summaries quote the conversation: private like the database.
from koroku_tui.privacy.file_modes import FILE_MODE, FOLDER_MODE

DAY_FORMAT = "%d-%m-%Y"
"""Memory files are named ``dd-mm-yyyy.md``."""
_DAY_FILE = re.compile(r"^(\d{2})-(\d{2})-(\d{4})\.md$")


def day_file(memory_dir: Path, day: datetime) -> Path:
    """The file that holds ``day``'s summaries."""
    return memory_dir / f"{day.strftime(DAY_FORMAT)}.md"


def format_memory_line(summary: str, when: datetime) -> str:
    """One line per compaction: paragraphs are joined so the line format holds."""
    flat = " ".join(summary.split())
    return f"[{when.strftime('%H:%M')}]: {flat}\n"


def append_summary(memory_dir: Path, summary: str, when: datetime | None = None) -> Path:
    """Append ``summary`` to the day's memory file and return that file's path.

    The write is flushed and fsynced: a summary is the only trace of the turns
    it replaced in the model's view, so it must survive a crash right after.
    """
    when = when or datetime.now()
    memory_dir.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    _tighten(memory_dir, FOLDER_MODE)
    path = day_file(memory_dir, when)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        # A file written by an older Koroku (or by hand) was made with the umask.
        if os.fstat(fd).st_mode & 0o777 & ~FILE_MODE:
            os.fchmod(fd, FILE_MODE)
        handle.write(format_memory_line(summary, when))
        handle.flush()
        os.fsync(handle.fileno())
    return path


def _tighten(path: Path, mode: int) -> None:
    """Take away the permissions beyond ``mode`` (never adds any)."""
    current = path.stat().st_mode & 0o777
    if current & ~mode:
        path.chmod(current & mode)


def list_days(memory_dir: Path) -> list[datetime]:
    """Days that have a memory file, newest first (other files are ignored)."""
    if not memory_dir.is_dir():
        return []
    days = []
    for entry in memory_dir.iterdir():
        if _DAY_FILE.match(entry.name) is None or not entry.is_file():
            continue
        try:
            days.append(datetime.strptime(entry.name[:-3], DAY_FORMAT))
        except ValueError:  # e.g. 31-02-2026.md written by hand
            continue
    return sorted(days, reverse=True)
