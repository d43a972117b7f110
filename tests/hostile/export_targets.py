"""What may already sit at an export's file name when the user exports a session.

Each is set up by ``tests/test_export_file.py`` (one setup per name); none
may be written through, followed or blocked on.
"""

from __future__ import annotations

PLANTED = [
    "symlink",  # a link to a file outside: written through, it overwrote that file
    "dangling symlink",  # a link to a path that does not exist yet: it created it
    "earlier export",  # the user's previous export of the same session
    "fifo",  # a named pipe: opening it for writing blocked for ever
]
