"""A call's answer says some things to the model only; the user reads it without them.

When Koroku answers a call itself (the user denied it, the turn's tool budget
is used up, the turn was cancelled, the arguments nest too deeply, the model
repeats a call), the answer tells the model what to do next: "Do not retry
it: ask the user what they want instead." That is the right answer to send
and to store, and the wrong thing to show the user, who is the one to be
asked. The sentences addressed to the model are defined here, used by those
who write the answers, and :func:`for_user` takes them out (and says "you"
for "the user") where a tool row shows the answer. What the model receives is
never changed.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "ASK_BEFORE_REPEATING",
    "ASK_INSTEAD",
    "FLATTEN_ARGUMENTS",
    "NUDGE_END",
    "NUDGE_START",
    "REPORT_AND_ASK",
    "for_user",
]

ASK_INSTEAD = "Do not retry it: ask the user what they want instead."
"""Ends the answer of a call the user denied."""
ASK_BEFORE_REPEATING = "Do not repeat it without asking the user."
"""Ends the answer of a call cut short by a cancel or a stop."""
REPORT_AND_ASK = (
    "Stop calling tools, tell the user what you did and found, and ask the user how to continue."
)
"""Ends the answer of a call beyond the turn's tool budget."""
FLATTEN_ARGUMENTS = "Call the tool again with flat arguments."
"""Ends the answer of a call nested too deeply."""

_FOR_THE_MODEL = (ASK_INSTEAD, ASK_BEFORE_REPEATING, REPORT_AND_ASK, FLATTEN_ARGUMENTS)

NUDGE_START = "Note: this is the "
NUDGE_END = "Change approach or ask the user."
"""How ``instructions.repeated_call_nudge`` starts and ends (added after a repeated call's
answer, past a blank line)."""
_NUDGE = re.compile(re.escape(f"\n\n{NUDGE_START}") + r"[^\n]*" + re.escape(NUDGE_END) + r"$")

_TO_YOU = (
    ("The user denied ", "You denied "),
    ("Cancelled by the user before this call", "You cancelled this call before it"),
)


_SHORT = 2_000
"""Answers up to this long are kept with their shown form (``for_user``)."""


def for_user(answer: str) -> str:
    """``answer`` as a tool row shows it: without what only the model is told."""
    if len(answer) <= _SHORT:
        # A step of a thousand calls stopped by the guardrail answers "not run"
        # a thousand times: worked out once (long answers are not kept).
        return _short_for_user(answer)
    return _for_user(answer)


@functools.lru_cache(maxsize=256)
def _short_for_user(answer: str) -> str:
    return _for_user(answer)


def _for_user(answer: str) -> str:
    shown = _NUDGE.sub("", answer, count=1)
    for sentence in _FOR_THE_MODEL:
        shown = shown.replace(" " + sentence, "").replace(sentence, "")
    for theirs, yours in _TO_YOU:
        if shown.startswith(theirs):
            shown = yours + shown[len(theirs) :]
    return shown.rstrip() if shown.strip() else answer
