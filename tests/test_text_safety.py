"""``koroku_tui.text.safety``: hidden characters become visible escapes, never vanish.

The ranges come from ``tests/hostile/hidden_text.py``; every code point in
them is checked, not a sample.
"""

from __future__ import annotations

import sys
from unicodedata import category

import pytest
from hostile.hidden_text import HIDDEN_RANGES, SHOWN_AS_THEMSELVES
from hostile.nesting import TOO_DEEP, nested_args
from hostile.terminal import (
    FORBIDDEN_IN_OUTPUT,
    TERMINAL_ATTACKS,
    UNENCODABLE,
    UNTERMINATED_STRINGS,
)
from hypothesis import given
from hypothesis import strategies as st

from koroku_tui.agent.wire.call_depth import nesting_depth
from koroku_tui.text.safety import (
    BIDI_CONTROLS,
    STRING_SEQUENCE_LIMIT,
    StreamCleaner,
    escape_controls,
    escape_hidden,
    escape_hidden_within,
    for_terminal,
    hidden_characters,
    sanitize,
    without_lone_surrogates,
)
from koroku_tui.ui.safe_text import ESCAPE_STYLE, visible

HIDDEN = [chr(code) for first, last in HIDDEN_RANGES for code in range(first, last + 1)]


def escape_of(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def test_the_hidden_set_is_the_whole_of_the_ranges() -> None:
    assert len(HIDDEN) == len(set(HIDDEN)) == 2_557  # surrogates, C0, C1, bidi, tags, spaces...
    assert {"\x9d", "\x1b", "\u202e", "\u2066", "\u200b", "\ufeff", "\u2028"} <= set(HIDDEN)
    assert {"\u00a0", "\u3000", "\ufe0f", "\U000e01ef", "\u034f", "\u180b"} <= set(HIDDEN)


def test_every_hidden_character_shows_as_its_escape() -> None:
    for char in HIDDEN:
        assert escape_hidden(f"a{char}b") == f"a{escape_of(char)}b", f"U+{ord(char):04X}"
        assert hidden_characters(f"a{char}b") == [f"U+{ord(char):04X}"]


def test_all_hidden_characters_in_one_text_keep_their_order() -> None:
    text = "|".join(HIDDEN)
    assert escape_hidden(text) == "|".join(map(escape_of, HIDDEN))


def test_the_rich_rendering_highlights_every_escape() -> None:
    shown = visible("run " + "".join(HIDDEN) + " end")
    assert shown.plain == "run " + "".join(map(escape_of, HIDDEN)) + " end"
    highlighted = [shown.plain[span.start : span.end] for span in shown.spans]
    assert "".join(highlighted) == "".join(map(escape_of, HIDDEN))
    assert {str(span.style) for span in shown.spans} == {ESCAPE_STYLE}


@pytest.mark.parametrize("text", SHOWN_AS_THEMSELVES)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert escape_hidden(text) == text
    assert hidden_characters(text) == []
    assert visible(text).spans == []


def test_no_code_point_survives_unprintable() -> None:
    """A sweep over all of Unicode: only what a terminal draws comes out as itself.

    That is printable characters, newline, tab, the plain space and
    private-use characters (Co: drawn as a glyph or a box). Every other
    space (Zs) is escaped: /bin/sh does not split words on it.
    """
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        shown = escape_hidden(char)
        if shown != char:
            assert shown == escape_of(char)
            continue
        assert char.isprintable() or char in "\n\t" or category(char) == "Co", char
        assert category(char) != "Zs" or char == " ", f"U+{code:04X}"


@given(st.text())
def test_nothing_is_dropped(text: str) -> None:
    # Undoing the escapes gives the text back: no character was lost.
    text = text.replace("\\", "/")  # so that every backslash shown starts an escape
    shown = escape_hidden(text)
    assert shown.encode("latin-1", "backslashreplace").decode("unicode_escape") == text


STREAMED = st.lists(st.text(alphabet=st.sampled_from("a \n\r\x1b[]\\31m;\x07\x9b\x9d\x9cP_\u202e")))


@given(STREAMED)
def test_a_stream_is_cleaned_as_its_whole_text_is(pieces: list[str]) -> None:
    """However the stream cuts "\\r\\n" or an escape sequence, its pieces clean as the whole."""
    cleaner = StreamCleaner()
    shown = "".join(cleaner.feed(piece) for piece in pieces) + cleaner.flush()
    assert shown == for_terminal("".join(pieces))


@pytest.mark.parametrize(("name", "attack"), TERMINAL_ATTACKS + UNENCODABLE)
def test_terminal_text_has_no_control_left(name: str, attack: str) -> None:
    cleaned = for_terminal(f"before {attack}\nafter")
    assert not set(cleaned) & set(FORBIDDEN_IN_OUTPUT), name
    assert cleaned.startswith("before ") and cleaned.endswith("\nafter")
    cleaned.encode("utf-8")  # a lone surrogate would raise here


@pytest.mark.parametrize(("shape", "depth"), [*TOO_DEEP, ("object", 5_000), ("array", 5_000)])
def test_lone_surrogates_are_replaced_at_any_depth(shape: str, depth: int) -> None:
    """The model decides the nesting: no depth may exhaust the stack (600 levels did)."""
    clean = nested_args(shape, depth)
    assert without_lone_surrogates(clean) is clean  # nothing to replace: the very object

    dirty = nested_args(shape, depth)
    dirty["key\ud800"] = ["tail\udcff"]
    replaced = without_lone_surrogates(dirty)
    assert replaced["key\ufffd"] == ["tail\ufffd"]
    assert "key\ud800" in dirty  # the original is left as it was
    assert nesting_depth(replaced) == depth


@pytest.mark.parametrize(
    ("name", "text", "kept"),
    UNTERMINATED_STRINGS,
    ids=[name for name, _, _ in UNTERMINATED_STRINGS],
)
def test_an_unterminated_string_sequence_hides_nothing_after_it(
    name: str, text: str, kept: str
) -> None:
    """Only the introducer goes: the sentence after it stays for the user to read."""
    for cleaned in (sanitize(text), for_terminal(text)):
        assert kept in cleaned, name
        assert not set(cleaned) & set(FORBIDDEN_IN_OUTPUT), name
        assert sanitize(cleaned) == cleaned


def test_a_terminated_string_sequence_goes_whole_up_to_the_limit() -> None:
    body = "0;" + "t" * (STRING_SEQUENCE_LIMIT - 2)
    assert sanitize(f"a\x9d{body}\x9cb") == "ab"
    assert sanitize(f"a\x1b]{body}\x07b") == "ab"
    # One character more and it is no sequence: its text shows.
    assert sanitize(f"a\x9d{body}t\x9cb") == f"a{body}tb"


def test_many_introducers_are_cleaned_in_linear_time() -> None:
    # Each introducer looks ahead at most to the next control character.
    text = ("\x9d" + "a" * 3_000) * 200 + "\x90" * 200_000
    assert sanitize(text) == "a" * 600_000


def test_the_start_of_an_escaped_text_cuts_between_escapes() -> None:
    assert escape_hidden_within("ab\u200bcd", 3) == ("ab", 2)
    assert escape_hidden_within("ab\u200bcd", 8) == ("ab\\u200b", 3)
    assert escape_hidden_within("ab\u200bcd", 100) == ("ab\\u200bcd", 5)
    assert escape_hidden_within("\u200b" * 10, 13) == ("\\u200b\\u200b", 2)


def pasted_control(char: str) -> bool:
    return char in BIDI_CONTROLS or (
        char not in "\n\t" and category(char) in ("Cc", "Cs", "Zl", "Zp")
    )


@given(st.text())
def test_a_paste_keeps_no_control_and_loses_no_character(text: str) -> None:
    """The prompt's form of a paste: controls as escapes, line breaks as ``\\n``, the rest kept."""
    escaped = escape_controls(text)
    assert not any(pasted_control(c) for c in escaped)
    kept = text.replace("\r\n", "\n").replace("\r", "\n")
    assert escaped == "".join(escape_of(c) if pasted_control(c) else c for c in kept)
