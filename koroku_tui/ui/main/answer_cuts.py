"""Where a streamed answer may be cut into pieces, and how tall a piece is before it is drawn.

One parse serves the cut and the drawing: the live text is parsed once, as
Rich's Markdown parses it, and each piece cut from it is drawn from its share
of the tokens (:meth:`Parsed.markdown`) rather than parsed again by Rich.
Before a piece is drawn, its height is guessed from its source
(:func:`estimated_rows`): drawing Markdown costs more than receiving it.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from rich.markdown import Markdown as RichMarkdown

__all__ = [
    "MARKDOWN_MODULES",
    "SHOWN_AS",
    "Parsed",
    "estimated_rows",
    "markdown",
    "parser",
    "split_point",
    "warm_up",
]

MARKDOWN_MODULES = ("rich.markdown", "markdown_it")
"""Rich's Markdown and its parser (~50 ms to import here), imported where an
answer is first drawn: a new or empty session's first frame has none."""


@cache
def parser() -> MarkdownIt:
    """The parser Rich's Markdown uses (its own configuration), made once."""
    from markdown_it import MarkdownIt  # see MARKDOWN_MODULES

    made = MarkdownIt().enable("strikethrough").enable("table")
    # Its rules are gathered at its first parse, which other threads (a plan's,
    # a piece drawn apart) must not share: a parse meanwhile ran with some of
    # them (wrong tokens, or "none of the block rules matched"). Made here, in
    # the thread that made it, before any other thread has it.
    made.parse("a *b*\n\n- c")
    return made


def warm_up() -> None:
    """Draw a small answer once, in the caller's thread (the agent's loading thread).

    The first code block an answer draws builds its lexer's tables (Pygments
    compiles a language's patterns once per process) and the first Markdown
    its parser: ~0.05-0.15 s here, which the first answer's frames (and the
    keys typed meanwhile) would otherwise wait for.
    """
    from io import StringIO

    from rich.console import Console

    sample = "## A\n\nSome *text*, `code`.\n\n- a\n1. b\n\n```python\ndef f(a):\n    return a\n```"
    console = Console(file=StringIO(), width=80, color_system="truecolor")
    console.print(markdown(sample, Parsed(sample).tokens))


SHOWN_AS: dict[str, Any] = {"code_theme": "ansi_dark", "hyperlinks": False}
"""Rich's Markdown settings for an answer: links shown with their address rather than
made clickable (the text comes from the model), code in the terminal's own palette."""


def markdown(text: str, tokens: list[Token] | None = None) -> RichMarkdown:
    """Rich's Markdown of ``text`` as an answer shows it (``SHOWN_AS``); drawn from ``tokens``
    when given.

    ``tokens``: this text's share of a parse already made (Rich would parse
    the text again; an empty text parses at no cost).
    """
    drawn = copy.copy(_blank())
    drawn.markup = text
    drawn.parsed = parser().parse(text) if tokens is None else tokens
    return drawn


@cache
def _blank() -> RichMarkdown:
    """An empty answer's Markdown, which each answer's is a copy of.

    Rich's constructor makes a new parser each time (~0.17 ms here, more
    than parsing a paragraph): a step cut into a dozen pieces paid it a dozen
    times. A copy shares the settings (``SHOWN_AS``) and ``parser()``.
    """
    from rich.markdown import Markdown  # see MARKDOWN_MODULES

    return Markdown("", **SHOWN_AS)


_OPEN_WITH_A_BLANK_LINE = frozenset(
    {"bullet_list_open", "ordered_list_open", "blockquote_open", "table_open"}
)
"""Blocks Rich draws a blank line above when they open a document."""
_CLOSE_WITH_A_BLANK_LINE = frozenset({"hr"})
"""Blocks Rich draws a blank line under when they close a document."""


def _drawn_alike(before: str, after: str) -> bool:
    """True when blocks ``before`` and ``after``, drawn apart, look as drawn together.

    Pieces are a blank line apart (the margin between them), as Rich puts
    blocks; a block drawn with a blank line of its own at that end would
    show two. ``before`` is "empty" after a block that shows no text.
    """
    return (
        before not in _CLOSE_WITH_A_BLANK_LINE
        and before != "empty"
        and after not in _OPEN_WITH_A_BLANK_LINE
    )


class Parsed:
    """A text parsed as Rich's Markdown parses it, and where it may be cut.

    A cut is at the start of a top-level block (paragraph, heading, fence...)
    after a blank line: the two sides then render like the whole, and the
    block being written stays whole after the cut, however it grows.
    There is none when the text defines reference links (``[x]: url``),
    which a later piece could no longer see, or holds a lone ``\\r``
    (markdown-it counts it as a line end).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        env: dict[str, object] = {}
        self.tokens = parser().parse(text, env)
        self._starts: dict[int, int] = {}
        """Each possible cut (an offset in the text) and the index of its block's first token."""
        if env.get("references") or "\r" in text:
            return
        offsets = [0]
        for line in text.split("\n"):  # markdown-it numbers lines by "\n" alone
            offsets.append(offsets[-1] + len(line) + 1)
        previous = ""
        for index, token in enumerate(self.tokens):
            if token.level != 0 or token.map is None or token.nesting < 0:
                continue
            offset = offsets[token.map[0]]
            # A block directly after another (no blank line) may be its continuation
            # (a lazy paragraph line, a table row): cut only after a blank line.
            if index and text.endswith("\n\n", 0, offset) and _drawn_alike(previous, token.type):
                self._starts.setdefault(offset, index)
            # An empty heading or paragraph (``##``, a line of U+3000) draws
            # a blank line at a piece's edge that the whole does not: no cut
            # on either side of one.
            if self._empty(index):
                self._starts.pop(offset, None)
                previous = "empty"
            else:
                previous = token.type

    def _empty(self, index: int) -> bool:
        """True when the block opened at token ``index`` shows no text (its words are blank)."""
        if self.tokens[index].type not in ("heading_open", "paragraph_open"):
            return False
        words = self.tokens[index + 1] if index + 1 < len(self.tokens) else None
        return words is None or (words.type == "inline" and not words.content.strip())

    def cuts(self, min_chars: int) -> list[int]:
        """Where to cut the text into pieces of at least ``min_chars`` (before the last one)."""
        chosen: list[int] = []
        for offset in self._starts:  # in order
            if offset - (chosen[-1] if chosen else 0) >= min_chars:
                chosen.append(offset)
        return chosen

    def last_cut(self, min_chars: int) -> int | None:
        """The last cut at least ``min_chars`` in (None: there is none)."""
        found = [offset for offset in self._starts if offset >= min_chars]
        return found[-1] if found else None

    def markdown(self, start: int, end: int | None = None) -> RichMarkdown:
        """The Markdown of the text from cut ``start`` (or 0) to cut ``end`` (or its end)."""
        first = self._starts[start] if start else 0
        last = len(self.tokens) if end is None else self._starts[end]
        return markdown(self.text[start:end], self.tokens[first:last])


def split_point(text: str, min_chars: int) -> int | None:
    """Where ``text`` may be cut into two Markdown documents that render like the whole.

    The last cut (see :class:`Parsed`) at least ``min_chars`` in.
    """
    if len(text) < min_chars:
        return None
    return Parsed(text).last_cut(min_chars)


def estimated_rows(source: str, width: int) -> int:
    """About how many lines Rich's Markdown draws ``source`` in at ``width`` columns.

    Each source line wrapped at the width, code at the width less the code
    block's padding (a fence's marks stand for the padding lines, a blank
    line for the line between two blocks). A guess until the piece is drawn.
    """
    rows, code = 0, False
    for line in source.rstrip("\n").split("\n"):
        if line.startswith(("```", "~~~")):
            code = not code
        columns = max(width - 2 if code else width, 1)
        rows += (len(line) + columns - 1) // columns or 1
    return rows
