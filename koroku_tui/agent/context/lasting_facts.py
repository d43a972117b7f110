"""The lasting facts a compaction's summary reply proposes as memories, and where they end.

The summary request (``COMPACTION_INSTRUCTION``) asks for the summary, then a
line ``Lasting facts:`` and one ``- fact`` line per lasting fact about the
user. One request, one reply: ``split_reply`` takes the trailing section
off (the summary is stored and written to the day's file without it) and
returns the facts, which the store keeps as suggestions until the user
accepts them. A reply without the section is all summary, and prose after
the heading (a model that went on summarising) stays in the summary: only
the heading's own line and the ``- `` lines are facts.
"""

from __future__ import annotations

import re

__all__ = ["FACTS_HEADING", "MAX_SUGGESTIONS", "split_reply"]

FACTS_HEADING = "Lasting facts:"
MAX_SUGGESTIONS = 10
"""Facts taken from one summary at most: a summary proposing more is not choosing."""

# The heading alone on its line, as a model may dress it: "## Lasting facts",
# "**Lasting facts:**", "Lasting facts: none" (text after it is a fact too).
_HEADING = re.compile(r"^[ \t#*_>]*lasting facts[ \t*_]*(?::(?P<rest>.*))?$", re.I | re.M)
_BULLET = re.compile(r"^\s*(?:(?:[-*•+]|\d{1,2}[.)])\s+)+")
_NONE = re.compile(r"^\(?(?:none|nothing|n/a)\b[\s.)!]*$", re.I)


def _fact(line: str) -> str | None:
    text = " ".join(_BULLET.sub("", line).split()).strip("*_ ")
    if not text or _NONE.match(text):
        return None
    return text


def split_reply(reply: str) -> tuple[str, list[str]]:
    """``(summary, facts)`` of a summary reply: the text but the last ``Lasting facts:``
    line and the facts listed after it (at most ``MAX_SUGGESTIONS``, none repeated)."""
    headings = list(_HEADING.finditer(reply))
    if not headings:
        return reply.strip(), []
    last = headings[-1]
    after = reply[last.end() :].splitlines()
    prose = "\n".join(line for line in after if not _BULLET.match(line)).strip()
    summary = "\n\n".join(part for part in (reply[: last.start()].strip(), prose) if part)
    lines = [last.group("rest") or "", *(line for line in after if _BULLET.match(line))]
    facts: list[str] = []
    for line in lines:
        fact = _fact(line)
        if fact is not None and fact not in facts:
            facts.append(fact)
    return summary, facts[:MAX_SUGGESTIONS]
