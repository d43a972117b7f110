"""Run the app on a home, headless; print which heavy modules were loaded when.

``python first_frame_modules.py HOME`` prints one JSON object: the heavy
modules (``HEAVY``) already imported when the first frame holding the
transcript was drawn, and the Markdown ones (``MARKDOWN``), the bottom
line of that frame (the keys), those imported once start-up finished (and the
MCP servers of ``HOME/mcp_servers.json``, if any, were ready), whether the agent
started, and the notices shown. Run in a fresh interpreter by
``tests/test_import_hygiene.py``.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Any

HEAVY = (
    "google.genai",
    "httpx",
    "httpx2",
    "mcp",
    "mcp_types",
    "koroku_tui.agent.loop.agent",
    "koroku_tui.modes.headless",
    "textual.widgets._markdown",
    "textual.widgets._data_table",
    "koroku_tui.ui.history.screen",
    "koroku_tui.ui.main.approval",
    "numpy",
    "tokenizers",
    "safetensors",
)
"""The Gemini SDK, its transports, the MCP SDK, the agent, the embedding model of recall
by meaning (numpy, its tokenizer and weights), the live Markdown widget a
streamed answer needs (stored answers are Rich Markdown), the sidebar's
table (mounted after the first frame) and the screens shown later (history,
approval): loaded after the first frame."""


MARKDOWN = ("rich.markdown", "markdown_it")
"""Rich Markdown and its parser: loaded when an answer is first drawn."""


def bottom_line(frame: Any) -> str:
    """The last line of a frame as drawn (what Textual handed to the terminal)."""
    from rich.console import Console

    console = Console(width=120, height=40, file=io.StringIO(), color_system=None)
    with console.capture() as capture:
        console.print(frame)
    return (capture.get().splitlines() or [""])[-1]


def heavy_loaded(names: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(name for name in names if name in sys.modules)


async def main(home: Path) -> None:
    from rich.console import RenderableType
    from textual.screen import Screen

    from koroku_tui.config.settings import Settings
    from koroku_tui.modes.wiring import assemble
    from koroku_tui.ui.app import KorokuApp
    from koroku_tui.ui.main.transcript import Transcript

    servers_file = home / "mcp_servers.json"
    servers = json.loads(servers_file.read_text()) if servers_file.exists() else {}
    app = KorokuApp(assemble(Settings(home=home, mcp_servers=servers), workspace=home))
    first_frame: list[str] | None = None
    markdown: list[str] = []
    keys = ""
    display = app._display

    def watch(screen: Screen[Any], renderable: RenderableType | None) -> None:
        nonlocal first_frame, markdown, keys
        display(screen, renderable)
        if renderable is not None and first_frame is None and app.query(Transcript):
            first_frame, markdown = heavy_loaded(), heavy_loaded(MARKDOWN)
            keys = bottom_line(renderable)

    app._display = watch  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)):
        await app.ready.wait()
        if app.agent is not None and app.agent.mcp is not None:
            await app.agent.mcp.ready_for_turn()  # what a first turn would wait for
        started = heavy_loaded()
        agent = app.agent is not None
        notices = [str(notice.message) for notice in app._notifications]
    report: dict[str, object] = {
        "first_frame": first_frame,
        "markdown": markdown,
        "keys": keys,
        "started": started,
    }
    report |= {"agent": agent}
    print(json.dumps(report | {"notices": notices}))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
