"""``--print`` continues a session with the model it chose ("Change model…"), and ``--model``
overrides that choice for one run without changing it."""

from __future__ import annotations

from pathlib import Path

from google.genai import types
from test_headless import run

from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.store import SessionManager


async def test_print_uses_the_sessions_model_unless_model_is_given(
    fake: FakeGemini, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    async with SessionManager(home / "koroku.db") as store:
        content = types.Content(role="user", parts=[types.Part(text="earlier")])
        await store.add_message(SessionEvent.from_content(content))
        await store.set_model("gemini-chosen")
    fake.add(text_reply("one"), text_reply("two"), text_reply("three"))
    assert run(fake, home, "--print", "hi").returncode == 0
    assert fake.generate_requests[-1].model == "gemini-chosen"
    assert run(fake, home, "--print", "hi", "--model", "gemini-flag").returncode == 0
    assert fake.generate_requests[-1].model == "gemini-flag"
    assert run(fake, home, "--print", "hi").returncode == 0  # the flag changed nothing kept
    assert fake.generate_requests[-1].model == "gemini-chosen"
