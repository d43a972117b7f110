"""Koroku's own files in its home, read and written so that nothing there reaches outside it.

Every file Koroku reads or writes in its home (the memory files,
``unsent.txt``, ``keymap.toml``, the log) goes through here:

- no link is followed: the file is opened with ``O_NOFOLLOW``, and a folder
  of Koroku's own inside the home (``memory/``) is opened the same way, so a
  link planted there cannot send a read or a write to a file elsewhere (the
  home itself is the folder the user chose, and may be a link);
- only regular files are taken: the open never blocks (``O_NONBLOCK``, so a
  FIFO cannot hang the app), and ``fstat`` checks what was opened;
- a read has a size cap, checked before reading and while reading;
- a file Koroku makes is 0600, and one it writes to loses the group and other
  permissions it had (only a regular file, opened without following links);
- text that is not UTF-8 is decoded with U+FFFD in place of the bad bytes and
  flagged (``HomeText.undecodable``), never dropped silently.

A refusal is a :class:`HomeFileError`, whose text is one sentence for the
screen; it is also logged here, once.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from koroku_tui.privacy.file_modes import FILE_MODE, FOLDER_MODE

__all__ = [
    "HomeFileError",
    "HomeText",
    "append_home_file",
    "check_home_file",
    "file_kind",
    "home_file_names",
    "read_at_most",
    "read_home_file",
    "size_text",
    "write_home_file",
]

logger = logging.getLogger(__name__)

_NOT_FOLLOWED = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_PRIVATE_BITS = 0o077
"""What a file or folder of Koroku's must not grant: any group or other permission."""


class HomeFileError(OSError):
    """A file (or folder) in the Koroku home that was refused; ``str()`` is one sentence."""


@dataclass(frozen=True)
class HomeText:
    """A file's text, with U+FFFD in place of any bytes that were not UTF-8."""

    text: str
    undecodable: bool
    """True when some bytes were not UTF-8 (and show as U+FFFD)."""


def read_home_file(
    folder: Path, name: str, *, limit: int, own_folder: bool = False, one_name: bool = False
) -> HomeText:
    """The text of ``folder/name``, at most ``limit`` bytes.

    ``own_folder``: ``folder`` is one of Koroku's inside the home
    (``memory/``) and must not be a link either. ``one_name``: a file with
    other names (a hard link to a file outside) is refused too. Raises
    ``FileNotFoundError`` when there is no such file, :class:`HomeFileError`
    when it is refused.
    """
    with _readable(folder, name, limit=limit, own_folder=own_folder, one_name=one_name) as fd:
        data = read_at_most(fd, limit + 1)
        if len(data) > limit:  # it grew since the check
            shown = _shown(folder, name, own_folder)
            raise _refused(folder / name, _too_large(shown, len(data), limit))
    try:
        return HomeText(data.decode("utf-8"), undecodable=False)
    except UnicodeDecodeError:
        logger.warning("%s holds bytes that are not UTF-8; they read as U+FFFD", folder / name)
        return HomeText(data.decode("utf-8", errors="replace"), undecodable=True)


def check_home_file(
    folder: Path, name: str, *, limit: int, own_folder: bool = False, one_name: bool = False
) -> None:
    """Raise as :func:`read_home_file` would, without reading the file."""
    with _readable(folder, name, limit=limit, own_folder=own_folder, one_name=one_name):
        pass


@contextmanager
def _readable(
    folder: Path, name: str, *, limit: int, own_folder: bool, one_name: bool
) -> Iterator[int]:
    """A descriptor of the regular file ``folder/name``, no larger than ``limit``."""
    shown = _shown(folder, name, own_folder)
    with _folder(folder, own=own_folder, create=False) as folder_fd:
        fd = _open_file(folder_fd, name, os.O_RDONLY, shown, folder / name, one_name=one_name)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise _refused(folder / name, _too_large(shown, size, limit))
        yield fd
    finally:
        os.close(fd)


def append_home_file(
    folder: Path,
    name: str,
    data: bytes,
    *,
    own_folder: bool = False,
    limit: int | None = None,
    on_new_line: bool = False,
    sync: bool = False,
    one_name: bool = False,
) -> Path:
    """Append ``data`` to ``folder/name`` (made 0600 if new) in one write; returns the path.

    The folder is made (0700) if missing. ``limit``: refuse when the file
    would grow past it. ``on_new_line``: ``data`` starts a line of its own
    (a newline goes first when the file does not end with one). ``sync``:
    fsync before returning. ``one_name``: as in :func:`read_home_file`.
    Raises :class:`HomeFileError` when refused.
    """
    shown = _shown(folder, name, own_folder)
    path = folder / name
    with _folder(folder, own=own_folder, create=True) as folder_fd:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
        fd = _open_file(folder_fd, name, flags, shown, path, one_name=one_name)
    try:
        size = _made_private(fd, path).st_size
        if on_new_line and size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        if limit is not None and size + len(data) > limit:
            raise _refused(path, _too_large(shown, size + len(data), limit))
        written = os.write(fd, data)  # one write: two windows' lines do not mix
        if written != len(data):
            raise HomeFileError(f"{shown} could not be written whole (the disk may be full).")
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    return path


def write_home_file(folder: Path, name: str, data: bytes, *, own_folder: bool = False) -> Path:
    """Replace ``folder/name`` with ``data`` (0600), whole or not at all; returns the path.

    Written to a new file beside it, synced, then renamed over it: a crash
    leaves the old file or the new one. A link or anything but a regular
    file in its place is refused (:class:`HomeFileError`), not replaced.
    """
    shown = _shown(folder, name, own_folder)
    path = folder / name
    with _folder(folder, own=own_folder, create=True) as folder_fd:
        try:
            info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if not stat.S_ISREG(info.st_mode):
                raise _refused(path, _not_regular(shown, info.st_mode))
        temporary = f".{name}.{os.getpid()}.new"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_TRUNC
        fd = _open_file(folder_fd, temporary, flags, shown, path)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        except BaseException:
            with suppress(OSError):
                os.unlink(temporary, dir_fd=folder_fd)
            raise
    return path


def home_file_names(folder: Path, *, own_folder: bool = False) -> list[str]:
    """The names of the regular files in ``folder`` (links and the rest left out).

    ``[]`` when the folder does not exist; :class:`HomeFileError` when
    ``own_folder`` and it is a link or not a folder.
    """
    try:
        with (
            _folder(folder, own=own_folder, create=False) as folder_fd,
            os.scandir(folder_fd) as entries,
        ):
            return [e.name for e in entries if e.is_file(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []


# -- the folder ---------------------------------------------------------------


@contextmanager
def _folder(folder: Path, *, own: bool, create: bool) -> Iterator[int]:
    """A descriptor of ``folder``, closed after; an own folder is never reached through a link."""
    if not own:
        if create:
            # The home: only its last part is made 0700 (as the log and the store do).
            folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        fd = os.open(folder, _FOLDER)
    else:
        with _folder(folder.parent, own=False, create=create) as parent:
            if create:
                with suppress(FileExistsError):
                    os.mkdir(folder.name, FOLDER_MODE, dir_fd=parent)
            fd = _open_own_folder(parent, folder)
    try:
        if own:
            _made_private(fd, folder)
        yield fd
    finally:
        os.close(fd)


def _open_own_folder(parent: int, folder: Path) -> int:
    try:
        return os.open(folder.name, _FOLDER | os.O_NOFOLLOW, dir_fd=parent)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        info = os.stat(folder.name, dir_fd=parent, follow_symlinks=False)
    shown = folder.name
    if stat.S_ISLNK(info.st_mode):
        raise _refused(folder, f"{shown} in the Koroku home is a link, {_NO_LINKS}") from None
    raise _refused(folder, f"{shown} in the Koroku home is not a folder; move it away.") from None


# -- the file -----------------------------------------------------------------


def _open_file(
    folder_fd: int, name: str, flags: int, shown: str, path: Path, *, one_name: bool = False
) -> int:
    """Open ``name`` in the folder without following a link; only a regular file is kept
    (with ``one_name``, only one with no other name: a hard link reaches outside as a
    symbolic one does, and its file would be read, chmod-ed and written)."""
    try:
        fd = os.open(name, flags | _NOT_FOLLOWED, FILE_MODE, dir_fd=folder_fd)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise
        # A link (ELOOP), a FIFO nobody reads (ENXIO), a folder (EISDIR)...
        try:
            info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        except OSError:
            raise exc from None
        if stat.S_ISREG(info.st_mode):
            raise
        raise _refused(path, _not_regular(shown, info.st_mode)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _refused(path, _not_regular(shown, info.st_mode))
    if one_name and info.st_nlink > 1:
        os.close(fd)
        raise _refused(
            path,
            f"{shown} in the Koroku home has other names (a hard link), and Koroku reads "
            "or writes no file that may be elsewhere; it was left as it is.",
        )
    return fd


def _made_private(fd: int, path: Path) -> os.stat_result:
    """Take group and other permissions off the opened file or folder (never adds any)."""
    info = os.fstat(fd)
    current = stat.S_IMODE(info.st_mode)
    if current & _PRIVATE_BITS:
        try:
            os.fchmod(fd, current & ~_PRIVATE_BITS)
        except OSError as exc:  # not ours to change: used as it is
            logger.warning("could not tighten %s (mode %o): %s", path, current, exc)
            return info
        logger.warning(
            "tightened %s from mode %o to %o: the Koroku home is private",
            path,
            current,
            current & ~_PRIVATE_BITS,
        )
    return info


def read_at_most(fd: int, count: int) -> bytes:
    """Up to ``count`` bytes from ``fd``, read in pieces (a short read is not the end)."""
    chunks: list[bytes] = []
    left = count
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# -- the sentences ------------------------------------------------------------

_NO_LINKS = "and Koroku follows no link in its home: remove the link."


def _shown(folder: Path, name: str, own_folder: bool) -> str:
    """How a file is named on screen: from the home (``memory/02-01-2026.md``, ``unsent.txt``)."""
    return f"{folder.name}/{name}" if own_folder else name


def _not_regular(shown: str, mode: int) -> str:
    if stat.S_ISLNK(mode):
        return f"{shown} in the Koroku home is a link, {_NO_LINKS}"
    return f"{shown} in the Koroku home is {file_kind(mode)}, not a regular file; move it away."


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, for a sentence ("a named pipe (FIFO)")."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a link"
    return "not a plain file"


def _too_large(shown: str, size: int, limit: int) -> str:
    return (
        f"{shown} in the Koroku home is {size_text(size)}, more than the {size_text(limit)} "
        "Koroku takes; it was left as it is."
    )


def size_text(size: int) -> str:
    """A size for a sentence: "812 bytes", "64 KB", "1.5 MB"."""
    if size < 10_000:
        return f"{size:,} bytes"
    if size < 1_000_000:
        return f"{size / 1000:,.0f} KB"
    return f"{size / 1_000_000:,.{1 if size < 10_000_000 else 0}f} MB"


def _refused(path: Path, sentence: str) -> HomeFileError:
    """The refusal, logged once here (with the full path) for ``koroku.log``."""
    logger.warning("%s (%s)", sentence, path)
    return HomeFileError(sentence)
