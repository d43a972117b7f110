"""Ways a real Koroku database file gets damaged, and what the user must be told.

Each damage is a function that edits a checkpointed ``koroku.db`` (about
450 KB: 400 messages) in place, the way a bad disk, a killed copy or a stray
program would. ``DAMAGES`` rows are ``(damage, told, noticed_while_open)``:

- ``told``: ``"damaged"`` (SQLITE_CORRUPT: the message names the damage and the
  ``.recover`` step) or ``"not a database"`` (SQLITE_NOTADB: no header left);
- ``noticed_while_open``: whether a store that already has the file open runs
  into the damage (SQLite keeps page 1 and the schema cached, so header
  damage only shows at the next open).

``WAL_DAMAGES`` hit the write-ahead log of a file left by a crash: SQLite
checks every WAL frame's checksum and drops the bad ones, so the file opens
and keeps every row that reached the main file. Read by
``tests/test_store_damage.py``.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

Damage = Callable[[Path], None]

PAGE = 4096  # Koroku's files use SQLite's default page size


def _noise(size: int, seed: int) -> bytes:
    # Seeded, so a failure reproduces with the same bytes.
    return random.Random(seed).randbytes(size)


def _edit(path: Path, offset: int, data: bytes) -> None:
    with path.open("r+b") as file:
        file.seek(offset)
        file.write(data)


def _root_page(path: Path, name: str) -> int:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        row = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = ?", (name,)).fetchone()
    return int(row[0])


def _page_count(path: Path) -> int:
    return path.stat().st_size // PAGE


def _garbage_page(path: Path, page: int, seed: int) -> None:
    _edit(path, (page - 1) * PAGE, _noise(PAGE, seed))


def truncate_half(path: Path) -> None:
    """A copy or a download cut half way."""
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size // 2)


def truncate_to_first_page(path: Path) -> None:
    """Only the header page survived."""
    with path.open("r+b") as file:
        file.truncate(PAGE)


def truncate_inside_header(path: Path) -> None:
    """Cut inside the 100-byte file header."""
    with path.open("r+b") as file:
        file.truncate(50)


def overwrite_magic(path: Path) -> None:
    """The "SQLite format 3" magic string overwritten."""
    _edit(path, 0, b"NOT SQLITE AT AL")


def bad_page_size(path: Path) -> None:
    """The page-size field (offset 16) set to 768, which is not a power of two."""
    _edit(path, 16, b"\x03\x00")


def huge_page_count(path: Path) -> None:
    """The header claims a million pages the file does not have."""
    _edit(path, 28, (1_000_000).to_bytes(4, "big"))


def garbage_schema_page(path: Path) -> None:
    """Page 1 after the header (the schema table) is noise."""
    _edit(path, 100, _noise(PAGE - 100, seed=1))


def _middle_page(path: Path) -> int:
    """The page nearest the file's middle that every search reads: one of the index's.

    Which table the plain middle page belongs to shifts with the schema
    (migration 3 left one free page); a store that is open has message pages
    cached (WAL keeps its cache valid), so their damage may go unseen until
    the next open, while search reads the inverted index from the file.
    Without ``dbstat``, the plain middle page.
    """
    middle = _page_count(path) // 2
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            pages = [
                int(row[0])
                for row in conn.execute(
                    "SELECT pageno FROM dbstat WHERE name = 'messages_fts_data' AND pageno > 1"
                )
            ]
    except sqlite3.Error:
        return middle
    return min(pages, key=lambda page: abs(page - middle), default=middle)


def garbage_middle_page(path: Path) -> None:
    """A page in the middle of the file is noise (a bad sector)."""
    _garbage_page(path, _middle_page(path), seed=2)


def zero_middle_page(path: Path) -> None:
    """A page in the middle of the file reads back as zeros."""
    _edit(path, (_middle_page(path) - 1) * PAGE, bytes(PAGE))


def garbage_last_page(path: Path) -> None:
    """The last page, where the next message row goes, is noise."""
    _garbage_page(path, _page_count(path), seed=3)


def garbage_messages_root(path: Path) -> None:
    """The root page of the messages table is noise."""
    _garbage_page(path, _root_page(path, "messages"), seed=4)


def garbage_sessions_table(path: Path) -> None:
    """The sessions table's page is noise."""
    _garbage_page(path, _root_page(path, "sessions"), seed=5)


def garbage_session_index(path: Path) -> None:
    """The root of the index the context is read through is noise."""
    _garbage_page(path, _root_page(path, "messages_by_session"), seed=6)


def garbage_search_index_rows(path: Path) -> None:
    """The full-text index's blocks are rewritten with noise (SQLITE_CORRUPT_VTAB)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("UPDATE messages_fts_data SET block = randomblob(length(block)) WHERE id > 10")


def garbage_search_index_page(path: Path) -> None:
    """The root page of the full-text index's data table is noise."""
    _garbage_page(path, _root_page(path, "messages_fts_data"), seed=7)


DAMAGES: list[tuple[Damage, str, bool]] = [
    (truncate_half, "damaged", True),  # SQLITE_CORRUPT at open
    (truncate_to_first_page, "damaged", True),  # SQLITE_CORRUPT at open
    (truncate_inside_header, "damaged", True),  # SQLITE_CORRUPT at open
    (overwrite_magic, "not a database", False),  # SQLITE_NOTADB at open
    (bad_page_size, "not a database", False),  # SQLITE_NOTADB at open
    (huge_page_count, "damaged", False),  # SQLITE_CORRUPT at open
    (garbage_schema_page, "damaged", False),  # SQLITE_CORRUPT at open
    (garbage_middle_page, "damaged", True),  # opens; a later read fails
    (zero_middle_page, "damaged", True),  # opens; a later read fails
    (garbage_last_page, "damaged", True),  # opens; the next write fails
    (garbage_messages_root, "damaged", False),  # opens; reading the context fails
    # Opening reads the sessions table (the newest session with messages), so
    # an open store holds its page in cache: damage done after is found at
    # the next open, not by the open store.
    (garbage_sessions_table, "damaged", False),
    (garbage_session_index, "damaged", False),  # opens; the context read fails
    (garbage_search_index_rows, "damaged", True),  # opens; search fails (CORRUPT_VTAB)
    (garbage_search_index_page, "damaged", True),  # opens; search or write fails
]


def _wal(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def zero_wal_header(path: Path) -> None:
    """The WAL's 32-byte header zeroed: the whole log is ignored."""
    _edit(_wal(path), 0, bytes(32))


def garbage_wal_frames(path: Path) -> None:
    """Every frame after the WAL header is noise."""
    size = _wal(path).stat().st_size
    _edit(_wal(path), 32, _noise(size - 32, seed=8))


def garbage_wal_middle(path: Path) -> None:
    """One page-sized run of noise in the middle of the log."""
    _edit(_wal(path), _wal(path).stat().st_size // 2, _noise(PAGE, seed=9))


def truncate_wal(path: Path) -> None:
    """The log cut in the middle of a frame."""
    wal = _wal(path)
    with wal.open("r+b") as file:
        file.truncate(wal.stat().st_size // 2 + 100)


def garbage_shm(path: Path) -> None:
    """The shared-memory index is noise (it is rebuilt from the WAL)."""
    path.with_name(path.name + "-shm").write_bytes(_noise(32768, seed=10))


WAL_DAMAGES: list[Damage] = [
    zero_wal_header,  # the log ignored whole
    garbage_wal_frames,  # every frame fails its checksum
    garbage_wal_middle,  # frames from the damage on are dropped
    truncate_wal,  # a torn last frame is dropped
    garbage_shm,  # the index is rebuilt
]
