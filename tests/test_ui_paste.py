"""A bracketed paste arrives whole and in order, its control characters shown as escapes.

Textual's own parser ends a paste at the first ESC in it (coloured output
copied from tmux) and reads the rest as keys: a BEL opened the rewind list,
a CR sent half the paste. ``PasteParser`` reads up to the paste's end
marker; the prompt shows ESC, BEL, BS and bidi controls as ``\\u001b``-style
escapes. The terminal itself is driven in ``test_e2e_tmux.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, settle, type_raw
from hypothesis import given
from hypothesis import strategies as st
from test_ui_burst import CTRL_R, DOWN, UP, after_typing
from textual import events
from textual.message import Message

from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.text.safety import escape_controls
from koroku_tui.ui.main.blocks import UserBlock
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.terminal_input import PasteParser

START, END = "\x1b[200~", "\x1b[201~"

COLOURED = (
    "$ make test\r\x1b[1;32mPASSED\x1b[0m tests/test_a.py\r"
    "\x1b[31mFAILED\x1b[0m tests/test_b.py \x07\x08 \u202etxt.exe\r\x1b]0;title\x07end"
)
"""Coloured terminal output as tmux pastes it (lines end in CR), with a BEL,
a BS, a bidi override and an OSC title sequence."""


def parsed(*chunks: str) -> list[Message]:
    """What the parser makes of ``chunks`` read one after the other, then the end of input."""
    parser = PasteParser()
    tokens: list[Message] = []
    for chunk in chunks:
        tokens += parser.feed(chunk)
    tokens += parser.feed("")
    return tokens


def described(tokens: list[Message]) -> list[tuple[str, str | None]]:
    shown: list[tuple[str, str | None]] = []
    for token in tokens:
        if isinstance(token, events.Paste):
            shown.append(("paste", token.text))
        elif isinstance(token, events.Key):
            shown.append(("key", token.key))
    return shown


def test_a_paste_holding_escapes_arrives_whole_between_the_keys_around_it() -> None:
    tokens = parsed("a" + START + COLOURED + END + "b")
    assert described(tokens) == [("key", "a"), ("paste", COLOURED), ("key", "b")]


def test_a_paste_read_a_character_at_a_time_is_the_same_paste() -> None:
    data = "x" + START + COLOURED + END + "\x1b[A"  # an arrow key after it
    assert described(parsed(*data)) == [("key", "x"), ("paste", COLOURED), ("key", "up")]


def test_two_pastes_and_an_escape_key_between_them_stay_apart() -> None:
    data = START + "one\x1b[0m" + END + START + "\x1b" + END + "\x1b"
    assert described(parsed(data)) == [
        ("paste", "one\x1b[0m"),
        ("paste", "\x1b"),
        ("key", "escape"),
    ]


def test_a_paste_cut_by_the_end_of_input_keeps_what_came() -> None:
    assert described(parsed(START + "half \x1b[3")) == [("paste", "half \x1b[3")]


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_any_text_pasted_arrives_as_it_was_without_nuls(text: str) -> None:
    if END in text:
        text = text.replace(END, "")
    pasted = [t for t in parsed(START + text + END) if isinstance(t, events.Paste)]
    assert [p.text for p in pasted] == [text.replace("\x00", "")]


def test_mouse_and_keys_outside_a_paste_are_textuals() -> None:
    """Outside a paste, nothing changes: keys, escape sequences and the mouse parse as before."""
    tokens = parsed("\x1b[<0;10;5M", "\x1b[1;5F", "\x07", "q")
    assert isinstance(tokens[0], events.MouseDown)
    assert described(tokens[1:]) == [("key", "ctrl+end"), ("key", "ctrl+g"), ("key", "q")]


async def test_a_coloured_paste_lands_in_the_prompt_and_nothing_else_happens(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """The paste's BEL is no ctrl+g (rewind list), its CRs no Enter (send)."""
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        main = app.screen
        await type_raw(pilot, app, "see: " + START + COLOURED + END)
        prompt = app.query_one(Prompt)
        assert app.screen is main  # no rewind list, no other screen
        assert prompt.text == "see: " + escape_controls(COLOURED)
        assert "\\u001b[1;32mPASSED\\u001b[0m" in prompt.text
        assert "\\u0007\\u0008 \\u202etxt.exe" in prompt.text
        assert prompt.text.count("\n") == 3
        assert not app.query(UserBlock)  # nothing was sent
        assert fake.generate_requests == []


@pytest.mark.parametrize(
    ("pasted", "shown"),
    [
        ("bell\x07", "bell\\u0007"),
        ("back\x08space", "back\\u0008space"),
        ("\u202eexe.txt", "\\u202eexe.txt"),
        ("tab\tand\r\nline", "tab\tand\nline"),
        ("joined 👩\u200d💻 and\u00a0space", "joined 👩\u200d💻 and\u00a0space"),
    ],
)
async def test_control_characters_of_a_paste_show_as_escapes_in_the_prompt(
    client: genai.Client, tmp_path: Path, pasted: str, shown: str
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        await type_raw(pilot, app, START + pasted + END)
        assert app.query_one(Prompt).text == shown


@pytest.mark.parametrize(
    ("keys", "searched"),
    [
        pytest.param(f"{CTRL_R}{START}deploy script{END}", "deploy script", id="just opened"),
        pytest.param(f"{CTRL_R}{DOWN}{UP}{START}dy{END}x", "dyx", id="after a move"),
    ],
)
async def test_a_paste_on_the_history_list_is_searched_for(
    client: genai.Client, tmp_path: Path, keys: str, searched: str
) -> None:
    """ctrl+r then a pasted phrase: it went nowhere (letters typed there are searched for).
    After a move in the list, a paste holding a row action's letter acts on no row."""
    shown = await after_typing(tmp_path, client, keys, burst=True)
    assert shown == ("HistoryScreen", "history-search", searched, "", ["question 0"])
