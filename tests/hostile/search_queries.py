"""Search queries that must never be an error: FTS5 syntax, broken quoting, control characters.

The model passes whatever it likes to ``search_history``, and the user types
anything into ctrl+r; none of it may reach FTS5 as syntax. ``HOSTILE_QUERIES``
is read by ``tests/test_store_recall.py`` (each against ``search`` and
``search_history``).
"""

from __future__ import annotations

HOSTILE_QUERIES: list[str] = [
    '"',
    '""',
    '"""',
    'backup "nightly',  # unbalanced quote
    '"nightly backup',
    'nightly" backup"',
    "AND(",
    "AND",
    "OR",
    "NOT",
    "backup AND",
    "OR backup OR",
    "NOT backup",
    "NEAR",
    "NEAR(backup nightly, 2)",
    "NEAR/3",
    "*",
    "backup*",
    "*backup",
    "-",
    "-backup",
    "backup -nightly",
    ":",
    "text:backup",
    "role:user",
    "{text role}:backup",
    "^",
    "^backup",
    "(",
    ")",
    "((backup)",
    "backup)",
    "+",
    "'; DROP TABLE messages; --",
    "\x00",
    "back\x00up",
    "\x02backup\x03",
    "\x1b[31mbackup\x1b[0m",
    "\u200bbackup\u200b",
    "🙂",
    "c++",
    "search_history(query='backup')",
    "\ud800",  # a lone surrogate
    "backup " * 1_430,  # 10,000 characters of one word
    "x" * 10_000,  # one 10,000-character word
    " ".join(f"word{index}" for index in range(1_500)),  # many distinct terms
    '"' * 10_000,
]
