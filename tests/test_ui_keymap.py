"""A keymap.toml that cannot be used is reported, and never leaves the user without quit."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, settle
from hostile.keymaps import KEYMAPS, LARGE_KEYMAPS, PLANTED, QUIT_KEYS
from textual.widgets._toast import Toast

from koroku_tui.ui import keymap
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.sidebar import ToolSidebar


def keymap_notices(app: KorokuApp) -> list[str]:
    return [str(n.message) for n in app._notifications if "keymap" in str(n.message)]


@pytest.mark.parametrize(("text", "told"), KEYMAPS, ids=[t for _, t in KEYMAPS])
async def test_a_bad_keymap_is_reported_and_ctrl_q_still_quits(
    client: genai.Client, tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str, told: str
) -> None:
    (tmp_path / "keymap.toml").write_text(text)
    app = build(tmp_path, client)
    with caplog.at_level(logging.WARNING, logger="koroku_tui.ui.keymap"):
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            [notice] = keymap_notices(app)  # one notice, whatever the file holds
            assert told in notice
            await pilot.press(QUIT_KEYS.get(told, "ctrl+q"))
            await pilot.pause()
            assert app.return_code == 0  # quit has a key whatever the file said
    assert any(told in record.getMessage() for record in caplog.records)


async def test_a_bad_entry_keeps_its_default_and_the_good_ones_apply(
    client: genai.Client, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "keymap.toml").write_text(
        '"main.toggle_sidebar" = "ctrl+kk"\n"main.older" = "f7"\n"main.nothing" = "f8"\n'
    )
    app = build(tmp_path, client)
    with caplog.at_level(logging.WARNING, logger="koroku_tui.ui.keymap"):
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            sidebar = app.query_one(ToolSidebar)
            await pilot.press("ctrl+t")  # the default stays for the bad entry
            await pilot.pause()
            assert not sidebar.display
            # Two entries were not used: one short notice, the reasons in the log.
            [notice] = keymap_notices(app)
            assert notice == (
                "keymap.toml: 2 entries were not used and their default keys stay; "
                "koroku.log says why."
            )
            log = caplog.text
            assert "'ctrl+kk' is not a key Textual knows" in log and "(ctrl+t) stays" in log
            assert "'main.nothing' is not a binding id" in log
            assert "'main.older'" not in log  # f7 is fine...
            await pilot.press("f7")  # ...and applied
            await settle(pilot, app)
            assert any("start of the session" in str(n.message) for n in app._notifications)


def test_good_keys_pass_and_quit_can_move(tmp_path: Path) -> None:
    for key in ("ctrl+k", "f6", "slash", "question_mark", "?", "ctrl+shift+up", "space", "A"):
        assert keymap.is_key(key), key
    path = tmp_path / "keymap.toml"
    path.write_text('"main.quit" = "f10"\n"main.compact" = "ctrl+q"\n')
    loaded = keymap.load_keymap(path, {"main.quit": "ctrl+q", "main.compact": "ctrl+o"})
    # ctrl+q is free once quit moved to f10: both remaps apply, nothing to report.
    assert loaded.keys == {"main.quit": "f10", "main.compact": "ctrl+q"}
    assert loaded.problem is None


def test_two_actions_may_swap_keys(tmp_path: Path) -> None:
    path = tmp_path / "keymap.toml"
    path.write_text('"main.compact" = "ctrl+r"\n"main.history" = "ctrl+o"\n')
    defaults = {"main.compact": "ctrl+o", "main.history": "ctrl+r", "main.quit": "ctrl+q"}
    loaded = keymap.load_keymap(path, defaults)
    assert loaded.keys == {"main.compact": "ctrl+r", "main.history": "ctrl+o"}
    assert loaded.problem is None


async def test_a_remap_onto_another_actions_key_leaves_that_action_its_key(
    client: genai.Client, tmp_path: Path
) -> None:
    """``"main.compact" = "ctrl+r"`` is dropped: ctrl+r still opens History."""
    (tmp_path / "keymap.toml").write_text('"main.compact" = "ctrl+r"\n')
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        [notice] = keymap_notices(app)
        assert "would take ctrl+r from 'main.history'; the default (ctrl+o) stays" in notice
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert type(app.screen).__name__ == "HistoryScreen"


async def test_a_main_action_on_a_typed_key_never_fires_while_typing(
    client: genai.Client, tmp_path: Path
) -> None:
    """``"main.quit" = "a"`` would quit while the user types "a question"."""
    (tmp_path / "keymap.toml").write_text('"main.quit" = "a"\n')
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        [notice] = keymap_notices(app)
        assert "'main.quit' = 'a': a is typed in the prompt" in notice
        await pilot.press(*"a question")
        await pilot.pause()
        assert app.is_running and app.return_code is None
        assert app.query_one(Prompt).text == "a question"
        await pilot.press("ctrl+q")  # quit kept its default
        await pilot.pause()
        assert app.return_code == 0


@pytest.mark.parametrize(("text", "told"), LARGE_KEYMAPS, ids=[t for _, t in LARGE_KEYMAPS])
def test_a_large_keymap_is_refused_or_counted_within_bounded_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str, told: str
) -> None:
    import tracemalloc

    path = tmp_path / "keymap.toml"
    path.write_text(text)
    defaults = {"main.quit": "ctrl+q", "main.compact": "ctrl+o"}
    tracemalloc.start()
    try:
        with caplog.at_level(logging.WARNING):
            loaded = keymap.load_keymap(path, defaults)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert loaded.keys == {} and loaded.problem is not None
    assert len(loaded.problem) < 160  # one short sentence, whatever the file
    assert any(told in record.getMessage() for record in caplog.records), caplog.text
    assert len(caplog.records) <= 25  # the first reasons and a count, not one per entry
    # 50,000 ids took 1.6 GB when every reason listed every binding id.
    assert peak < 10 * len(text.encode()) + 1_000_000, peak


async def test_a_long_keymap_notice_fits_an_80x24_screen(
    client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "keymap.toml").write_text(LARGE_KEYMAPS[-1][0])
    app = build(tmp_path, client)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot, app)
        [notice] = keymap_notices(app)
        assert notice.endswith("koroku.log says why.")
        [toast] = [t for t in app.screen.query(Toast) if "keymap" in t._notification.message]
        region = toast.region
        assert region.y >= 0 and region.bottom <= 24 and region.height <= 6, region


def plant(path: Path, what: str, outside: Path) -> None:
    """Put ``what`` (one of ``PLANTED``) at ``path``."""
    if what == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif what == "link outside":
        outside.write_text('"main.quit" = "f10"\n')  # a keymap that would apply if followed
        path.symlink_to(outside)
    elif what == "dangling link":
        path.symlink_to(outside / "gone")
    elif what == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()


@pytest.mark.parametrize("what", PLANTED)
async def test_a_link_fifo_or_folder_as_keymap_is_one_notice_and_a_normal_start(
    client: genai.Client, tmp_path: Path, what: str
) -> None:
    home, outside = tmp_path / "home", tmp_path / "outside.toml"
    home.mkdir()
    plant(home / "keymap.toml", what, outside)
    app = build(home, client)
    started = time.monotonic()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        [notice] = keymap_notices(app)
        assert "keymap.toml in the Koroku home is" in notice
        assert notice.endswith("The default keys apply.")
        await pilot.press("f10")  # the outside file's quit key was not taken
        await pilot.pause()
        assert app.return_code is None
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.return_code == 0
    assert time.monotonic() - started < 60  # a FIFO read would block for ever


async def test_a_keymap_that_is_not_utf8_is_one_notice(
    client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "keymap.toml").write_bytes(b'"main.compact" = "ctrl+\xff"\n')
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        [notice] = keymap_notices(app)
        assert "holds bytes that are not UTF-8" in notice
