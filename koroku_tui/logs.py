"""Where Koroku's diagnostics go: ``<home>/koroku.log``, never the terminal.

A warning printed to stderr would garble the full-screen app and break the
one-sentence error contract of ``--print``; the log file keeps the detail
(tracebacks included) for whoever needs to debug.
"""

from __future__ import annotations

import logging
import os
from logging.handlers import RotatingFileHandler
from pathlib import Path

LOG_FILENAME = "koroku.log"


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
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Private like the database: errors can quote the conversation.
        os.close(os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600))
        handler: logging.Handler = RotatingFileHandler(
            path, maxBytes=2_000_000, backupCount=2, encoding="utf-8"
        )
    except OSError:
        # Without a log file Koroku still works; it just keeps quiet.
        root.addHandler(logging.NullHandler())
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    return path
