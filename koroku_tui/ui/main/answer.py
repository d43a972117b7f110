"""The model's answer: streamed live as Markdown, kept as a few cheap pieces once written.

Why pieces: Textual lays out every mounted widget on each reflow (off-screen
ones too), and its ``Markdown`` widget mounts about one widget per paragraph,
list item or fence: a 28,000-character answer is ~2,000 widgets, and each
reflow then costs ~0.15 s on a small machine, so the screen falls seconds
behind a long stream (``bench/tui_bench.py``). So only the stretch being
written is a live ``Markdown`` (fed by ``Markdown.get_stream()``); every
finished stretch becomes one ``AnswerPiece`` (a Static holding Rich's Markdown
renderable), and a finished or replayed answer is nothing but pieces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.selection import Selection
from textual.visual import Visual
from textual.widget import Widget
from textual.widgets import Static

from koroku_tui.ui.main.selectable import SelectableRich, selected_text
from koroku_tui.ui.safe_text import sanitize

if TYPE_CHECKING:
    # Textual's live Markdown widget (~35 ms to import) is needed only once an
    # answer streams, never on the first frame: the agent load imports it.
    from textual.widgets import Markdown
    from textual.widgets._markdown import MarkdownStream

LIVE_MARKDOWN_MODULE = "textual.widgets._markdown"
MARKDOWN_MODULES = ("rich.markdown", "markdown_it")
"""Rich's Markdown and its parser (~50 ms to import here), imported where an
answer is first drawn: a new or empty session's first frame has none."""

__all__ = ["PIECE_CHARS", "AnswerBlock", "AnswerPiece", "split_point"]

PIECE_CHARS = 1_500
"""Live text kept before a finished stretch is frozen into a piece (~100 Markdown widgets)."""

_CHECK_EVERY = 200
"""Characters of growth between two looks for a cut (each look parses the live text)."""


def split_point(text: str, min_chars: int = PIECE_CHARS) -> int | None:
    """Where ``text`` may be cut into two Markdown documents that render like the whole.

    The cut is at the start of the last top-level block (paragraph, list,
    fence, table...) that begins at least ``min_chars`` in and after a blank
    line, as the live widget's own parser (markdown-it, "gfm-like") sees the
    text. The block being written stays whole after the cut, however it
    grows. None when there is no such block yet, or when the text defines
    reference links (``[x]: url``), which a later piece could no longer see.
    """
    if len(text) < min_chars or "\r" in text:  # markdown-it counts a lone \r as a line end
        return None
    from markdown_it import MarkdownIt  # see MARKDOWN_MODULES

    env: dict[str, object] = {}
    tokens = MarkdownIt("gfm-like").parse(text, env)
    if env.get("references"):
        return None
    starts = [t.map[0] for t in tokens if t.level == 0 and t.map is not None and t.nesting >= 0]
    offsets = [0]
    for line in text.split("\n"):  # markdown-it numbers lines by "\n" alone
        offsets.append(offsets[-1] + len(line) + 1)
    cuts = [offsets[line] for line in starts[1:] if offsets[line] >= min_chars]
    # A block directly after another (no blank line) may be its continuation
    # (a lazy paragraph line, a table row): cut only after a blank line.
    cuts = [cut for cut in cuts if text[:cut].endswith("\n\n")]
    return cuts[-1] if cuts else None


class AnswerPiece(Static):
    """A finished stretch of an answer, drawn as one widget.

    Links are shown with their address rather than made clickable (the text
    comes from the model), and code uses the terminal's own palette. Its
    text can be selected with the mouse and copied (``ui.main.selectable``).
    """

    def __init__(self, text: str) -> None:
        from rich.markdown import Markdown as RichMarkdown  # see MARKDOWN_MODULES

        self.source = text
        markdown = RichMarkdown(text, code_theme="ansi_dark", hyperlinks=False)
        super().__init__(markdown, classes="answer-piece")
        self._drawn = SelectableRich(self, markdown)

    def render(self) -> Visual:
        return self._drawn

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selected_text(self, self._drawn, selection), "\n"


class AnswerBlock(Widget):
    """The model's visible answer: finished pieces, then the live Markdown while streaming."""

    DEFAULT_CSS = """
    AnswerBlock {
        height: auto;
        layout: vertical;
    }
    """

    def __init__(self, text: str = "") -> None:
        # A stored answer's piece is a constructor child, not composed: it is
        # then mounted with the block, in the same frame.
        text = sanitize(text)
        super().__init__(*([AnswerPiece(text)] if text else []), classes="block")
        self._live: Markdown | None = None
        self._stream: MarkdownStream | None = None
        self._live_text = ""
        self._next_look = PIECE_CHARS

    @property
    def text(self) -> str:
        """Everything this answer shows so far, as Markdown source."""
        pieces = "".join(piece.source for piece in self.query_children(AnswerPiece))
        return pieces + self._live_text

    async def write(self, fragment: str) -> None:
        """Append a streamed fragment (batched by the stream, never a full re-render)."""
        fragment = sanitize(fragment)
        if not fragment:
            return
        self._live_text += fragment
        if self._stream is None:
            await self._start_live(fragment)
        else:
            await self._stream.write(fragment)
        if len(self._live_text) >= self._next_look:
            # Geometric spacing: a long stretch with no cut (one huge fence)
            # is parsed O(log n) times, not once per 200 characters.
            size = len(self._live_text)
            self._next_look = size + max(_CHECK_EVERY, size // 4)
            cut = split_point(self._live_text)
            if cut is not None:
                await self._freeze(cut)

    async def finish(self) -> None:
        """Flush the stream and turn what it showed into a piece (safe to call twice)."""
        await self._freeze(len(self._live_text))

    async def _freeze(self, cut: int) -> None:
        """Replace the live Markdown by a piece for ``[:cut]``; the rest streams on in a new one."""
        stream, live = self._stream, self._live
        if stream is None or live is None:
            return
        await stream.stop()
        if not self.is_attached:  # the app is quitting: nothing more is shown (see _start_live)
            self._stream, self._live = None, None
            return
        done, rest = self._live_text[:cut], self._live_text[cut:]
        self._stream, self._live, self._live_text = None, None, rest
        self._next_look = PIECE_CHARS
        with self.app.batch_update():
            if done:
                await self.mount(AnswerPiece(done), before=live)
            if rest:
                await self._start_live(rest, before=live)
            await live.remove()

    async def _start_live(self, text: str, before: Widget | None = None) -> None:
        # Links are not opened on click, as in the finished pieces: the
        # address comes from the model.
        if not self.is_attached:
            # The app is quitting (Textual's is_attached is False from app.exit()
            # on, and mounting then raises): nothing more is shown.
            return
        from textual.widgets import Markdown

        self._live = Markdown(open_links=False)
        await self.mount(self._live, before=before)
        self._stream = Markdown.get_stream(self._live)
        await self._stream.write(text)
