"""Where Koroku's diagnostics go: ``<home>/koroku.log``, never the terminal.

A warning printed to stderr would garble the full-screen app and break the
one-sentence error contract of ``--print``; the log file keeps the detail
(tracebacks included) for whoever needs to debug. Live credentials are taken
out of every line (a server may quote the key back in an error).
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import sys
from io import TextIOWrapper
from logging.handlers import RotatingFileHandler
from pathlib import Path

from koroku_tui.privacy import live_secrets

# Private like the database: errors can quote the conversation.
from koroku_tui.privacy.file_modes import FILE_MODE, FOLDER_MODE
from koroku_tui.privacy.home_files import HomeFileError

LOG_FILENAME = "koroku.log"
_REFUSED = (
    "{name} in the Koroku home is a link or not a regular file, and Koroku writes no log "
    "through it: Koroku runs without a log until it is removed."
)


class PrivateRotatingFileHandler(RotatingFileHandler):
    """A rotating log whose every file is 0600, the one opened after a rollover too.

    The standard handler opens the fresh file with ``open()``, so it got the
    umask's mode (0644 as a rule) after the first rotation.
    """

    def _open(self) -> TextIOWrapper:
        # Never through a link, never blocking on a FIFO: a koroku.log planted
        # as a link to a file elsewhere must not receive the log, nor be chmod'ed.
        flags = os.O_CREAT | os.O_APPEND | os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            fd = os.open(self.baseFilename, flags | os.O_CLOEXEC, FILE_MODE)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                raise HomeFileError(_REFUSED.format(name=LOG_FILENAME)) from None
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise HomeFileError(_REFUSED.format(name=LOG_FILENAME))
            if info.st_mode & 0o777 != FILE_MODE:
                os.fchmod(fd, FILE_MODE)  # a file left by an older Koroku
        except OSError:
            os.close(fd)
            raise
        # A path that is not UTF-8 (or a lone surrogate in a message) is
        # written escaped: a logging error would print a traceback on stderr.
        return open(fd, "a", encoding=self.encoding, errors="backslashreplace")


class RedactingFormatter(logging.Formatter):
    """Formats as usual, then replaces every live credential (``live_secrets``) in the result.

    A formatter rather than a filter: it sees the final text, with the
    arguments, the traceback and the stack already in it.
    """

    def format(self, record: logging.LogRecord) -> str:
        return live_secrets.redact(super().format(record))


def configure_logging(home: Path, level: int = logging.INFO) -> Path | None:
    """Send all logging to the home's log file; returns its path (None if unwritable)."""
    root = logging.getLogger()
    root.setLevel(level)
    # Library warnings (the SDK warns on a finish reason it does not know) go
    # to the log too, not to stderr, where they would carry the server's text.
    logging.captureWarnings(True)
    for existing in list(root.handlers):
        root.removeHandler(existing)
    path = home / LOG_FILENAME
    try:
        home.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
        handler: logging.Handler = PrivateRotatingFileHandler(
            path, maxBytes=2_000_000, backupCount=2, encoding="utf-8"
        )
    except HomeFileError as exc:
        # The one sentence there is no log to hold: said where the user sees it.
        print(f"koroku-tui: {exc}", file=sys.stderr)
        root.addHandler(logging.NullHandler())
        return None
    except OSError:
        # Without a log file Koroku still works; it just keeps quiet.
        root.addHandler(logging.NullHandler())
        return None
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    return path
