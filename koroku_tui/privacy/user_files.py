"""Text files of the user's or a project's that Koroku reads, such as ``config.toml``.

Unlike the files in Koroku's home (``home_files``), these are named by the
user or found in a project, and one may well be a link: a user's
``~/.config/koroku/config.toml`` often points into a dotfiles repository,
so the caller chooses whether links are followed (a cloned repository's
files follow none). Either way only a regular file is read: the open never
blocks (``O_NONBLOCK``: a FIFO cannot hang the start), ``fstat`` checks what
was opened, the size is capped before and while reading, and text that is
not UTF-8 is refused rather than guessed at.

Every refusal is an ``OSError`` (:class:`FileRefused`) whose text is one
sentence naming the file as the caller shows it; a missing file is
``FileNotFoundError``, so the caller can tell "none" from "unusable".
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from koroku_tui.privacy.home_files import file_kind, read_at_most, size_text

__all__ = ["FileRefused", "read_text_file"]

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


class FileRefused(OSError):
    """A file that was not read; ``str()`` is one sentence naming it."""


def read_text_file(path: Path, *, shown: str, limit: int, follow_links: bool) -> str:
    """The UTF-8 text of the regular file ``path``, at most ``limit`` bytes.

    ``shown`` is how sentences name the file. Without ``follow_links``
    neither the file nor the folder holding it may be a link.
    """
    try:
        fd = _open(path, follow_links)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise FileRefused(_why_not_opened(path, shown, exc, follow_links)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"{shown} is {file_kind(info.st_mode)}, not a regular file.")
        if info.st_size > limit:
            raise FileRefused(_too_large(shown, info.st_size, limit))
        try:
            data = read_at_most(fd, limit + 1)
        except OSError as exc:
            raise FileRefused(f"{shown} could not be read ({exc.strerror or exc}).") from None
        if len(data) > limit:  # it grew since fstat
            raise FileRefused(_too_large(shown, len(data), limit))
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileRefused(
            f"{shown} is not UTF-8 text (byte {exc.start:,} is not); save it as UTF-8."
        ) from None


def _open(path: Path, follow_links: bool) -> int:
    if follow_links:
        return os.open(path, _READ)
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        return os.open(path.name, _READ | os.O_NOFOLLOW, dir_fd=folder)
    finally:
        os.close(folder)


def _why_not_opened(path: Path, shown: str, exc: OSError, follow_links: bool) -> str:
    if not follow_links and exc.errno in (errno.ELOOP, errno.ENOTDIR):
        for part in (path.parent, path):
            if part.is_symlink():
                return (
                    f"{shown} is reached through a link ({part}), and Koroku follows no link "
                    "in a project's files; put the file itself there."
                )
    if exc.errno == errno.EACCES:
        return f"{shown} cannot be read (permission denied)."
    if exc.errno == errno.ENOTDIR:
        return f"{shown} cannot be read: a folder on its way is a file."
    return f"{shown} could not be opened ({exc.strerror or exc})."


def _too_large(shown: str, size: int, limit: int) -> str:
    return f"{shown} is {size:,} bytes, more than the {size_text(limit)} Koroku reads."
