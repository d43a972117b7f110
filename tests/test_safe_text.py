"""``sanitize`` and ``literal``: untrusted text shows as written and cannot drive the terminal."""

from __future__ import annotations

import io

import pytest
from hostile.terminal import BIDI_IN_ANSWERS
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text
from textual.content import Content

from koroku_tui.ui.safe_text import literal, sanitize

CONTROL = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]} - {"\n", "\t"}


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("a\x1b]0;title\x07b", "ab"),  # OSC set-title, BEL-terminated
        ("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b", "alinkb"),  # OSC 8 hyperlink, ST
        ("a\x1b[2Jb", "ab"),  # CSI clear screen
        ("\x1b[1;31mred\x1b[0m", "red"),  # SGR colours
        ("a\x9b2Jb", "ab"),  # 8-bit CSI
        ("a\x9d0;t\x9cb", "ab"),  # 8-bit OSC and ST
        ("a\x1bPq#0;2;0;0;0\x1b\\b", "ab"),  # DCS (sixel)
        ("a\x1bcb", "ab"),  # RIS, full reset
        ("a\x1b(Bb", "ab"),  # charset selection
        ("a\x1b]0;unterminated\nnext", "a0;unterminated\nnext"),  # unterminated: only ESC ] goes
        ("a\x9d hidden?\nnext", "a hidden?\nnext"),  # 8-bit OSC, unterminated: only U+009D goes
        ("bell\x07 nul\x00 del\x7f", "bell nul del"),
        ("one\r\ntwo\rthree", "one\ntwo\nthree"),
        ("tab\tnewline\n", "tab\tnewline\n"),
        (
            "[bold red]x[/] [link=file:///etc/passwd]y[/link]",
            "[bold red]x[/] [link=file:///etc/passwd]y[/link]",
        ),
        ("emoji 🙂 and ümlauts, RTL עברית", "emoji 🙂 and ümlauts, RTL עברית"),
    ],
)
def test_sanitize_examples(raw: str, clean: str) -> None:
    assert sanitize(raw) == clean


@given(st.text())
def test_sanitize_leaves_no_control_characters_but_newline_and_tab(text: str) -> None:
    assert not CONTROL & set(sanitize(text))


ESCAPE_PIECES = ["\x1b", "\x9b", "\x9c", "\x07", "[", "]", "0", ";", "\\", "a", "\r", "\n"]


@given(st.text(alphabet=st.sampled_from(ESCAPE_PIECES)))
def test_sanitize_is_stable(text: str) -> None:
    once = sanitize(text)
    assert sanitize(once) == once


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cs"))))
def test_sanitize_keeps_text_without_controls_unchanged(text: str) -> None:
    assert sanitize(text) == text


TOKENS = [*"[]/=@:.-_ abcxy", "bold", "red", "link", "file:///etc/passwd", ":smile:", "\\"]
MARKUPISH = st.lists(st.sampled_from(TOKENS)).map("".join)


@given(MARKUPISH)
def test_literal_is_never_parsed_as_markup(text: str) -> None:
    shown = literal(text)
    assert shown.plain == text and not shown.spans
    # Rich prints it verbatim...
    out = io.StringIO()
    Console(file=out, width=10_000, color_system=None).print(shown, end="")
    assert out.getvalue() == text
    # ...and so does Textual, which is what the widgets use.
    assert Content.from_rich_text(shown).plain == text


def test_literal_shows_hostile_markup_and_strips_sequences() -> None:
    shown = literal(
        "[bold red]x[/] [link=file:///etc/passwd]y[/link]\x1b]0;title\x07\x1b[2J", "dim"
    )
    assert shown.plain == "[bold red]x[/] [link=file:///etc/passwd]y[/link]"
    assert str(shown.style) == "dim" and not shown.spans
    assert isinstance(shown, Text)


@pytest.mark.parametrize(
    ("name", "text", "shown"), BIDI_IN_ANSWERS, ids=[name for name, _, _ in BIDI_IN_ANSWERS]
)
def test_read_only_text_shows_bidi_controls_as_escapes(name: str, text: str, shown: str) -> None:
    """As on ``--print``: a bidi control would make the line read differently from what it says."""
    assert sanitize(text) == shown, name
    assert literal(text).plain == shown, name
