"""``KeyGrace``: a dialog's first moments, when keys and clicks are not yet answers.

A dialog that opens while the user types must not take their next letters as
an answer: "deploy" typed as a search must not confirm a deletion with its
``y``. Input counts only once ``seconds`` have passed since the dialog was
first drawn *and* since the last input ignored this way (a steady typist
never gets through), and input made before it was drawn (typed ahead,
queued) is dropped. The approval dialog works the same way
(``ui/main/approval.py``); ``KOROKU_APPROVAL_GRACE`` sets both.
"""

from __future__ import annotations

__all__ = ["DEFAULT_GRACE", "IGNORED_NOTICE", "KeyGrace"]

DEFAULT_GRACE = 0.6
"""Seconds of quiet before input counts, unless the settings say otherwise."""

IGNORED_NOTICE = "Keys pressed as this dialog opened were ignored: read it, then choose."


class KeyGrace:
    """Decides whether input made at a given moment may act on a dialog.

    Times are Textual's event times (``time.monotonic()`` on the POSIX
    systems Koroku runs on).
    """

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = DEFAULT_GRACE if seconds is None else seconds
        self.drawn_at: float | None = None
        """When the dialog was first drawn; ``None`` before."""
        self._quiet_since = 0.0
        self.ignored = 0
        """Inputs ignored because they came too early."""

    def drawn(self, at: float) -> None:
        """The dialog is on screen (the first time only counts)."""
        if self.drawn_at is None:
            self.drawn_at = self._quiet_since = at

    def takes(self, at: float) -> bool:
        """Whether input made at ``at`` counts; an early one restarts the wait."""
        if self.drawn_at is not None and at >= self.drawn_at:
            if at - self._quiet_since >= self.seconds:
                return True
            self._quiet_since = at
        self.ignored += 1
        return False
