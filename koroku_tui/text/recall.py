"""How ``search_history`` answers reads, shared by the tool and the transcript.

The answer opens with one headline that says the query and how many past
messages matched; the transcript's tool row shows that count without
re-running the search. Core module: no SDK, no Textual, importable before
the first frame.
"""

from __future__ import annotations

import re

__all__ = ["MARK_END", "MARK_START", "headline", "matches_in", "unmarked"]

#: Around each match inside a hit's snippet, in what the model reads.
MARK_START = "«"
MARK_END = "»"

_MARKS = str.maketrans({MARK_START: "\\u00ab", MARK_END: "\\u00bb"})


def unmarked(text: str) -> str:
    """``text`` with any literal « or » written as an escape, so marks only ever mean "match"."""
    return text.translate(_MARKS)


_HEADLINE = re.compile(r"\A(?:No past messages match|(\d+) past messages? match(?:es)?) ")


def headline(query: str, total: int, shown: int) -> str:
    """The first line of the answer, e.g. ``3 past messages match "backup script" (all shown).``"""
    quoted = '"' + " ".join(query.split()) + '"'
    if total == 0:
        return f"No past messages match {quoted}."
    noun = "message matches" if total == 1 else "messages match"
    if shown >= total:
        return f"{total} past {noun} {quoted} (all shown)."
    more = total - shown
    best = "the best one is shown" if shown == 1 else f"the best {shown} are shown"
    return f"{total} past {noun} {quoted}; {best}, {more} more matched."


def matches_in(output: str) -> int | None:
    """How many past messages a ``search_history`` answer says matched, or ``None``."""
    found = _HEADLINE.match(output)
    if found is None:
        return None
    return int(found.group(1)) if found.group(1) else 0
