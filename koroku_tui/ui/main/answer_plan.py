"""What one step of the answer being written shows, made in a thread when the text is long.

Parsing and drawing Markdown costs more than receiving it. An answer no cut
can split (one code block, list or table hundreds of KB long) stays in the
piece being written, parsed and drawn whole at each step, and a burst hands
a step tens of KB at once: 475 KB of code held the keys 2.8 s at the end of
its answer, a 250 KB list 0.6 s at each parse. A step over
:data:`DRAWN_APART_CHARS` makes its :class:`Plan` (the cuts, each part's
Markdown, the long parts drawn at the width shown) in a thread, and the
keys are served meanwhile; what is planned is then shown in one frame.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, NamedTuple

from koroku_tui.ui.main.answer_cuts import Parsed, markdown
from koroku_tui.ui.main.selectable import SelectableRich

if TYPE_CHECKING:
    from rich.markdown import Markdown as RichMarkdown

    from koroku_tui.ui.main.answer_piece import AnswerPiece

__all__ = ["DRAWN_APART_CHARS", "PIECE_CHARS", "Plan", "plan"]

DRAWN_APART_CHARS = 16_000
"""A step's text longer than this is parsed and drawn in a thread (~0.05 s of drawing)."""
PIECE_CHARS = 1_500
"""Live text kept before finished stretches are cut off into pieces of at least this size."""
_CHECK_EVERY = 200
"""Characters of growth between two looks for a cut (each look parses the live text)."""


class Plan(NamedTuple):
    """What a step shows: the pieces cut off, and the text left in the piece being written."""

    bounds: list[int]
    """0, then where each piece cut off ends (the live text starts at the last)."""
    pieces: list[SelectableRich]
    """Each piece cut off, drawn already when long (bound to the live piece until mounted)."""
    live: SelectableRich
    """The live piece's drawing of the text left (drawn already when long)."""
    next_look: int
    """The live text's length at which to look for a cut again."""


def plan(live: AnswerPiece, text: str, next_look: int, width: int, *, growing: bool) -> Plan:
    """What ``live`` shows of ``text`` (its and what arrived), long parts drawn at ``width``.

    ``next_look``: no cut is looked for in a shorter text. ``width`` 0:
    nothing is drawn here (shown, the widgets draw it). Any thread.
    """
    if len(text) < next_look:
        parts: list[RichMarkdown] = [markdown(text)]
        bounds = [0]
    else:
        parsed = Parsed(text)  # one parse: for the cuts, and to draw every part
        bounds = [0, *parsed.cuts(PIECE_CHARS)]
        rest = len(text) - bounds[-1]
        # Geometric spacing: a long stretch with no cut (one huge fence)
        # is parsed O(log n) times, not once per 200 characters.
        next_look = max(PIECE_CHARS, rest + max(_CHECK_EVERY, rest // 4))
        parts = [parsed.markdown(a, b) for a, b in pairwise(bounds)]
        parts.append(parsed.markdown(bounds[-1]))
    # A long code block cut off or ended is shown from the stretches drawn
    # while it grew, and drawn whole later (see answer_fence).
    stretches = live.stretches
    if stretches is not None:  # Rich's Markdown is imported: an answer is drawn already
        from koroku_tui.ui.main.answer_fence import drawn_finished

        parts[:-1] = [drawn_finished(part, stretches) for part in parts[:-1]]
    drawings = [SelectableRich(live, part) for part in parts[:-1]]
    drawings.append(live.drawing(parts[-1], growing=growing))
    ends = [*bounds[1:], len(text)]
    for start, end, drawing in zip(bounds, ends, drawings, strict=True):
        if width and end - start > DRAWN_APART_CHARS:
            drawing.prepare(width)
    return Plan(bounds, drawings[:-1], drawings[-1], next_look)
