"""The trust prompt's answers, kept in the user's ``config.toml``.

"Trust" adds the folder to ``trusted_folders``, "Never" to
``ignored_folders`` (absolute paths). The user's file is theirs: its other
settings, comments and layout are kept as they are (``tomlkit`` edits the
document rather than rewriting it), and it is replaced whole or not at all
(a new file beside it, synced, renamed over it). A link to the file (a
dotfiles checkout) stays a link: its target is replaced. A file Koroku
creates is 0600, in a folder made 0700; an existing file keeps its mode.
The config folder is locked (``flock``) from the read to the rename, so two
windows answering at once both count.

A file that cannot be kept (not valid TOML, a key that is not a list, a
folder in the way, a read-only file or disk, a folder whose name is not UTF-8)
raises :class:`TrustFileError`, one sentence naming the file; nothing is
written then.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal

import tomlkit
from tomlkit.exceptions import ParseError

from koroku_tui.config.loading import CONFIG_LIMIT
from koroku_tui.privacy.user_files import read_text_file

__all__ = ["FolderList", "TrustFileError", "remember_folder"]

_NEW_FILE_MODE = 0o600
_NEW_FOLDER_MODE = 0o700

FolderList = Literal["trusted_folders", "ignored_folders"]


class TrustFileError(OSError):
    """The config file could not be updated; ``str()`` is one sentence naming it."""


def remember_folder(config_file: Path, key: FolderList, folder: Path) -> bool:
    """Add ``folder`` (made absolute) to the list ``key`` of ``config_file``.

    Returns False when it was already listed (nothing is written then).
    """
    folder = Path(os.path.abspath(folder.expanduser()))
    target = Path(os.path.realpath(config_file))
    try:
        str(folder).encode("utf-8")
    except UnicodeEncodeError:  # a TOML file holds UTF-8 text only
        said = str(folder).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise TrustFileError(
            f"{said} has a name that is not UTF-8, and {config_file} can only hold UTF-8 "
            "text; rename the folder to keep an answer about it."
        ) from None
    with _locked(target.parent, config_file):
        return _remember(target, config_file, key, folder)


def _remember(target: Path, config_file: Path, key: FolderList, folder: Path) -> bool:
    text = _read(target, config_file)
    try:
        document = tomlkit.parse(text)
    except ParseError as exc:
        raise TrustFileError(
            f"{config_file} is not valid TOML (line {exc.line}, column {exc.col}); fix it, "
            "and Koroku will ask again at the next start."
        ) from None
    listed = document.get(key)
    if listed is None:
        listed = tomlkit.array()
        document[key] = listed
    elif not isinstance(listed, list):
        raise TrustFileError(
            f"{key} in {config_file} is not a list of folders; make it one "
            f'(e.g. {key} = ["{folder}"]).'
        )
    if any(isinstance(item, str) and Path(item).expanduser() == folder for item in listed):
        return False
    listed.append(str(folder))
    _replace(target, tomlkit.dumps(document).encode("utf-8"), config_file)
    return True


@contextmanager
def _locked(folder: Path, named: Path) -> Iterator[None]:
    """Hold the config folder's lock while the file is read, edited and replaced: two
    windows answering at once each add their folder (the second reads the first's file)."""
    try:
        folder.mkdir(mode=_NEW_FOLDER_MODE, parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise TrustFileError(f"{named} could not be written ({_reason(exc)}).") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # and the lock with it


def _read(target: Path, named: Path) -> str:
    """The file's text, or ``""`` when it does not exist yet."""
    try:
        return read_text_file(target, shown=str(named), limit=CONFIG_LIMIT, follow_links=True)
    except FileNotFoundError:
        return ""
    except OSError as exc:  # the reader's sentence, naming the file
        raise TrustFileError(str(exc)) from None


def _replace(target: Path, data: bytes, named: Path) -> None:
    """Write ``data`` to a new file beside ``target``, sync it, rename it over ``target``."""
    folder = target.parent  # made by _locked
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = _NEW_FILE_MODE
    except OSError as exc:
        raise TrustFileError(f"{named} could not be written ({_reason(exc)}).") from None
    if not mode & 0o222:  # the rename would replace it all the same (and root writes anyway)
        raise TrustFileError(
            f"{named} is read-only, so Koroku leaves it as it is; make it writable to keep "
            "the answer."
        )
    try:
        temporary = folder / f".{target.name}.{os.getpid()}.new"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        try:
            with os.fdopen(fd, "wb") as file:
                os.fchmod(file.fileno(), mode)  # the umask must not widen or narrow it
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, target)
        except BaseException:
            with suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise TrustFileError(f"{named} could not be written ({_reason(exc)}).") from None


def _reason(exc: OSError) -> str:
    return (exc.strerror or type(exc).__name__).lower()
