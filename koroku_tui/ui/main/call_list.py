"""The rows of a step of many tool calls, drawn by one widget, only the lines in view.

A thousand calls as a thousand ``ToolRow`` widgets took seconds to mount,
style and lay out, and the keys waited (issue 22, item 21). A step of more
than ``ROWS_AS_WIDGETS`` calls is one ``CallList`` (a Line API widget): each
call is a ``CallState`` that draws the same text as its ``ToolRow`` would,
and the list behaves as the rows would: Tab and shift+tab go from call to
call (and on past the first and last), Enter, space or a click opens the
call under the cursor on its answer, Escape closes it and gives the prompt
its focus back, and the text can be selected with the mouse.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import Any, ClassVar, cast

from rich._wrap import divide_line
from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from koroku_tui.agent.tools.spec import ToolSpec
from koroku_tui.ui.main.call_state import CallState
from koroku_tui.ui.main.draw_styles import StylesOncePerDraw
from koroku_tui.ui.main.recall_row import SearchState, new_call_state, new_tool_row
from koroku_tui.ui.main.tool_row import ToolRow

__all__ = [
    "MEASURED_PER_FRAME",
    "ROWS_AS_WIDGETS",
    "CallList",
    "call_blocks",
    "call_rows",
    "wrapped_height",
]

ROWS_AS_WIDGETS = 60
"""A step with more calls than this shows them in one ``CallList``; fewer, a ``ToolRow`` each.

Why two ways to draw a call: a ``ToolRow`` is a widget, so Textual gives it
what a widget has (its own focus, hover, CSS states, a tooltip, the
transcript's selection of blocks) and a step of a few calls, the common
case, costs nothing measurable; past some tens of widgets mounting and
laying them out is what held the keys (a thousand took seconds). Below the
threshold nothing changes for the usual step; above it, one widget.
"""

MEASURED_PER_FRAME = 100
"""Calls a layout measures at most (the newest first); the others' heights are guessed.

Measuring a call (making its line and cutting it at the width) costs
~30-60 µs: a thousand held the first layout of a step 36-95 ms while the
keys waited. The guessed ones are measured after the next frames, as many
each; the list is anchored to its newest calls, which are measured first,
so what moves is above the view.
"""


def wrapped_height(plain: str, width: int) -> int:
    """Lines ``Text.wrap`` cuts one line of ``plain`` (no newline) into at ``width`` (folding).

    Rich's ``divide_line`` is the function ``Text.wrap`` cuts with; it is
    private, but the public way (``Text.wrap``, which makes the lines) cost
    ~100 µs a line against ~40 µs, and the first layout of a thousand calls
    measures each (``test_ui_call_list`` compares the two: a Rich that cuts
    differently fails there, not on screen).
    """
    return len(divide_line(plain, max(1, width), fold=True)) + 1


Call = tuple[ToolSpec, dict[str, Any], "str | None"]
"""A call as its row needs it: the tool's spec, the arguments, the call's id."""


def call_rows(calls: Sequence[Call], *, listed: bool | None = None) -> list[CallState]:
    """A row per call of one step: ``ToolRow`` widgets, or the entries of one ``CallList``.

    ``listed``: whether the step's calls go in a list (default: when there are many).
    """
    listed = len(calls) > ROWS_AS_WIDGETS if listed is None else listed
    new = new_call_state if listed else new_tool_row
    return [new(spec, args, call_id) for spec, args, call_id in calls]


def call_blocks(rows: list[CallState]) -> list[Widget]:
    """The transcript blocks that show ``rows`` (made by ``call_rows``)."""
    if rows and not isinstance(rows[0], ToolRow):
        return [CallList(rows)]
    return cast(list[Widget], rows)


class CallList(StylesOncePerDraw, Widget, can_focus=True):
    """A step's calls, a line each (an opened one with its answer below), one cursor among them."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "call-list--failed",
        "call-list--denied",
        "call-list--interrupted",
        "call-list--opened",
        "call-list--cursor",
        "call-list--cursor-opened",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        # As a ToolRow's and a SearchRow's (``check_action`` picks the one for the call).
        Binding("enter,space", "open_or_more", "Result", id="transcript.tool_result"),
        Binding("enter,space", "open_hits", "Hits", id="transcript.search_hits"),
        Binding("escape", "close", "Close", show=False, id="transcript.tool_close"),
        Binding("tab", "next_call", show=False),
        Binding("shift+tab", "previous_call", show=False),
    ]

    def __init__(self, calls: Iterable[CallState]) -> None:
        super().__init__(classes="block tool-row call-list")
        self.calls: list[CallState] = []
        self.cursor = 0
        """The call Enter opens (drawn highlighted while the list has focus)."""
        self._index: dict[CallState, int] = {}
        self._width = 0
        self._lines: dict[int, list[Text]] = {}
        """The wrapped lines of the calls drawn at ``_width`` (by index), kept until one changes."""
        self._heights: list[int] = []
        self._starts: list[int] = []
        """The first line of each call and the end (empty when heights changed: recounted)."""
        self._guessed: list[int] = []
        """The calls (by index, ascending) whose height in ``_heights`` is a guess."""
        self._measuring = False
        """A pass measuring guessed calls is due after the next frame."""
        self._guess = 1
        """The height a call not measured yet is taken to have."""
        self._wrapped_heights: dict[str, int] = {}
        """Lines a closed call's line takes at ``_width``, by its text (``_height``)."""
        self.extend(calls)

    def extend(self, calls: Iterable[CallState]) -> None:
        """Add calls of the step at the end (the rest of a step that came in two batches)."""
        last = len(self.calls) - 1
        self.calls += calls
        if 0 <= last < len(self._heights) and self.calls[last].opened:
            self._lines.pop(last, None)  # no longer the last: an opened one gets its margin
            self._heights[last] = self._height(last)
            self._starts = []
        for index in range(len(self._index), len(self.calls)):
            call = self.calls[index]
            self._index[call] = index
            call.redraw = self._changed
        self.refresh(layout=True)

    # -- layout ----------------------------------------------------------

    def _lines_of(self, index: int) -> list[Text]:
        lines = self._lines.get(index)
        if lines is None:
            lines = self._lines[index] = self._wrapped(index, self.calls[index].row_text())
        return lines

    def _wrapped(self, index: int, text: Text) -> list[Text]:
        """``text`` (call ``index``'s) cut into the lines drawn at the current width."""
        if "\n" not in text.plain and text.cell_len <= self._width:
            return [text]
        lines = list(text.wrap(self.app.console, max(1, self._width)))
        if self.calls[index].opened and index < len(self.calls) - 1:
            lines.append(Text())  # as an opened row's bottom margin
        return lines

    def _height(self, index: int) -> int:
        call = self.calls[index]
        if not call.opened:  # its line, made without styling (a thousand are measured)
            line = call.line()
            if "\n" not in line:  # its lines are made when drawn, if in view
                if cell_len(line) <= self._width:
                    return 1
                # Cutting a line costs ~40 µs; a step's calls often say the
                # same thing ("not run"), and a thousand are measured.
                height = self._wrapped_heights.get(line)
                if height is None:
                    height = self._wrapped_heights[line] = wrapped_height(line, self._width)
                return height
        text = call.row_text()
        if "\n" not in text.plain:  # closed: its lines are made when drawn, if in view
            if text.cell_len <= self._width:
                return 1
            return wrapped_height(text.plain, self._width)  # without making the lines
        lines = self._lines[index] = self._wrapped(index, text)
        return len(lines)

    def _measure(self, width: int) -> None:
        if width != self._width:
            self._width = width
            self._lines.clear()
            self._wrapped_heights.clear()
            self._heights, self._guessed = [], []
            self._measuring = False  # all measured again, from the newest
        if len(self._heights) != len(self.calls):  # new calls (or all, at a new width)
            new = range(len(self._heights), len(self.calls))
            self._heights += [self._guess] * len(new)
            self._guessed += new
            if not self._measuring:  # else that pass measures them, a frame at a time
                self._measure_guessed()
            self._starts = []
        if not self._starts:
            self._starts = [0, *accumulate(self._heights)]

    def _measure_guessed(self) -> bool:
        """Measure ``MEASURED_PER_FRAME`` guessed calls, newest first; guess the rest.

        A guess is the mean height of the calls measured (a step's calls
        look alike). True when a height changed. The rest are measured
        after the next frame.
        """
        self._measuring = False
        measured = self._guessed[-MEASURED_PER_FRAME:]
        del self._guessed[-MEASURED_PER_FRAME:]
        changed = False
        for index in measured:
            height = self._height(index)
            changed = changed or height != self._heights[index]
            self._heights[index] = height
        if self._guessed:
            guess = self._guess = round(sum(self._heights[i] for i in measured) / len(measured))
            for index in self._guessed:
                changed = changed or self._heights[index] != guess
                self._heights[index] = guess
            self._measuring = True
            # After the next frame, from the list's own queue (keys go first).
            self.call_after_refresh(self.call_later, self._measure_later)
        return changed

    def _measure_later(self) -> None:
        """The pass after a frame: measure more guessed calls, and lay out again if one moved."""
        if not self._measuring or not self.is_attached:
            return
        if self._measure_guessed():
            self._starts = []
            self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._measure(width)
        return self._starts[-1]

    def _changed(self, call: CallState) -> None:
        """A call finished, opened or closed: draw it again (and lay out if its height changed)."""
        index = self._index[call]
        self._lines.pop(index, None)
        if not self._width or index >= len(self._heights):
            # Not laid out yet: the layout ``extend`` asked for measures and draws
            # it (a thousand calls finished at once, not a thousand refreshes).
            return
        guessed = bisect_left(self._guessed, index)
        if guessed < len(self._guessed) and self._guessed[guessed] == index:
            del self._guessed[guessed]  # measured now
        height = self._height(index)
        if height != self._heights[index]:
            self._heights[index] = height
            self._starts = []
            self.refresh(layout=True)
            return
        self.refresh()

    # -- drawing ---------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        self._measure(self.size.width)
        width = self.size.width
        if not self.calls or y >= self._starts[-1]:
            return Strip.blank(width, self.rich_style)
        index = bisect_right(self._starts, y) - 1
        lines = self._lines_of(index)
        offset = y - self._starts[index]
        if offset >= len(lines):  # its height is a guess, measured after the next frame
            return Strip.blank(width, self.rich_style)
        line = lines[offset].copy()
        style = self.rich_style + self._state_style(index)
        line.stylize_before(style)
        selection = self.text_selection
        span = selection.get_span(y) if selection is not None else None
        if span is not None:
            start, end = span
            line.stylize(self.screen.get_component_rich_style("screen--selection"), start, end)
        segments = list(line.render(self.app.console))
        strip = Strip(segments).extend_cell_length(width, style)
        return strip.crop(0, width).apply_offsets(0, y)

    def _state_style(self, index: int) -> Style:
        call = self.calls[index]
        names = []
        if call.opened:
            names.append("call-list--opened")
        if call.interrupted:
            names.append("call-list--interrupted")
        elif call.denied:
            names.append("call-list--denied")
        elif call.failed:
            names.append("call-list--failed")
        if self.has_focus and index == self.cursor:
            names.append("call-list--cursor-opened" if call.opened else "call-list--cursor")
        style = Style()
        for name in names:
            style += self.get_component_rich_style(name, partial=True)
        return style

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text of the calls' lines, as drawn."""
        self._measure(self.size.width)
        lines = (line.plain for i in range(len(self.calls)) for line in self._lines_of(i))
        return selection.extract("\n".join(lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    # -- the cursor ------------------------------------------------------

    def _call_at(self, y: int) -> int | None:
        self._measure(self.size.width)
        if not self.calls or not 0 <= y < self._starts[-1]:
            return None
        return bisect_right(self._starts, y) - 1

    def move_to(self, index: int) -> None:
        """Put the cursor on call ``index`` and scroll it into view."""
        self.cursor = max(0, min(index, len(self.calls) - 1))
        self.refresh()
        parent = self.parent
        if isinstance(parent, Widget) and self._starts:
            top = self.virtual_region.y + self._starts[self.cursor]
            height = self._heights[self.cursor]
            parent.scroll_to_region(Region(0, top, 1, height), animate=False, immediate=True)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def action_next_call(self) -> None:
        if self.cursor < len(self.calls) - 1:
            self.move_to(self.cursor + 1)
        else:
            self.screen.focus_next()

    def action_previous_call(self) -> None:
        if self.cursor > 0:
            self.move_to(self.cursor - 1)
        else:
            self.screen.focus_previous()

    # -- opening ---------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        call = self.calls[self.cursor] if self.calls else None
        if action == "close":
            return call is not None and call.opened
        if action in ("open_or_more", "open_hits"):
            search = isinstance(call, SearchState)
            wanted = "open_hits" if search else "open_or_more"
            return call is not None and bool(call.answer) and action == wanted
        return True

    def action_open_or_more(self) -> None:
        """Closed: open the call on its shortened answer; shortened: whole; whole: close."""
        self.calls[self.cursor].open_or_more()
        self.move_to(self.cursor)

    def action_open_hits(self) -> None:
        self.action_open_or_more()

    def action_close(self) -> None:
        self.calls[self.cursor].close()
        self.post_message(ToolRow.Closed())

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        index = None if offset is None else self._call_at(offset.y)
        if index is None:
            return
        self.cursor = index
        self.refresh()
        if self.calls[index].answer:
            self.action_open_or_more()
