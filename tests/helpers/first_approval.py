"""Run the app in a fresh interpreter up to its first approval; print what the user saw.

``python first_approval.py HOME`` starts the real app against a FakeGemini
that asks to write a file, sends a message, denies the call with ``n``, and
prints one JSON object: whether the approval dialog's module was loaded
before the request (it must not be: it loads when first shown), the screen
shown, the status line while it waited, and the tool rows after the denial.
Run by ``tests/test_import_hygiene.py``; in-process tests cannot see this
path, as the test kit imports the dialog.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEADLINE = 30.0


async def until(pilot: Any, condition: Callable[[], bool], what: str) -> None:
    """Let the app run until ``condition()`` holds (the kit's ``wait_until``, which imports
    the dialog, cannot be used here)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + DEADLINE
    while not condition():
        if loop.time() > end:
            raise AssertionError(f"{what} never happened")
        await pilot.pause(0.02)


async def main(home: Path) -> None:
    from koroku_tui.agent import AgentConfig
    from koroku_tui.agent.wire.client import close_client, make_client
    from koroku_tui.config.settings import Settings
    from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
    from koroku_tui.modes.wiring import assemble
    from koroku_tui.ui.app import KorokuApp
    from koroku_tui.ui.main.prompt import Prompt
    from koroku_tui.ui.main.tool_row import ToolRow
    from koroku_tui.ui.main.turn_status import TurnStatus

    report: dict[str, object] = {}
    with FakeGemini() as fake:
        fake.add(call_reply(("write_file", {"path": "a.txt", "content": "x"})), text_reply("OK."))
        client = make_client(base_url=fake.base_url, api_key="test-key")
        settings = Settings(home=home, approval_grace=0)
        config = AgentConfig(memory_dir=settings.memory_dir, context_window=1_000_000)
        app = KorokuApp(assemble(settings, workspace=home, client=client, agent_config=config))
        async with app.run_test(size=(120, 40)) as pilot:
            await app.ready.wait()
            report["loaded_before"] = "koroku_tui.ui.main.approval" in sys.modules
            app.query_one(Prompt).text = "write it"
            await pilot.press("enter")
            await until(pilot, lambda: type(app.screen).__name__ == "ApprovalScreen", "a dialog")
            report["screen"] = type(app.screen).__name__
            status = app.main.query_one(TurnStatus)
            await until(pilot, lambda: "waiting for your answer" in str(status.render()), "asking")
            report["status"] = str(status.render())
            await pilot.press("n")
            await until(pilot, lambda: not app.main.running, "the turn's end")
            report["rows"] = [str(row.render()) for row in app.query(ToolRow)]
        await close_client(client)
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
