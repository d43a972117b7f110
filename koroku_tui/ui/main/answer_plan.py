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

import asyncio
import contextlib
import contextvars
import threading
from itertools import pairwise
from typing import TYPE_CHECKING, NamedTuple

from koroku_tui.ui.main.answer_cuts import Parsed, estimated_rows, markdown
from koroku_tui.ui.main.answer_tail import head_cuts, lazy_markdown
from koroku_tui.ui.main.selectable import SelectableRich

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.markdown import Markdown as RichMarkdown

    from koroku_tui.ui.main.answer_piece import AnswerPiece

__all__ = [
    "DRAWN_APART_CHARS",
    "PIECE_CHARS",
    "STORED_PIECE_CHARS",
    "TAIL_CHARS",
    "Plan",
    "apart",
    "plan",
]

DRAWN_APART_CHARS = 16_000
"""A step's text longer than this is parsed and drawn in a thread (~0.05 s of drawing)."""
PIECE_CHARS = 1_500
"""Live text kept before finished stretches are cut off into pieces of at least this size."""
STORED_PIECE_CHARS = 8_000
"""The least a piece of a long stored answer holds: Textual lays out every piece at each
layout (~0.15 ms each here), and 475 KB cut as a stream is (~250 pieces) took ~40 ms."""
TAIL_CHARS = 8_000
"""The least a ``tail_first`` plan parses of a step's text: more than a screen of it."""
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


def plan(
    live: AnswerPiece,
    text: str,
    next_look: int,
    width: int,
    *,
    growing: bool,
    piece_chars: int = PIECE_CHARS,
    shown_rows: int = 0,
    tail_first: bool = False,
) -> Plan:
    """What ``live`` shows of ``text`` (its and what arrived), long parts drawn at ``width``.

    ``next_look``: no cut is looked for in a shorter text. ``width`` 0:
    nothing is drawn here (shown, the widgets draw it). ``piece_chars``:
    the least a piece cut off holds. ``shown_rows``: the parts on that many
    rows at the end (about) are drawn here too, whatever their length: the
    rows shown (a stored answer, see ``STORED_PIECE_CHARS``). ``tail_first``:
    a long text's head is cut by a scan of its lines, its pieces parsed when
    drawn, and only its last :data:`TAIL_CHARS` or more are parsed here
    (``ui.main.answer_tail``; a streamed step's: its end shows sooner). Any thread.
    """
    head = [0]
    """Where the pieces cut off unparsed start (``tail_first``), then where the tail starts."""
    if tail_first and len(text) >= next_look and len(text) > DRAWN_APART_CHARS:
        head += head_cuts(text, len(text) - TAIL_CHARS, STORED_PIECE_CHARS, last=True) or []
    parts: list[RichMarkdown] = [lazy_markdown(text[a:b]) for a, b in pairwise(head)]
    tail_start = head[-1]
    if len(text) < next_look:
        parts.append(markdown(text))
        bounds = [0]
    else:
        parsed = Parsed(text[tail_start:])  # one parse: for the cuts, and to draw every part
        tail = [0, *parsed.cuts(piece_chars)]
        bounds = [*head[:-1], *(tail_start + cut for cut in tail)]
        rest = len(text) - bounds[-1]
        # Geometric spacing: a long stretch with no cut (one huge fence)
        # is parsed O(log n) times, not once per 200 characters.
        next_look = max(PIECE_CHARS, rest + max(_CHECK_EVERY, rest // 4))
        parts += [parsed.markdown(a, b) for a, b in pairwise(tail)]
        parts.append(parsed.markdown(tail[-1]))
    # A long code block cut off or ended is shown from the stretches drawn
    # while it grew, and drawn whole later (see answer_fence).
    stretches = live.stretches
    if stretches is not None:  # Rich's Markdown is imported: an answer is drawn already
        from koroku_tui.ui.main.answer_fence import drawn_finished

        # Not the head's: drawn when painted (out of view: in a thread), as a
        # whole; made from the stretches, each would be parsed here.
        head_parts = len(head) - 1
        parts[head_parts:-1] = [drawn_finished(part, stretches) for part in parts[head_parts:-1]]
    drawings = [SelectableRich(live, part) for part in parts[:-1]]
    drawings.append(live.drawing(parts[-1], growing=growing))
    ends = [*bounds[1:], len(text)]
    below = 0  # rows under the part (about)
    for start, end, drawing in reversed(list(zip(bounds, ends, drawings, strict=True))):
        if start < tail_start:
            break  # the head: drawn when painted, or out of view in a thread (answer_guesses)
        if width and (below < shown_rows or end - start > DRAWN_APART_CHARS):
            drawing.prepare(width)
        below += estimated_rows(text[start:end], width) + 1 if below < shown_rows else 0
    return Plan(bounds, drawings[:-1], drawings[-1], next_look)


def apart(name: str, draw: Callable[[], object], then: Callable[[], object]) -> None:
    """Run ``draw`` in a daemon thread named ``name``, then ``then`` on the running loop.

    A daemon thread: highlighting 475 KB of code takes seconds, which a
    quitting user must not wait for (the loop's executor is joined at exit).
    Run in the caller's context: drawing reads the app's console (``active_app``).
    """
    loop = asyncio.get_running_loop()

    def job() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: the app quit
            try:
                draw()
            finally:
                loop.call_soon_threadsafe(then)

    run = contextvars.copy_context().run
    threading.Thread(target=run, args=(job,), name=name, daemon=True).start()
