"""``koroku-tui --demo``: the full app against a scripted Gemini, offline.

The real google-genai SDK talks over loopback to an in-process
:class:`~koroku_tui.fake_gemini.FakeGemini` whose answers come from
:class:`~koroku_tui.modes.demo.script.DemoScript`, so anyone can try streaming,
tool calls, the approval prompt, the tool guardrail and compaction without an
API key. Strict signature checking stays on: the demo doubles as proof that
the history Koroku sends back is valid.

The demo keeps its own data in ``<home>/demo`` (its conversations never mix
with real ones), starts a fresh session each time, and runs its tools in a
temporary folder it fills with a few files and removes afterwards. The first
time, it stores one earlier demo session for the recall scene to find
(``recall_scene``).

It never sends a message on its own: the opening question waits in the
prompt, selected, for the user to send with Enter (or to type over). A demo
that sent it at every start stored one more identical session each time, and
a message sent for the user is not what a user expects of a prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from koroku_tui.agent import AgentConfig
from koroku_tui.agent.context.budget import BudgetPolicy
from koroku_tui.agent.wire.client import close_client, make_client
from koroku_tui.config.settings import DEMO_DIRNAME, Settings
from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.modes.demo.recall_scene import seed_earlier_session
from koroku_tui.modes.demo.script import DemoScript
from koroku_tui.modes.demo.workspace import create_workspace
from koroku_tui.modes.wiring import assemble
from koroku_tui.privacy.file_modes import FOLDER_MODE
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.prompt import Prompt

__all__ = [
    "DEMO_API_KEY",
    "DEMO_CONTEXT_WINDOW",
    "DEMO_DIRNAME",
    "OPENING_MESSAGE",
    "DemoRun",
    "demo_app",
    "demo_settings",
    "run_demo",
]

DEMO_API_KEY = "demo"
"""The key the fake server expects; it only ever travels over loopback."""
DEMO_CONTEXT_WINDOW = 20_000
"""Small on purpose: the gauge moves visibly and a compaction comes after a few turns."""
DEMO_COMPACTION_MODEL = "demo-summariser"
OPENING_MESSAGE = "Hi Koroku! What can this demo do?"
"""Put in the prompt at start (selected, not sent): Enter asks for the greeting."""


@dataclass(frozen=True)
class DemoRun:
    """A demo ready to run: the app, the server it talks to, and where it works."""

    app: KorokuApp
    fake: FakeGemini
    script: DemoScript
    settings: Settings
    """The demo's own settings (home is ``<home>/demo``)."""
    workspace: Path
    """The temporary folder the tools act on; gone after the context exits."""


def demo_settings(settings: Settings) -> Settings:
    """``settings`` with the home moved to its ``demo`` subfolder."""
    return settings.model_copy(update={"home": settings.home / DEMO_DIRNAME})


def demo_config(settings: Settings, *, context_window: int = DEMO_CONTEXT_WINDOW) -> AgentConfig:
    """The agent settings of the demo (``settings`` is the demo's own)."""
    return AgentConfig(
        context_window=context_window,
        # Tokens only: the event backstop would never be reached in a demo anyway.
        budget=BudgetPolicy(event_limit=None),
        memory_dir=settings.memory_dir,
        compaction_model=DEMO_COMPACTION_MODEL,
    )


@contextlib.asynccontextmanager
async def demo_app(
    settings: Settings,
    *,
    pace: float = 1.0,
    opening: str | None = OPENING_MESSAGE,
    context_window: int = DEMO_CONTEXT_WINDOW,
) -> AsyncIterator[DemoRun]:
    """Start the fake server, build the app on it; stop and clean up on exit.

    Run the app inside the block (``app.run_async()`` or ``app.run_test()``).
    ``settings`` is the user's: the demo uses its ``demo`` subfolder.
    ``pace`` scales the streaming delays (0 for tests); ``opening`` is put in
    the prompt once the app is ready, for the user to send (None: left empty).
    """
    own = demo_settings(settings)
    own.home.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)  # private like the home
    await seed_earlier_session(own.database_path)
    config = demo_config(own, context_window=context_window)
    with tempfile.TemporaryDirectory(prefix="koroku-demo-") as scratch:
        workspace = create_workspace(Path(scratch))
        script = DemoScript(
            workspace,
            compaction_model=config.compaction_model,
            pace=pace,
            max_tool_calls=config.max_tool_calls_per_turn,
        )
        with FakeGemini(api_key=DEMO_API_KEY, strict=True, on_empty=script) as fake:
            client = make_client(base_url=fake.base_url, api_key=DEMO_API_KEY)
            try:
                parts = assemble(own, workspace=workspace, client=client, agent_config=config)
                app = KorokuApp(parts, new_session=True)
                opener = asyncio.create_task(_open_demo(app, opening))
                try:
                    yield DemoRun(app, fake, script, own, workspace)
                finally:
                    opener.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await opener
            finally:
                # The app does not close a client it was given; the demo made this one.
                await close_client(client)


async def _open_demo(app: KorokuApp, opening: str | None) -> None:
    """Once the app is ready, mark it as the demo and suggest the opening message.

    Suggested, never sent: it waits in an empty prompt, selected, so Enter
    sends it and typing replaces it (text the user left unsent is kept).
    """
    await app.ready.wait()
    app.sub_title = f"{app.model} · offline demo"
    prompt = app.query_one(Prompt)
    if opening is not None and app.agent is not None and not prompt.text:
        prompt.suggest(opening)


def run_demo(settings: Settings) -> int:
    """Run the demo in the terminal until the user quits; returns the exit code.

    Needs no API key: the client is given the demo key and the local server.
    """

    async def main() -> None:
        async with demo_app(settings) as demo:
            await demo.app.run_async()

    asyncio.run(main())
    return 0
