"""The warning for a key the file does not know, naming the closest one it does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from difflib import SequenceMatcher

from koroku_tui.config.keys import FILE_KEYS, shown

__all__ = ["closest", "unknown_key"]

_CLOSE = 0.6
"""How alike two names must be (difflib's ratio) to be offered; ``compact_at`` is to ``at``
only 0.33 alike, but holds it as a word, which counts as close too."""
_LONGEST = 60
"""Characters of an unknown key's name said (the longest known key has 20); a longer one is
cut, and not compared with the known ones (difflib took seconds on a name of 800,000)."""


def _closeness(name: str, known: str) -> float:
    words, known_words = set(name.lower().split("_")), set(known.split("_"))
    contains = 0.7 if known_words <= words or words <= known_words else 0.0
    return max(SequenceMatcher(None, name.lower(), known).ratio(), contains)


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name most like ``name``, when it is close enough to offer (none for a
    name longer than any key: difflib is slow on long ones)."""
    if len(name) > _LONGEST:
        return None
    scored = sorted(((_closeness(name, key), key) for key in known), reverse=True)
    return scored[0][1] if scored and scored[0][0] >= _CLOSE else None


def unknown_key(name: str, table: str, tables: Mapping[str, Iterable[str]]) -> str:
    """What to tell of ``name`` in ``table`` ("" for the top): ``did you mean `at`?``.

    At the top, a setting's old flat name first (``compact_at``, as
    ``KOROKU_COMPACT_AT`` says it, -> ``compaction.at``: the closest top key,
    ``compaction``, would send the user to write ``compaction = 0.7``); then
    the table's own keys; then the flat name in a table; then the keys of the
    other tables, written in full.
    """
    where = f"a key of [{table}]" if table else "a known key"
    if len(name) > _LONGEST:  # no key is near it; and the line stays a line
        return f"`{name[: _LONGEST - 1]}…` is not {where}; it was ignored."
    flat = FILE_KEYS.get(name.lower())
    renamed = shown(flat) if flat is not None and flat != (name,) else None
    guess = (renamed if not table else None) or closest(name, tables[table]) or renamed
    if guess is None:
        others = [f"{other}.{key}" for other, keys in tables.items() if other for key in keys]
        others += [key for key in tables[""] if table]
        full = closest(name, [key.rpartition(".")[2] for key in others])
        guess = next((key for key in others if key.rpartition(".")[2] == full), None)
    hint = f" (did you mean `{guess}`?)" if guess else ""
    return f"`{name}` is not {where}{hint}; it was ignored."
