"""The credential values this process lives with, known process-wide.

The agent's :class:`~koroku_tui.agent.wire.redaction.Redactor` takes them out of
everything stored or sent; ``logs.py`` takes them out of ``koroku.log`` (an
API error can quote the key back); ``child_env.py`` keeps variables holding
them from commands. Values are remembered when the credentials are taken
out of the environment at start-up and when a client is set up.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "known", "redact", "remember", "spans"]

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
"""Shorter values are not replaced: every "x" in the history would become ``[redacted]``."""

# Replaced whole, never changed in place: the log writes from other threads.
_known: tuple[str, ...] = ()


def remember(values: Iterable[str]) -> None:
    """Add credential values (blank and too-short ones are ignored)."""
    global _known
    new = {v for v in (value.strip() for value in values) if len(v) >= MIN_SECRET_LENGTH}
    if not new.issubset(_known):
        # Longest first: a key that contains another is replaced whole.
        _known = tuple(sorted(new.union(_known), key=len, reverse=True))


def known() -> list[str]:
    """Every remembered value, longest first."""
    return list(_known)


def spans(text: str, secrets: Sequence[str]) -> list[tuple[int, int]]:
    """Where ``secrets`` (longest first) occur in ``text``: sorted, non-overlapping spans."""
    found: list[tuple[int, int]] = []
    for secret in secrets:
        start = text.find(secret)
        while start != -1:
            end = start + len(secret)
            if all(end <= s or start >= e for s, e in found):
                found.append((start, end))
                start = text.find(secret, end)
            else:  # inside a longer secret already found: look further on
                start = text.find(secret, start + 1)
    return sorted(found)


def redact(text: str, secrets: Sequence[str] | None = None) -> str:
    """``text`` with every secret (default: every remembered one) replaced by ``[redacted]``."""
    cut = spans(text, known() if secrets is None else secrets)
    if not cut:
        return text
    pieces: list[str] = []
    position = 0
    for start, end in cut:
        pieces += [text[position:start], REDACTED]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
