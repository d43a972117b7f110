"""A long code block in the answer being written, highlighted a stretch of lines at a time.

A code block cannot be cut in two pieces, so the piece being written holds
all of it, and each redraw highlighted it whole: 90 KB of Python took 0.7 s a
time, while keys waited. While it grows, a block longer than
:data:`GROWING_CODE_CHARS` is drawn in stretches of :data:`STRETCH_LINES`
lines, each highlighted once and kept (:class:`CodeStretches`): a redraw
highlights only the stretch being written. The layout is Rich's own (the
same lines, the code block's padding at its top and bottom); only the colours
may differ where the highlighting of a stretch depends on the lines above
it. A block finished while it was drawn so (cut off, or the answer's end) is
shown at once from its stretches, then drawn whole in a thread and swapped in
(the same lines: nothing moves), as a restart shows it
(``AnswerBlock._draw_whole``): highlighting 475 KB of code whole takes
seconds, and its end showed only then.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from rich.markdown import CodeBlock, Markdown, MarkdownElement
from rich.syntax import Syntax

if TYPE_CHECKING:
    from markdown_it.token import Token
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.segment import Segment

__all__ = [
    "GROWING_CODE_CHARS",
    "STRETCH_LINES",
    "CodeStretches",
    "GrowingMarkdown",
    "drawn_finished",
    "drawn_growing",
]

GROWING_CODE_CHARS = 8_000
"""Code longer than this in the piece being written is drawn a stretch at a time."""
STRETCH_LINES = 50
"""Lines of code highlighted together (the last stretch again at each redraw)."""


class CodeStretches:
    """The stretches of growing code blocks drawn so far, kept from one redraw to the next."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, int, bool], list[Segment]] = {}
        self.used = False
        """True once a block was drawn a stretch at a time (its colours may then differ)."""

    def draw(
        self, console: Console, options: ConsoleOptions, code: str, lexer: str, theme: str
    ) -> Iterator[Segment]:
        """``code`` as Rich's Markdown draws a code block, each whole stretch drawn only once."""
        self.used = True
        lines = code.split("\n")
        kept: dict[tuple[str, int, bool], list[Segment]] = {}
        for start in range(0, len(lines), STRETCH_LINES):
            stretch = "\n".join(lines[start : start + STRETCH_LINES])
            first, last = start == 0, start + STRETCH_LINES >= len(lines)
            key = (stretch, options.max_width, first)
            drawn = self._kept.get(key)
            if drawn is None or last:
                # Padded as the whole block is: a line above the first stretch, one under the last.
                padding = (int(first), 1, int(last), 1)
                syntax = Syntax(stretch, lexer, theme=theme, word_wrap=True, padding=padding)
                drawn = list(console.render(syntax, options))
            if not last:
                kept[key] = drawn
            yield from drawn
        self._kept = kept  # stretches of code no longer shown go


class _GrowingCodeBlock(CodeBlock):
    """A code block drawn in stretches once it is long (see the module's doc)."""

    stretches: CodeStretches

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> CodeBlock:
        block = super().create(markdown, token)
        assert isinstance(block, _GrowingCodeBlock) and isinstance(markdown, GrowingMarkdown)
        block.stretches = markdown.stretches
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        if len(code) <= GROWING_CODE_CHARS:
            yield from super().__rich_console__(console, options)
            return
        yield from self.stretches.draw(console, options, code, self.lexer_name, self.theme)


class GrowingMarkdown(Markdown):
    """Rich's Markdown of the piece being written: its long code blocks drawn in stretches."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "fence": _GrowingCodeBlock,
        "code_block": _GrowingCodeBlock,
    }

    stretches = CodeStretches()
    """Replaced by the piece's own (``growing``)."""


def drawn_growing(drawn: Markdown, stretches: CodeStretches) -> GrowingMarkdown:
    """``drawn`` as it is (parse and settings), its long code blocks drawn from ``stretches``."""
    grown = GrowingMarkdown.__new__(GrowingMarkdown)
    # A lazy Markdown (answer_tail) is parsed now.
    grown.__dict__.update(vars(drawn), parsed=drawn.parsed)
    grown.stretches = stretches
    return grown


def drawn_finished(drawn: Markdown, stretches: CodeStretches | None) -> Markdown:
    """``drawn``, a finished text, from ``stretches`` when it may hold a long block drawn so.

    Shown at once so, and drawn whole later (see the module's doc).
    """
    if stretches is None or len(drawn.markup) <= GROWING_CODE_CHARS:
        return drawn
    return drawn_growing(drawn, stretches)
