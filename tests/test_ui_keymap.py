"""A keymap.toml that cannot be used is reported, and never leaves the user without quit."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, settle
from hostile.keymaps import KEYMAPS, QUIT_KEYS

from koroku_tui.ui import keymap
from koroku_tui.ui.main.sidebar import ToolSidebar


@pytest.mark.parametrize(("text", "told"), KEYMAPS, ids=[t for _, t in KEYMAPS])
async def test_a_bad_keymap_is_reported_and_ctrl_q_still_quits(
    client: genai.Client, tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str, told: str
) -> None:
    (tmp_path / "keymap.toml").write_text(text)
    app = build(tmp_path, client)
    with caplog.at_level(logging.WARNING, logger="koroku_tui.ui.keymap"):
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            notices = [str(n.message) for n in app._notifications]
            assert any(told in notice for notice in notices), notices
            await pilot.press(QUIT_KEYS.get(told, "ctrl+q"))
            await pilot.pause()
            assert app.return_code == 0  # quit has a key whatever the file said
    assert any(told in record.getMessage() for record in caplog.records)


async def test_a_bad_entry_keeps_its_default_and_the_good_ones_apply(
    client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "keymap.toml").write_text(
        '"main.toggle_sidebar" = "ctrl+kk"\n"main.older" = "f7"\n"main.nothing" = "f8"\n'
    )
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        sidebar = app.query_one(ToolSidebar)
        await pilot.press("ctrl+t")  # the default stays for the bad entry
        await pilot.pause()
        assert not sidebar.display
        [notice] = [str(n.message) for n in app._notifications if "keymap" in str(n.message)]
        assert "'ctrl+kk' is not a key Textual knows" in notice and "(ctrl+t) stays" in notice
        assert "'main.nothing' is not a binding id" in notice
        assert "'main.older'" not in notice  # f7 is fine...
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
