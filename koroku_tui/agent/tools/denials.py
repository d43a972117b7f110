"""The answer a call the user denied gets, and how a stored answer is told to be one.

Apart from ``approval`` (which brings the change previews) because the
transcript's tool rows need ``is_denial`` before the first frame.
"""

from __future__ import annotations

from koroku_tui.agent.tools.answer_words import ASK_INSTEAD

__all__ = ["denial", "is_denial"]

_DENIED = "The user denied {name}; nothing was done."


def denial(name: str) -> str:
    """The error a denied call answers the model with (stored as the call's response)."""
    return f"{_DENIED.format(name=name)} {ASK_INSTEAD}"


def is_denial(error: object) -> bool:
    """True when a call's stored error is ``denial``'s: the user said no, nothing failed.

    The function response is the only record of a denial, so a replayed row
    tells it apart from a failure by this sentence.
    """
    if not isinstance(error, str):
        return False
    head, _, tail = _DENIED.partition("{name}")
    first = error.split("\n", 1)[0]
    return first.startswith(head) and tail in first
