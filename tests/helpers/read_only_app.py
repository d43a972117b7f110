"""Run the app on a home, headless, as the command line would; print what a user meets.

``python read_only_app.py HOME FIRST_SESSION`` prints one JSON object: the
banner, the user messages shown, whether an agent started, what sending a
message did, and the messages shown after opening ``FIRST_SESSION`` as the
history screen opens one. ``tests/test_cli_home.py`` runs it where HOME is a
read-only mount (``unshare``), which a test process itself cannot be in.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from helpers.ui_kit import plain, send, settle, texts

from koroku_tui.config.home_check import read_only_home
from koroku_tui.config.settings import Settings
from koroku_tui.modes.wiring import assemble
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.history.messages import OpenSession
from koroku_tui.ui.main.blocks import UserBlock
from koroku_tui.ui.main.prompt import Prompt


async def main(home: Path, first: int) -> None:
    # What cli._home_for decides, and hands to the assembly.
    parts = assemble(Settings(home=home), workspace=home, read_only=read_only_home(home))
    app = KorokuApp(parts)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot, app)
        report: dict[str, object] = {
            "read_only": parts.read_only,
            "agent": app.agent is not None,
            "banner": " ".join(plain(app.query_one("#banner")).split()),
            "shown": texts(app, UserBlock),
        }
        await send(pilot, app, "hello?")
        await settle(pilot, app)
        report["kept_in_prompt"] = app.query_one(Prompt).text
        report["after_send"] = texts(app, UserBlock)
        app.main.sessions.history_closed(OpenSession(first))
        await settle(pilot, app)
        report["opened"] = texts(app, UserBlock)
        report["notices"] = [str(notice.message) for notice in app._notifications]
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2])))
