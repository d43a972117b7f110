"""Long answers: streamed through a live Markdown, kept as pieces, shown whole after a restart."""

from __future__ import annotations

import io
from itertools import pairwise
from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, count_restyles, plain, send, settle, texts
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from rich.console import Console
from rich.markdown import Markdown as RichMarkdown
from rich.segment import Segment
from textual.widgets import Markdown

from koroku_tui.fake_gemini import FakeGemini, Reply, Text, text_reply
from koroku_tui.ui.main.answer import PIECE_CHARS, AnswerBlock, AnswerPiece, split_point
from koroku_tui.ui.main.answer_cuts import Parsed


def fence_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.lstrip().startswith(("```", "~~~")))


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def long_answer(sections: int) -> str:
    """Headings, lists, and fences with blank lines inside (where a cut would break them)."""
    parts = []
    for n in range(sections):
        parts.append(
            f"## Part {n}\n\nPart {n} reads `config_{n}.toml` and **fails** when empty.\n\n"
            f"- check input {n}\n- add guard {n}\n\n"
            f"```python\ndef load_{n}():\n\n    return None  # after a blank line\n```\n\n"
        )
    return "".join(parts) + "Last line of the answer."


def test_split_point_waits_for_enough_text_and_a_blank_line() -> None:
    assert split_point("short\n\nmore", min_chars=100) is None
    text = "a" * 50 + "\n\n" + "b" * 50 + "\n\n" + "c" * 10
    assert split_point(text, min_chars=40) == 104  # after the LAST blank line
    assert text[:104].endswith("\n\n")
    assert split_point("x" * 500, min_chars=40) is None  # no blank line at all
    assert split_point("a\rb\rc\n\n" + "d" * 60 + "\n\ne", min_chars=5) is None  # lone \r


def test_split_point_never_cuts_inside_a_fence() -> None:
    text = "intro\n\n```\ncode\n\nmore code\n```\n" + "tail " * 30
    cut = split_point(text, min_chars=5)
    assert cut == len("intro\n\n")  # the blank line inside the fence is not a cut
    tilde = "intro\n\n~~~\ncode\n\nmore\n~~~\n\nafter\n" + "z" * 40
    cut = split_point(tilde, min_chars=5)
    assert cut is not None and fence_lines(tilde[:cut]) % 2 == 0


def blocks(text: str) -> list[tuple[str, str, str, str]]:
    """What markdown-it makes of ``text``, without line numbers."""
    return [(t.type, t.tag, t.info, t.content) for t in MarkdownIt("gfm-like").parse(text)]


MARKDOWN_LINES = st.lists(
    st.sampled_from(
        [
            "para text",
            "- item",
            "1. step",
            "```",
            "```py",
            "~~~",
            "",
            "",
            "# head",
            "    indented",
            "| a | b |",
            "|---|---|",
            "> quote",
            "===",
            "---",
            "lazy",
            "<div>x</div>",
            "##",
            "\u3000",
            "\x0b",
        ]
    ),
    max_size=40,
)
"""Documents line by line, from what starts and continues blocks (and ends them)."""


@settings(max_examples=300)
@given(MARKDOWN_LINES, st.integers(min_value=0, max_value=120))
def test_split_point_pieces_parse_like_the_whole(lines: list[str], min_chars: int) -> None:
    text = "\n".join(lines) + "\nend"
    cut = split_point(text, min_chars=min_chars)
    if cut is None:
        return
    assert min_chars <= cut < len(text)
    assert blocks(text[:cut]) + blocks(text[cut:]) == blocks(text)


def drawn(text: str) -> list[str]:
    """The lines Rich's Markdown draws ``text`` in (40 columns), as a piece's height counts them."""
    console = Console(width=40, file=io.StringIO(), color_system=None)
    segments = console.render(RichMarkdown(text), console.options)
    return ["".join(s.text for s in line).rstrip() for line in Segment.split_lines(segments)]


@settings(max_examples=300)
@given(MARKDOWN_LINES, st.integers(min_value=0, max_value=60))
def test_pieces_a_blank_line_apart_draw_like_the_whole(lines: list[str], min_chars: int) -> None:
    """A list, quote or table opening a piece, or a rule closing one, is drawn with a blank line.

    Cut there, a streamed answer showed a blank line more than after a restart.
    """
    text = "\n".join(lines) + "\nend"
    parsed = Parsed(text)
    bounds = [0, *parsed.cuts(min_chars), len(text)]
    pieces: list[str] = []
    for start, end in pairwise(bounds):  # each but the last has a blank line under it
        pieces += drawn(text[start:end]) + ([""] if end < len(text) else [])
    assert pieces == drawn(text)


def test_no_cut_next_to_a_block_that_shows_no_text() -> None:
    """An empty heading or a paragraph of blank characters draws a blank line at a piece's edge."""
    for empty in ("##", "# ", "\u3000", "\x0b"):
        text = f"Words.\n\n{empty}\n\nAfter.\n"
        assert Parsed(text).cuts(1) == [], repr(empty)
    assert Parsed("Words.\n\n##\n\nAfter.\n\nMore.\n").cuts(1) == [20]


def test_split_point_keeps_indented_list_content_and_reference_links_whole() -> None:
    steps = "1. First step\n\n    Then check the log.\n\n    ```bash\n    ls\n    ```\n\n"
    assert split_point(steps * 20, min_chars=100) is None  # one long list: never cut inside
    text = ("Intro.\n\n" + steps) * 10
    cut = split_point(text, min_chars=100)
    assert cut is not None and text[cut:].startswith(("Intro.", "1. First step"))
    assert blocks(text[:cut]) + blocks(text[cut:]) == blocks(text)
    assert split_point("see [docs][d]\n\n" + "x " * 100 + "\n\n[d]: http://a\n", 10) is None


async def test_a_long_streamed_answer_ends_as_pieces_with_every_line(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    answer = long_answer(60)  # ~9,000 characters, several pieces
    assert len(answer) > 4 * PIECE_CHARS
    fake.add(text_reply(answer, pieces=600))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "explain")
        largest = 0
        while app.running:  # sample the widget count while the answer streams
            await pilot.pause(0.01)
            for block in app.query(AnswerBlock):
                largest = max(largest, len(block.query("*")))
        await settle(pilot, app)
        block = app.query(AnswerBlock).last()
        pieces = list(block.query_children(AnswerPiece))
        assert len(pieces) >= 3 and not block.query(Markdown)  # finished: pieces only
        assert "".join(p.source for p in pieces) == answer == block.text
        assert all(fence_lines(p.source) % 2 == 0 for p in pieces)  # no fence cut in two
        shown = plain(block)
        assert "Part 0" in shown and "Part 59" in shown and "Last line of the answer." in shown
        assert "```" not in shown and "**fails**" not in shown  # rendered, not raw
        for above, below in pairwise(pieces):
            assert below.region.y == above.region.bottom + 1  # a blank line between pieces

        # The same answer as one live Markdown would be far more widgets.
        whole = Markdown(answer)
        await app.query_one("#transcript").mount(whole)
        await pilot.pause()
        assert largest < len(whole.query("*")) / 4

    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        # A restart shows the same answer (as one piece: compare the lines).
        assert lines(texts(again, AnswerBlock)[-1]) == lines(shown)


async def test_a_line_end_or_escape_split_between_chunks_shows_as_after_a_restart(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """A \\r\\n or a colour code cut by the stream is cleaned whole, not one half at a time.

    Cleaned chunk by chunk, "\\r" | "\\n" became two line ends (a paragraph
    that a restart did not show) and "ESC[3" | "1m" left "1m" in the text.
    """
    chunks = ("Line one\r", "\nline two \x1b[3", "1mred\x1b[0m.")
    # Apart enough that each chunk reaches the screen in a batch of its own.
    fake.add(Reply(tuple((Text(chunk),) for chunk in chunks), chunk_delay=0.2))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "colours")
        await settle(pilot, app)
        live = texts(app, AnswerBlock)[-1]
    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert lines(live) == lines(texts(again, AnswerBlock)[-1]) == ["Line one line two red."]


async def test_a_piece_frozen_restyles_no_other_piece(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each piece is styled about once, not again at every later cut.

    A ``:last-child`` rule restyled every piece of the answer at each cut: a
    5 MB answer (3,000 pieces) took minutes to draw, its keys waiting.
    """
    styled = count_restyles(monkeypatch, AnswerPiece)
    fake.add(text_reply(long_answer(300), pieces=3000))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "explain")
        await settle(pilot, app)
        pieces = app.query(AnswerPiece)
        # Pieces of 1,500 characters or more (about 30 here), mounted a few
        # draws' worth at a time: enough that restyling every piece at each
        # cut (about n*n/2) would break the bound below.
        assert len(pieces) >= 10
        assert len(styled) <= 2 * len(pieces)
