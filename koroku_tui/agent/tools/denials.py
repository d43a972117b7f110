"""The answers a denied call gets, and how a stored answer is told to be one.

Two denials: the user said no in the dialog (``denial``), or the user's
approval rules deny the call without asking (``rule_denial``). Apart from
``approval`` (which brings the change previews) because the transcript's
tool rows need ``denied_by`` before the first frame.
"""

from __future__ import annotations

import functools
import re

from koroku_tui.agent.tools.answer_words import ASK_INSTEAD

__all__ = [
    "BY_RULES",
    "BY_YOU",
    "denial",
    "denied_by",
    "is_denial",
    "is_unattended_refusal",
    "rule_denial",
    "unattended_refusal",
]

BY_YOU = "denied by you"
"""What a tool row says of a call the user denied in the dialog."""
BY_RULES = "denied by your rules"
"""What a tool row says of a call the approval rules denied (also in the model's answer)."""

_DENIED = "The user denied {name}; nothing was done."
_RULED = "{name} was " + BY_RULES + " ({rule}); nothing was done."
_UNATTENDED = " needs the user's approval and there is no one to ask, so nothing was done."
_UNATTENDED_LINE = re.compile(r"\S+" + re.escape(_UNATTENDED) + r"( |$)")
_RULED_LINE = re.compile(r"\S+ was " + re.escape(BY_RULES) + r" \(.*\); nothing was done\.( |$)")


def denial(name: str) -> str:
    """The error a call the user denied answers the model with (stored as the call's response)."""
    return f"{_DENIED.format(name=name)} {ASK_INSTEAD}"


def rule_denial(name: str, rule: str) -> str:
    """The error a call the approval rules denied answers with; ``rule`` names the rule."""
    return f"{_RULED.format(name=name, rule=rule)} {ASK_INSTEAD}"


def unattended_refusal(name: str, hint: str) -> str:
    """The error a call that asks gets when no one can be asked (``--print`` without
    ``--yes``); ``hint`` says how to allow such calls."""
    return f"{name}{_UNATTENDED} {hint}"


def is_unattended_refusal(error: object) -> bool:
    """True when a call's stored error is :func:`unattended_refusal`'s: never run, not failed.

    Kept apart from :func:`denied_by`: no one denied it, and a tool row shows it as
    the failure it is for the turn.
    """
    return isinstance(error, str) and _UNATTENDED_LINE.match(error.split("\n", 1)[0]) is not None


def denied_by(error: object) -> str | None:
    """:data:`BY_YOU` or :data:`BY_RULES` when a call's stored error is a denial, else ``None``.

    The function response is the only record of a denial, so a replayed row
    tells it apart from a failure by its first line.
    """
    if not isinstance(error, str):
        return None
    end = error.find("\n")  # not split: that copies the rest of a long answer
    first = error if end < 0 else error[:end]
    # Kept when short: a thousand calls the guardrail stopped say the same first line.
    return _kept_denial(first) if len(first) <= 500 else _denial(first)


def _denial(first: str) -> str | None:
    head, _, tail = _DENIED.partition("{name}")
    if first.startswith(head) and tail in first:
        return BY_YOU
    if _RULED_LINE.match(first):
        return BY_RULES
    return None


_kept_denial = functools.lru_cache(maxsize=256)(_denial)


def is_denial(error: object) -> bool:
    """True when a call's stored error is a denial (the user's or the rules'): nothing failed."""
    return denied_by(error) is not None
