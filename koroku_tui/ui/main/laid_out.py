"""One layout per change of the answer being written, not two or three.

Textual lays a widget out, then sets its ``virtual_size``, a reactive that
asks for another layout of the whole screen whenever the size changed: each
step of a streamed answer (a live piece grown, pieces cut off and mounted)
was laid out two or three times, the transcript's blocks and the screen
drawn again each time, while keys waited (issue 22, item 21). Awaiting a
mount asks for one more. What the second layout computes, the first one
computed already: a widget that does not scroll has no use for its
``virtual_size``, and a scrolling column needs it again only when its
scrollbar comes or goes (the width left for its blocks changes).

A class takes these after its Textual widget class (``class
AnswerPiece(Static, LaidOutOnce)``): Textual gives a widget the default CSS
of its first base's line alone (``Static``'s ``height: auto``).

Relies on Textual's ``Widget._size_updated(..., layout=False)``, the form
Textual itself uses for a scroll's reflow, and on ``Widget._mounted_event``
(textual 8.2, pinned in uv.lock; ``tests/test_ui_answer_layout.py`` counts
the layouts).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from textual.geometry import Size
from textual.widget import Widget

__all__ = ["LaidOutOnce", "ScrollLaidOutOnce", "mounted"]


class LaidOutOnce(Widget):
    """A widget that does not scroll: a new size asks for no second layout."""

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)


class ScrollLaidOutOnce(Widget):
    """A scrolling column: laid out twice for a change only if its scrollbar comes or goes."""

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        # Its own size, and the width of what it holds, as laid out: a new
        # height of what it holds alone changes nothing else, unless it now
        # passes the view's height (the vertical scrollbar shows or goes).
        before, view = self.virtual_size, container_size.height
        same = (
            size == self.outer_size
            and container_size == self.container_size
            and virtual_size.width == before.width
            and (virtual_size.height > view) == (before.height > view)
        )
        return super()._size_updated(size, virtual_size, container_size, layout and not same)


async def mounted(widgets: Sequence[Widget]) -> None:
    """Wait until ``widgets`` (mounted with ``mount_all``) are mounted.

    Awaiting what ``mount_all`` returns does that too, then asks for a
    layout of the parent once more: the widgets were laid out already, in
    the frame after they joined the parent.
    """
    await asyncio.gather(*(widget._mounted_event.wait() for widget in widgets))
