"""A project's files, found and read as someone else's text: instruction files and config.

A project is the workspace's repository: the folders from the repository
root down to the workspace, or the workspace alone outside a repository
(``config.files.project_folders``, which the config loader looks in too).

Files are read the way text from a cloned repository must be:

- only regular files: the open never blocks (``O_NONBLOCK``: a FIFO cannot
  hang Koroku) and ``fstat`` checks what was opened (a folder, a device, a
  socket are refused);
- a link is followed only when its target stays inside the project root
  (``CLAUDE.md -> AGENTS.md`` works; ``AGENTS.md -> /etc/passwd`` or
  ``-> ~/.ssh/id_rsa`` is refused, the target never opened); the personal
  folder is the user's own, so a link there (a dotfiles checkout) is followed;
- at most ``limit`` bytes are read, whatever the file's size;
- bytes that are not UTF-8 become U+FFFD, and are flagged.

No refusal raises: it becomes the file's ``refused`` sentence, shown to the
user, and the file is left out of what the model is told.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from koroku_tui.config.files import PROJECT_CONFIG, project_folders
from koroku_tui.privacy.home_files import file_kind, read_at_most

__all__ = ["FileText", "project_files", "read_project_text", "size_text"]

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW


@dataclass(frozen=True)
class FileText:
    """What was read of one file (or why nothing was)."""

    path: Path
    """Where the file was found (a link's own path, not its target's)."""
    text: str
    """Its text, at most the ``limit`` asked for (U+FFFD for bytes that were not UTF-8)."""
    size: int
    """The file's size in bytes (``0`` when refused)."""
    cut: bool = False
    """The file holds more than ``text``: it was longer than the limit."""
    undecodable: bool = False
    """Some bytes were not UTF-8."""
    refused: str | None = None
    """Why the file was not read (a link out of the project, a FIFO...); ``None`` when read."""


def project_files(workspace: Path, names: Iterable[str]) -> list[Path]:
    """The project files present, outermost first: instruction files named ``names`` and
    ``.koroku/config.toml`` in each of the project's folders (``config.files.project_folders``).

    What trusting the folder would let steer Koroku (links and FIFOs included:
    they are someone else's files all the same, refused later when read).
    """
    looked_for = [*map(Path, names), PROJECT_CONFIG]
    found = []
    for folder in project_folders(workspace):
        for relative in looked_for:
            path = folder / relative
            if os.path.lexists(path) and not os.path.isdir(path):
                found.append(path)
    return found


def read_project_text(path: Path, *, limit: int, root: Path | None) -> FileText | None:
    """The text of ``path``, at most ``limit`` bytes; ``None`` when there is no such file.

    ``root``: the project root a link must not leave (``None``: links are
    followed anywhere, for the user's own folder). See the module docstring.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return FileText(path, "", 0, refused=f"cannot be looked at ({_reason(exc)})")
    target = path
    if stat.S_ISLNK(info.st_mode):
        target = Path(os.path.realpath(path))
        if root is not None and not target.is_relative_to(os.path.realpath(root)):
            return FileText(path, "", 0, refused=f"is a link to {target}, outside the project")
    try:
        fd = os.open(target, _OPEN_FLAGS)
    except FileNotFoundError:
        return None if target == path else FileText(path, "", 0, refused="is a broken link")
    except OSError as exc:
        return FileText(path, "", 0, refused=_open_refusal(target, exc))
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            return FileText(
                path, "", 0, refused=f"is {file_kind(opened.st_mode)}, not a regular file"
            )
        data = read_at_most(fd, limit + 1)
    except OSError as exc:
        return FileText(path, "", 0, refused=f"cannot be read ({_reason(exc)})")
    finally:
        os.close(fd)
    cut = len(data) > limit
    text, undecodable = _decoded(data[:limit], cut=cut)
    return FileText(path, text, max(opened.st_size, len(data)), cut, undecodable)


def _decoded(data: bytes, *, cut: bool) -> tuple[str, bool]:
    """UTF-8 text, U+FFFD for bad bytes; a character split by the cut is dropped, not flagged."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        pass
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        return decoder.decode(data, final=not cut), False
    except UnicodeDecodeError:
        replacing = codecs.getincrementaldecoder("utf-8")("replace")
        return replacing.decode(data, final=not cut), True


def _open_refusal(path: Path, exc: OSError) -> str:
    if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
        try:
            return f"is {file_kind(os.lstat(path).st_mode)}, not a regular file"
        except OSError:
            pass
    return f"cannot be read ({_reason(exc)})"


def _reason(exc: OSError) -> str:
    return (exc.strerror or type(exc).__name__).lower()


def size_text(size: int) -> str:
    """A file's size as people read it: ``312 bytes``, ``2.1 KB``, ``1.4 MB`` (1 KB = 1,024)."""
    if size < 1024:
        return f"{size:,} byte{'' if size == 1 else 's'}"
    if size < 1024 * 1024:
        return f"{size / 1024:,.1f} KB".replace(".0 KB", " KB")
    return f"{size / (1024 * 1024):,.1f} MB".replace(".0 MB", " MB")
