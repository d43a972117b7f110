"""Words people type into the history screen (ctrl+r) as searches, as a terminal delivers them.

In issue 22, "deploy" typed after ctrl+r opened "Delete …?" on its ``d`` and
confirmed it with its ``y``: the conversation was gone. Every sequence here
is English letters and spaces, typed in one burst, and holds the screen's
single-letter actions (``d`` delete, ``r`` rename, ``e`` export, ``f`` fork,
``l`` older, ``x`` empty the trash) and the dialogs' answers (``y``, ``n``)
in many orders. ``TYPED_IN_HISTORY`` is read by
``tests/test_ui_history_typing.py``, which also types every letters-only
entry of ``search_queries.HOSTILE_QUERIES``.
"""

from __future__ import annotations

from string import ascii_lowercase, ascii_uppercase

TYPED_IN_HISTORY: list[str] = [
    "deploy",  # the word: d opened the delete dialog, y confirmed it
    "a draft I typed yesterday",  # the second way: after Escape cleared a search
    "Deploy",
    "DEPLOY",
    "dy",
    "yd",
    "dddyyy",
    "d y",
    "yes",
    "delete",
    "delete yes",
    "rename",
    "export",
    "fork",
    "redeploy",
    "ready",
    "refund",
    "feedback",
    "different",
    "frozen yogurt",
    "lazy day",
    "dry run",
    "fix the deploy key",
    "xyzzy",
    "nd yd fd ed rd",
    "the quick brown fox jumps over the lazy dog",
    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG",
    ascii_lowercase,
    ascii_uppercase,
    ascii_lowercase[::-1],
]
