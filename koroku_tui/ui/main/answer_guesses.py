"""Pieces of an answer laid out by a guessed height, drawn later: when scrolled to, or in a thread.

Textual asks every piece its height at each layout, and drawing Markdown
costs more than receiving it: a piece cut off out of view while a burst
streams, every piece of a long stored answer out of view, and every piece of
a long answer at a new width (a resize) is laid out by a height guessed from
its source (``AnswerPiece.guessed``). A scroll draws those it brings into
view before they are painted (``_scrolled``); the others are drawn in a
thread, bottom up, and laid out by their true height a batch at a time
(``_draw_ahead``): keys typed meanwhile are served.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import TYPE_CHECKING

from textual.widget import Widget

from koroku_tui.ui.main.answer_piece import AnswerPiece
from koroku_tui.ui.main.answer_plan import DRAWN_APART_CHARS, apart
from koroku_tui.ui.main.laid_out import LaidOutOnce

if TYPE_CHECKING:
    from textual.geometry import Size

__all__ = ["GuessedPieces"]

BATCH_SECONDS = 0.1
"""Seconds of drawing in the thread between two layouts of the pieces drawn (a frame each)."""


class GuessedPieces(LaidOutOnce):
    """An answer's pieces, some laid out by a guessed height until they are drawn.

    The subclass (``AnswerBlock``) adds guessed pieces to ``_guessed`` and
    calls ``_draw_ahead`` once the stream is quiet.
    """

    _live: AnswerPiece | None
    """The piece being written, if any (drawn by its stream, never guessed here)."""

    def __init__(self, *children: Widget, classes: str) -> None:
        super().__init__(*children, classes=classes)
        self._guessed: list[AnswerPiece] = []
        """Pieces laid out by a guessed height, in order, until drawn."""
        self._measuring = False
        """True while guessed pieces wait for (or are in) the thread drawing them."""
        self._round = 0
        """Counts new widths: a thread drawing for an older one stops."""
        self._reading: float | None = None
        """While guessed pieces are drawn for a scroll: the top of what was in view, moved along."""
        self._watching = False
        self._width = 0
        """The width this block was last laid out at (see ``get_content_height``)."""

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        laid_out, self._width = self._width, width
        if laid_out and width != laid_out:
            self._guess_anew()
        return super().get_content_height(container, viewport, width)

    def _guess_anew(self) -> None:
        """At a new width, a long answer's pieces are laid out by a guess and drawn later.

        Laid out at once, every piece was drawn anew on the loop before the
        next frame (475 KB: ~2.7 s of frozen keys). Those in view are drawn
        when painted, the others in a thread, bottom up (``_draw_ahead``),
        and a piece too long to draw between two frames in a thread of its
        own (``AnswerPiece.guess_anew``).
        """
        self._round += 1  # a thread drawing at the width before stops
        pieces = [piece for piece in self.query_children(AnswerPiece) if piece is not self._live]
        if sum(len(piece.source) for piece in pieces) <= DRAWN_APART_CHARS:
            return  # cheap enough to draw in one layout
        for piece in pieces:
            piece.guess_anew()
        self._guessed = [piece for piece in pieces if piece.guessed and not piece.apart]
        self._watch_view()
        if self._guessed and not self._measuring:
            self._measuring = True
            self.call_after_refresh(self._draw_ahead)

    def _watch_view(self) -> None:
        """Watch the view's scroll from the first guess on: a scroll draws what it shows."""
        if not self._watching and isinstance(self.parent, Widget):
            self._watching = True
            self.watch(self.parent, "scroll_y", self._scrolled, init=False)

    def _scrolled(self, old: float, new: float) -> None:
        """Draw the guessed pieces a scroll brings into view before it is painted.

        Drawn when painted, a piece took its true height a frame later, and
        what was read moved: PageUp showed the same page again, a few rows
        lower. A piece above what was in view takes its true height upwards
        (the view moves with it), so what was read stays in place and the
        scroll goes as far as asked. A scroll still gliding stops where it
        was going (the glide would not move with the view).
        """
        view = self.parent
        if self._reading is not None or not self.guessing or not isinstance(view, Widget):
            return  # already at it (the view moved by this method), or nothing to draw
        gliding = self.app.animator.is_being_animated(view, "scroll_y")
        self._reading = old
        try:
            while shift := self._draw_in_view(self._reading, view.scroll_y, view.size.height):
                self._reading += shift
                y = (view.scroll_target_y if gliding else view.scroll_y) + shift
                gliding = False
                view.scroll_to(y=y, animate=False, immediate=True, release_anchor=False)
        finally:
            self._reading = None

    def _draw_in_view(self, seen: float, top: float, height: int) -> int:
        """Draw the guessed pieces on rows ``top`` to ``top + height`` of the view.

        ``seen``: the top of what was in view before. Returns by how many rows
        the pieces above it grew (drawn bottom up: one drawn moves none above it),
        none after a jump further than a screen: nothing seen is left to keep
        in place, and the top of the view stays where the jump put it.
        """
        if abs(top - seen) > height:
            seen = -math.inf
        guessed, offset = self._guessed, self.virtual_region.y
        below = len(guessed)  # the first piece under ``seen`` (the list is in order)
        while below and offset + guessed[below - 1].virtual_region.y >= seen:
            below -= 1
        shift = 0
        for index in range(below - 1, -1, -1):  # no copy of the list at each frame
            if offset + guessed[index].virtual_region.bottom <= top + shift:
                break
            shift += guessed[index].measure()  # nothing for a piece drawn already (or detached)
        moved = 0
        for index in range(below, len(guessed)):  # each one drawn moves those under it
            piece, region = guessed[index], guessed[index].virtual_region
            if offset + region.y + moved >= top + height:
                break
            if offset + region.bottom + moved > top:
                moved += piece.measure()
        return shift

    def _height_above_view(self) -> int | None:
        """This block's height if it lies above the view's top (None: in view, or followed)."""
        view = self.parent
        if not isinstance(view, Widget) or view.is_vertical_scroll_end:
            return None
        return self.outer_size.height if self.virtual_region.bottom <= view.scroll_y else None

    def _grown_above_view(self, height: int) -> None:
        """Once laid out: move the view down by what this block, above it, grew from ``height``."""
        view, grown = self.parent, self.outer_size.height - height
        if grown and isinstance(view, Widget):
            y = view.scroll_y + grown
            view.scroll_to(y=y, animate=False, immediate=True, release_anchor=False)

    @property
    def guessing(self) -> bool:
        """True while a piece is laid out by a guessed height (drawn once the stream is quiet)."""
        return any(piece.guessed for piece in self._guessed)

    def _draw_ahead(self) -> None:
        """Draw the guessed pieces in a thread, newest first; lay batches out by true height."""
        pieces = [piece for piece in reversed(self._guessed) if piece.guessed]
        round_, loop, left = self._round, asyncio.get_running_loop(), len(self._guessed)

        def draw() -> None:
            started = time.monotonic()
            for piece in pieces:
                if self._round != round_:
                    return  # a new width: drawn for it by the next round
                width = piece.size.width
                if width:  # else laid out, then drawn, by measure()
                    piece.draw_at(width)
                if time.monotonic() - started > BATCH_SECONDS:
                    loop.call_soon_threadsafe(self._lay_out_drawn)
                    started = time.monotonic()

        def done() -> None:
            self._lay_out_drawn()
            if self._guessed and self.is_attached:
                if len(self._guessed) == left and self._round == round_:
                    self._guessed.pop().measure()  # none drawn (its width moved): here then
                self._draw_ahead()  # more came meanwhile, or a new width
            else:
                self._guessed.clear()
                self._measuring = False

        apart("answer-drawn-ahead", draw, done)

    def _lay_out_drawn(self) -> None:
        """Lay out by their true height the guessed pieces drawn already, bottom up."""
        view = self.parent if isinstance(self.parent, Widget) else self
        # The view follows the end (Textual keeps its bottom in place), or
        # what is read stays in place: by as many rows as grew above it.
        follows, view_top = view.is_vertical_scroll_end, view.scroll_y
        shift = 0
        while self._guessed:
            piece = self._guessed[-1]  # bottom up: a piece measured moves none of those left
            width = piece.size.width
            if piece.is_attached and piece.guessed and width and not piece.drawn_at(width):
                break  # not drawn yet
            self._guessed.pop()
            if not piece.is_attached:
                continue
            above = not follows and self.virtual_region.y + piece.virtual_region.bottom <= view_top
            grown = piece.measure()
            shift += grown if above else 0
        if shift:
            view.scroll_to(
                y=view.scroll_y + shift, animate=False, immediate=True, release_anchor=False
            )
