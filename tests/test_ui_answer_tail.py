"""A long streamed step's head is cut by a scan of its lines, and parsed only when drawn.

The scan must cut only where a parse would (``Parsed``), and pieces cut so
must draw, a blank line apart, like the whole text: checked on documents made
of the lines that start, continue and end Markdown's blocks.
"""

from __future__ import annotations

import io
import sys
import threading
from itertools import pairwise
from typing import cast

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.markdown import Markdown as RichMarkdown
from rich.segment import Segment

from koroku_tui.ui.main.answer_cuts import SHOWN_AS, Parsed, markdown, parser
from koroku_tui.ui.main.answer_piece import AnswerPiece
from koroku_tui.ui.main.answer_plan import DRAWN_APART_CHARS, TAIL_CHARS, plan
from koroku_tui.ui.main.answer_tail import head_cuts, lazy_markdown

_BLOCKS = [
    "para text",
    "Ünïcode words",
    "",
    "- item",
    "  - nested",
    "1. step",
    "2) step",
    "```",
    "```py",
    "````",
    "``` a`b",
    "~~~",
    "  ```",
    "   ~~~",
    "    ```",
    "\t```",
    "> ```",
    "# head",
    "#",
    "## ",
    "\u3000",
    "\u00a0",
    "    indented",
    "  two spaces in",
    "| a | b |",
    "a | b",
    "|---|---|",
    "--|--",
    "> quote",
    "===",
    "---",
    "***",
    "_ _ _",
    "lazy",
]
_PARSED_WHOLE = ["see [r]", "[r]: http://e.st", "<div>x</div>", "<!--", "-->"]
LINES = st.lists(
    # Mostly prose and empty lines, as answers are, so that most documents have cuts;
    # rarely a line that has the text parsed whole.
    st.sampled_from(["para text", "", ""] * 20 + _BLOCKS * 2 + _PARSED_WHOLE),
    max_size=50,
)
"""Documents line by line, from what starts, continues and ends blocks."""


def drawn(text: str, *, lazy: bool = False) -> list[str]:
    """The lines Rich's Markdown draws ``text`` in (40 columns), as a piece's height counts them."""
    console = Console(width=40, file=io.StringIO(), color_system=None)
    segments = console.render((lazy_markdown if lazy else markdown)(text), console.options)
    return ["".join(s.text for s in line).rstrip() for line in Segment.split_lines(segments)]


@settings(max_examples=500)
@given(LINES, st.integers(min_value=1, max_value=40), st.booleans())
def test_the_scan_cuts_only_where_a_parse_cuts(
    lines: list[str], min_chars: int, last: bool
) -> None:
    text = "\n".join(lines) + "\nend"
    cuts = head_cuts(text, len(text), min_chars, last=last)
    if not cuts:
        return
    assert set(cuts) <= set(Parsed(text).cuts(1))
    spaced = cuts[:-1] if last else cuts  # ``last``: the last one as late as it can be
    assert all(b - a >= min_chars for a, b in pairwise([0, *spaced]))
    if last:
        assert cuts[-1] == max(head_cuts(text, len(text), 1) or [0])


@settings(max_examples=500)
@given(LINES, st.integers(min_value=1, max_value=40))
def test_pieces_cut_by_the_scan_draw_like_the_whole(lines: list[str], min_chars: int) -> None:
    text = "\n".join(lines) + "\nend"
    bounds = [0, *(head_cuts(text, len(text), min_chars) or []), len(text)]
    pieces: list[str] = []
    for start, end in pairwise(bounds):  # pieces are a blank line apart
        pieces += drawn(text[start:end]) + ([""] if end < len(text) else [])
    assert pieces == drawn(text)


def answer(chars: int) -> str:
    """A model's long answer: sections of prose, lists and code (the stream bench's kind)."""
    blocks = [
        "## Section {n}\n\n",
        "A paragraph about item {n}, with *emphasis*, `code` and a [link](http://e.st/{n}).\n\n",
        "- first point {n}\n- second point {n}\n\n",
        "```python\ndef f{n}(a, b):\n\n    return a + b  # {n}\n```\n\n",
        "1. step one {n}\n2. step two {n}\n\n",
    ]
    out, n = "", 0
    while len(out) < chars:
        out += blocks[n % len(blocks)].format(n=n)
        n += 1
    return out


def test_a_plan_parses_no_more_than_its_tail_and_the_block_it_starts_in() -> None:
    """The head's last cut is the last before the tail: a tail far longer is parsed for nothing."""
    text = answer(50_000)
    cuts = head_cuts(text, len(text) - TAIL_CHARS, 8_000, last=True)
    assert cuts
    assert len(text) - TAIL_CHARS - cuts[-1] < 200  # the blocks here are ~100 characters
    planned = plan(AnswerPiece("", last=True), text, 1_500, 0, growing=True, tail_first=True)
    kinds = [type(piece.renderable).__name__ for piece in planned.pieces]
    head = kinds.index("Markdown")  # the head's pieces are parsed when drawn
    assert set(kinds[:head]) == {"LazyMarkdown"}
    assert len(text) - planned.bounds[head] < TAIL_CHARS + 200


def test_an_answer_is_cut_where_its_paragraphs_headings_and_code_start() -> None:
    text = answer(50_000)
    cuts = head_cuts(text, len(text), 8_000)
    assert cuts and len(cuts) >= 5
    assert all(text[cut:].startswith(("## Section", "A paragraph", "```python")) for cut in cuts)
    # What may span an empty line, or be seen from another piece, is parsed whole instead.
    assert head_cuts("<!--\n\n" + text, len(text), 8_000) is None
    assert head_cuts(text + "[link]: http://e.st\n", len(text), 8_000) is None
    assert head_cuts(text.replace("\n", "\r\n"), len(text), 8_000) is None
    # A table's first row may start with a letter; Rich draws a blank line above a table.
    table = "Words.\n\n" * 5 + "name | size\n--|--\nkoroku | 1\n\nAfter.\n"
    assert Parsed(table).cuts(1)[-1] == table.index("After.")
    assert head_cuts(table, len(table), 1) == [8, 16, 24, 32, table.index("After.")]


def test_code_with_brackets_and_tags_is_still_cut_around() -> None:
    """``]:`` in Python and ``<`` in JSX are common in code: only outside code do they matter."""
    code = "```python\ndef f(a: dict[str, int]) -> list[int]:\n    return [*a]\n```\n\n"
    jsx = "```jsx\n<div>\n\n  <p>hi</p>\n</div>\n```\n\n"
    text = ("Some words.\n\n" + code + jsx) * 100
    cuts = head_cuts(text, len(text), 1_000)
    assert cuts and len(cuts) >= 10
    assert set(cuts) <= set(Parsed(text).cuts(1))


def test_a_fence_opened_indented_and_ended_less_indented_is_left_to_a_parse() -> None:
    """In a list item, ``  ```` is the item's; a line less indented ends it (and the fence)."""
    filler = "Words.\n\n" * 20
    text = filler + "- item\n\n  ```\n  code\n\nNot code.\n\n```\ncode\n\nStill code\n```\n"
    assert head_cuts(text, len(text), 10) is None
    closed = filler + "- item\n\n  ```\n  code\n\n  more\n  ```\n\nAfter.\n"
    cuts = head_cuts(closed, len(closed), 10)
    assert cuts and closed[cuts[-1] :] == "After.\n"


def test_a_streamed_step_parses_only_its_tail() -> None:
    """The head's pieces are parsed when drawn: the step's end shows sooner (a burst's 100 KB)."""
    text = answer(100_000)
    assert len(text) > DRAWN_APART_CHARS
    step = plan(AnswerPiece("", last=True), text, 1_500, 0, growing=True, tail_first=True)
    drawings = [cast("RichMarkdown", piece.renderable) for piece in step.pieces]
    head = [drawing for drawing in drawings if "parsed" not in vars(drawing)]
    assert len(head) >= 5
    assert len(text) - sum(len(drawing.markup) for drawing in head) >= TAIL_CHARS
    whole = plan(AnswerPiece("", last=True), text, 1_500, 0, growing=True)
    assert all("parsed" in vars(piece.renderable) for piece in whole.pieces)
    # Drawn, a lazy piece is what a parsed one draws.
    assert drawn(head[0].markup, lazy=True) == drawn(head[0].markup)


def test_a_line_the_end_falls_in_is_not_read() -> None:
    """Its start alone may read otherwise: "a" of "a | b" starts a paragraph, the line a table."""
    table = "Words.\n\n" + "a | b\n--|--\nc | d\n\nAfter.\n"
    assert head_cuts(table, table.index("a |") + 1, 1) == []
    assert head_cuts(table, table.index(" | b"), 1) == []


def test_the_head_stays_unparsed_after_a_long_code_block_grew_in_the_live_piece() -> None:
    """A code block drawn in stretches while it grew: the head's pieces still wait to be drawn."""
    live = AnswerPiece("", last=True)
    code = "```python\n" + "x = 1  # a line of code\n" * 800 + "```\n\n"
    console = Console(width=80, file=io.StringIO(), color_system=None)
    console.print(live.drawing(markdown(code), growing=True).renderable)  # drawn in stretches
    assert live.stretches is not None
    text = code + answer(100_000)
    step = plan(live, text, 1_500, 0, growing=True, tail_first=True)
    drawings = [cast("RichMarkdown", piece.renderable) for piece in step.pieces]
    assert sum("parsed" not in vars(drawing) for drawing in drawings) >= 5


def test_an_answers_markdown_draws_as_richs_own_and_each_is_its_own() -> None:
    """``markdown`` and ``lazy_markdown`` copy one made Markdown (Rich's constructor makes a
    parser each time): each copy draws its own text exactly as Rich's Markdown of it does."""
    texts = [answer(3_000), "| a | b |\n|---|---|\n| 1 | 2 |\n\n~~gone~~ *x*", "# T\n\n> q"]
    made = [markdown(text) for text in texts]
    lazy = [lazy_markdown(text) for text in texts]
    console = Console(width=40, file=io.StringIO(), color_system="truecolor")
    for text, ours, deferred in zip(texts, made, lazy, strict=True):
        richs = console.render_lines(RichMarkdown(text, **SHOWN_AS), console.options)
        assert console.render_lines(ours, console.options) == richs
        assert console.render_lines(deferred, console.options) == richs
    assert made[0].parsed is not made[1].parsed


def test_the_shared_parser_is_ready_for_threads_once_made() -> None:
    """``markdown`` parses with ``parser()``, shared by threads (a plan's, pieces drawn apart):
    markdown-it gathers a parser's rules at its first parse, and a parse meanwhile in another
    thread ran with some of them (wrong tokens, or "none of the block rules matched")."""
    text = "# H\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n~~s~~ *e* `c` [l](x)\n\n- a\n- b\n"
    want = [token.type for token in Parsed(text).tokens]
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns often: the race shows in a few tries
    wrong: list[object] = []

    def parse() -> None:
        try:
            got: object = [token.type for token in markdown(text).parsed]
        except Exception as error:  # any error is the race's
            got = error
        if got != want:
            wrong.append(got)

    try:
        for _ in range(300):
            parser.cache_clear()
            parser()  # made here, as the agent's loading thread makes it (warm_up)
            threads = [threading.Thread(target=parse) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        sys.setswitchinterval(switching)
        parser.cache_clear()
    assert not wrong
