"""``unsent.txt`` reaches nothing outside the home: links, FIFOs, huge files, bad bytes.

A link planted at start once put an outside file into the prompt; one planted
before quitting received the queued text; a FIFO blanked the screen and
ignored ctrl+q; 100 MB took 32 s and 769 MB; bytes that are not UTF-8 were
dropped silently. Each is now one sentence on screen (and in the log), and a
normal start.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, send, settle, wait_until
from test_ui_queue import mid_turn, notices

from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.unsent import UNSENT_FILENAME, UNSENT_LIMIT, Unsent, keep

SECRET = "root:x:0:0:not for the prompt"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside.txt"
    path.write_text(SECRET + "\n")
    path.chmod(0o644)
    return path


def untouched(outside: Path) -> bool:
    """The outside file holds what it held, with the mode it had."""
    return outside.read_text() == SECRET + "\n" and stat.S_IMODE(outside.stat().st_mode) == 0o644


def set_aside(home: Path) -> list[Path]:
    """The too large ``unsent.txt`` files a start renamed, for the user to read."""
    return sorted(home.glob("unsent-too-large-*.txt"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    return path


@pytest.mark.parametrize(
    ("what", "told"),
    [
        ("link", "unsent.txt in the Koroku home is a link, and Koroku follows no link in its home"),
        ("hard link", "unsent.txt in the Koroku home has other names (a hard link)"),
        ("fifo", "unsent.txt in the Koroku home is a named pipe (FIFO), not a regular file"),
        ("folder", "unsent.txt in the Koroku home is a folder, not a regular file"),
        ("too large", "Koroku puts back in the prompt: it was moved to unsent-too-large-"),
    ],
)
async def test_an_unsent_file_that_is_not_a_small_regular_file_is_one_notice(
    client: genai.Client,
    home: Path,
    outside: Path,
    caplog: pytest.LogCaptureFixture,
    what: str,
    told: str,
) -> None:
    path = home / UNSENT_FILENAME
    if what == "link":
        path.symlink_to(outside)
    elif what == "hard link":
        os.link(outside, path)  # another name of the outside file, not a symbolic link
    elif what == "fifo":
        os.mkfifo(path)  # reading it would wait for a writer for ever
    elif what == "folder":
        path.mkdir()
    else:
        with path.open("wb") as file:
            file.truncate(100_000_000)  # sparse: 100 MB that take no disk
    app = build(home, client)
    with caplog.at_level(logging.WARNING):
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await settle(pilot, app)
            assert app.query_one(Prompt).text == ""
            [notice] = [n for n in notices(app) if UNSENT_FILENAME in n]
            assert told in notice
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert app.return_code == 0
    assert any(told in r.getMessage() for r in caplog.records)
    # Left for the user to look at (a large one renamed); nothing outside was touched.
    assert path.is_symlink() or path.exists() or set_aside(home)
    assert untouched(outside)


@pytest.mark.parametrize(
    ("plant", "told"),
    [
        (Path.symlink_to, "unsent.txt in the Koroku home is a link"),
        (Path.hardlink_to, "unsent.txt in the Koroku home has other names (a hard link)"),
    ],
    ids=["link", "hard link"],
)
async def test_a_link_planted_before_quitting_never_receives_the_queue(
    fake: FakeGemini,
    client: genai.Client,
    home: Path,
    outside: Path,
    caplog: pytest.LogCaptureFixture,
    plant: Callable[[Path, Path], None],
    told: str,
) -> None:
    app = build(home, client)
    with caplog.at_level(logging.WARNING):
        async with app.run_test(size=(120, 40)) as pilot:
            await mid_turn(pilot, app, fake)
            await send(pilot, app, "QUEUED-PRIVATE")
            plant(home / UNSENT_FILENAME, outside)  # planted while the app runs
            await pilot.press("ctrl+q")
            await pilot.pause()
    assert untouched(outside)
    # The refusal and the queued text are in the log: the text is not lost.
    said = [r.getMessage() for r in caplog.records]
    assert any(told in m for m in said)
    assert any("could not keep the queued messages" in m and "QUEUED-PRIVATE" in m for m in said)


async def test_a_queue_kept_at_quit_is_a_0600_file(
    fake: FakeGemini, client: genai.Client, home: Path
) -> None:
    previous = os.umask(0o022)
    try:
        app = build(home, client)
        async with app.run_test(size=(120, 40)) as pilot:
            await mid_turn(pilot, app, fake)
            await send(pilot, app, "do not lose me")
            await pilot.press("ctrl+q")
            await pilot.pause()
    finally:
        os.umask(previous)
    assert stat.S_IMODE((home / UNSENT_FILENAME).stat().st_mode) == 0o600


async def test_bytes_that_are_not_utf8_are_shown_and_said(client: genai.Client, home: Path) -> None:
    (home / UNSENT_FILENAME).write_bytes(b"an older caf\xe9 draft")  # Latin-1, bare text
    app = build(home, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        await wait_until(pilot, lambda: bool(app.query_one(Prompt).text), "the draft restored")
        assert app.query_one(Prompt).text == "an older caf\ufffd draft"
        said = notices(app)
        assert "unsent.txt held bytes that are not UTF-8; they show as \ufffd." in said
        assert any("Restored 1 queued message" in n for n in said)
        assert not (home / UNSENT_FILENAME).exists()  # taken at start


async def test_a_draft_too_large_to_restore_does_not_bury_the_drafts_after_it(
    client: genai.Client, home: Path
) -> None:
    """A long non-ASCII paste (6 bytes a letter once kept) left closing; then a small draft.

    The large file was left in place and each later close appended to it: no
    start took it again, so every draft after it stayed out of the prompt.
    """
    pasted = "é" * (UNSENT_LIMIT // 5)  # 400 KB typed, over 1 MB kept

    async def close_with(draft: str) -> list[str]:
        app = build(home, client)
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await settle(pilot, app)
            said = notices(app)
            app.query_one(Prompt).text = draft
            await pilot.press("ctrl+q")
            await pilot.pause()
        return said

    await close_with(pasted)
    [told] = [n for n in await close_with("a small draft") if UNSENT_FILENAME in n]
    app = build(home, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        assert app.query_one(Prompt).text == "a small draft"
    # The large one is not lost: renamed, the notice says where.
    assert "it was moved to unsent-too-large-" in told, told
    [aside] = set_aside(home)
    assert pasted in aside.read_text(encoding="utf-8").encode().decode("unicode_escape")


async def test_hidden_controls_in_a_kept_draft_come_back_visible(
    client: genai.Client, home: Path
) -> None:
    """A draft in the file (written by anything that can write the home) holding U+202E and
    an ESC sequence: the prompt shows them as escapes, as it shows a paste of them."""
    line = '{"session": null, "title": "", "texts": ["q \\u202e"], "draft": "a \\u001b[2J b"}'
    (home / UNSENT_FILENAME).write_text(line + "\n")
    app = build(home, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        assert app.query_one(Prompt).text == "q \\u202e\n\na \\u001b[2J b"


def taken_files(home: Path) -> list[str]:
    return sorted(p.name for p in home.glob(f"{UNSENT_FILENAME}.*.taking"))


@pytest.mark.parametrize("then", ["sent", "quit untouched"])
async def test_the_taken_file_stays_until_what_it_restored_is_safe_again(
    fake: FakeGemini, client: genai.Client, home: Path, then: str
) -> None:
    """Until the restored text is sent or kept again at quit, the taken file stays (a killed
    window leaves it to the next start); after, nothing is left to restore twice."""
    keep(home, Unsent(["said before closing"], None, ""))
    fake.add(text_reply("Noted."))
    app = build(home, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.query_one(Prompt).text == "said before closing"
        assert len(taken_files(home)) == 1
        if then == "sent":
            app.query_one(Prompt).focus()
            await pilot.press("enter")
            await wait_until(pilot, lambda: not taken_files(home), "the taken file gone")
    assert taken_files(home) == []
    assert (home / UNSENT_FILENAME).exists() == (then == "quit untouched")
