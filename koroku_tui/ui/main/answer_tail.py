"""A long streamed step's head, cut by reading its lines: only its tail is parsed while it streams.

A burst hands one step tens of KB at once (2,000 chunks of 50 characters:
100 KB in ~0.3 s). Parsing all of it to find the cuts took ~90 ms of the
loop's share of the GIL, while only the last screen of it is shown: the
answer's end showed that much later. So a step's head is cut where a scan of
its lines proves a parse would cut (``head_cuts``), and its pieces are
parsed only when drawn (``lazy_markdown``): out of view, once the stream is
quiet, in a thread (``ui.main.answer_guesses``). The tail is parsed and cut
as before.

A cut found by the scan is one :class:`~koroku_tui.ui.main.answer_cuts.Parsed`
makes too (``tests/test_ui_answer_tail.py`` checks it against many texts):
after an empty line, before an unindented line that starts a paragraph (a
letter), a heading with words or a code fence, after a line that shows a
letter or ends a fence (not a rule, nor an empty heading), and outside
every code fence. A text where a block other than a fence may span an empty
line, or where a cut would change what a later piece sees (an HTML block,
a reference definition, a lone ``\\r``), is not scanned: it is parsed whole,
as before.
"""

from __future__ import annotations

import copy
import re
from functools import cache
from typing import TYPE_CHECKING

from koroku_tui.ui.main.answer_cuts import SHOWN_AS, parser

if TYPE_CHECKING:
    from rich.markdown import Markdown as RichMarkdown

__all__ = ["head_cuts", "lazy_markdown"]

_LINE_IN_BRACKETS = re.compile(r"^[ \t>*+\-0-9.)]*\[", re.MULTILINE)
"""A line that may open a reference definition (``[x]: url``, in a quote or list too)."""
_HTML = re.compile(r" {0,3}<")
"""A line that may open an HTML block (some span empty lines)."""
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"#{1,6}[ \t]+\w")
_WORD = re.compile(r"[^\W_]")
"""A letter or a digit: the line shows something (blanks, a rule or a lone ``#`` may not)."""


def head_cuts(text: str, end: int, min_chars: int, *, last: bool = False) -> list[int] | None:
    """Cuts of ``text`` before ``end``, pieces of at least ``min_chars``; None: not scanned.

    An empty list: no cut was found (a code block or a list as long as the head).
    ``last``: the last cut is the last place before ``end`` where one may be,
    however near the one before it: what follows it (a plan's tail, which is
    parsed) is then no longer than it has to be. Pieces spaced by ``min_chars``
    alone left a tail anywhere from ``len(text) - end`` to ``min_chars`` more.
    """
    if "\r" in text or ("]:" in text and _LINE_IN_BRACKETS.search(text)):
        return None  # a lone CR ends a line for markdown-it; a definition is seen by every piece
    cuts: list[int] = []
    latest = 0
    """The last place a cut may be, however near the cut before it."""
    fence = ""
    """The open fence's marks (``` or ~~~, as many as opened it); empty outside a fence."""
    fence_indent = 0
    offset = 0
    blank_above = False
    shows = False
    """The last line that was not empty shows words or ends a fence: a cut may follow it.

    Not a rule, nor a heading or paragraph of blanks or marks (``##``, U+3000),
    which draw a blank line more at a piece's end. A paragraph whose last line
    shows no letter is left whole too: the scan cannot tell it from a heading."""
    shown_above = False
    if end < len(text):
        # Only whole lines: "a" of "a | b" reads as a paragraph, the line as a table's row.
        end = text.rfind("\n", 0, end) + 1
    for line in text[:end].split("\n"):
        at, offset = offset, offset + len(line) + 1
        if fence:
            marks = line.rstrip(" \t").lstrip(" ")
            indent = len(line) - len(line.lstrip(" "))
            closes = indent <= 3 and len(marks) >= len(fence) and set(marks) == {fence[0]}
            if marks and indent < fence_indent:
                # A fence opened indented may be a list item's, which a line
                # less indented ends: whether this line is code is the list's to say.
                return None
            if closes:
                fence = ""
            shows, blank_above = True, False
            continue
        if _HTML.match(line):
            return None
        if not line:
            if not blank_above:
                shown_above = shows
            blank_above = True
            continue
        if blank_above and shown_above and _starts_a_block(line):
            latest = at
            if at - (cuts[-1] if cuts else 0) >= min_chars:
                cuts.append(at)
        opened = _FENCE.match(line)
        if opened and not (opened[1][0] == "`" and "`" in line[opened.end() :]):
            fence, fence_indent = opened[1], opened.start(1)
        shows, blank_above = bool(opened or _WORD.search(line)), False
    if last and latest > (cuts[-1] if cuts else 0):
        cuts.append(latest)
    return cuts


def _starts_a_block(line: str) -> bool:
    """True when ``line``, after an empty line, starts a top-level paragraph, heading or fence.

    Only blocks drawn alike apart and together (not a list, quote or table:
    Rich draws a blank line above those), and none that may be empty (an
    empty paragraph or heading draws differently at a piece's top).
    """
    if "|" in line:
        return False  # maybe a table's first row
    return line[0].isalpha() or bool(_HEADING.match(line)) or line.startswith(("```", "~~~"))


def lazy_markdown(text: str) -> RichMarkdown:
    """Rich's Markdown of ``text`` as ``answer_cuts.markdown`` makes it, parsed when first drawn."""
    drawn = copy.copy(_lazy_blank())  # Rich's constructor makes a parser (see answer_cuts)
    drawn.markup = text
    del drawn.parsed
    return drawn


@cache
def _lazy_blank() -> RichMarkdown:
    from rich.markdown import Markdown  # see answer_cuts.MARKDOWN_MODULES

    class LazyMarkdown(Markdown):
        """Parsed when its tokens are first asked for (drawn, or copied by ``answer_fence``)."""

        def __getattr__(self, name: str) -> object:
            if name != "parsed":
                raise AttributeError(name)
            self.parsed = parser().parse(self.markup)
            return self.parsed

    return LazyMarkdown("", **SHOWN_AS)
