"""Keys typed after the history screen's Enter opens another session act as typed slowly.

Opening a session and rewinding in it in one read: the rewind list's Enter,
followed twice on its way back up to the App (``ui.key_order``), let the key
after it go before the rewound message was back in the prompt.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from google.genai import types
from helpers.ui_kit import build, seed_session, settle, type_raw, type_slowly
from test_ui_burst import CTRL_G, CTRL_R, DOWN, ENTER, what_shows

from koroku_tui.config.settings import Settings
from koroku_tui.events import SessionEvent
from koroku_tui.store import SessionManager
from koroku_tui.ui.key_order import KeyOrder


async def after_typing_on_two_sessions(
    tmp_path: Path, client: genai.Client, keys: str, *, burst: bool
) -> object:
    """What shows after ``keys`` on two stored sessions (the newer one open)."""
    await seed_session(tmp_path, 2)
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        await store.new_session()
        for n in range(2):
            for role, text in (("user", f"other {n}"), ("model", f"reply {n}")):
                content = types.Content(role=role, parts=[types.Part(text=text)])
                await store.add_message(SessionEvent.from_content(content))
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        await (type_raw if burst else type_slowly)(pilot, app, keys)
        assert app.store is not None
        notices = [n.message for n in app._notifications]
        return (*await what_shows(app), app.store.session_id, notices)


@pytest.mark.parametrize(
    "keys",
    [
        pytest.param(f"{CTRL_R}{DOWN}{ENTER}ab", id="open the other session, type"),
        pytest.param(f"{CTRL_R}{DOWN}{ENTER}{CTRL_G}{ENTER}x", id="open it, rewind in it"),
        pytest.param(f"{CTRL_R}{DOWN}{ENTER}{CTRL_R}", id="open it, history again"),
    ],
)
async def test_keys_after_opening_a_session_act_as_typed_slowly(
    client: genai.Client, tmp_path: Path, keys: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(KeyOrder, "WORKER_WAIT", 60.0)
    slowly = await after_typing_on_two_sessions(tmp_path / "slowly", client, keys, burst=False)
    assert (
        await after_typing_on_two_sessions(tmp_path / "burst", client, keys, burst=True) == slowly
    )
