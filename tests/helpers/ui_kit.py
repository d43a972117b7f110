"""Building the app for Pilot tests and waiting for it to be idle."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from google import genai
from google.genai import types
from rich.console import Console
from textual.pilot import Pilot
from textual.widget import Widget

from koroku_tui.agent import AgentConfig
from koroku_tui.events import SessionEvent
from koroku_tui.settings import Settings
from koroku_tui.store import SessionManager
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.answer import AnswerPiece
from koroku_tui.ui.main.approval import ApprovalScreen
from koroku_tui.ui.main.prompt import Prompt


async def seed_session(tmp_path: Path, turns: int) -> None:
    """Store ``turns`` user/model pairs ("question n" / "answer n") in the home's database."""
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        for n in range(turns):
            for role, text in (("user", f"question {n}"), ("model", f"answer {n}")):
                content = types.Content(role=role, parts=[types.Part(text=text)])
                await store.add_message(SessionEvent.from_content(content))


def build(tmp_path: Path, client: genai.Client | None, **kwargs: Any) -> KorokuApp:
    """The app on a home in ``tmp_path``, with a 1M-token window unless ``config`` is given."""
    settings = Settings(home=tmp_path)
    config = kwargs.pop(
        "config", AgentConfig(memory_dir=settings.memory_dir, context_window=1_000_000)
    )
    return KorokuApp(settings, client=client, config=config, workspace=tmp_path, **kwargs)


async def settle(pilot: Pilot[None], app: KorokuApp) -> None:
    """Wait for start-up, every worker, and the messages they posted."""
    await app.ready.wait()
    for _ in range(50):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not any(not w.is_finished for w in app.workers):
            break
    await pilot.pause()


async def send(pilot: Pilot[None], app: KorokuApp, text: str) -> None:
    """Type ``text`` into the prompt and press Enter."""
    app.query_one(Prompt).text = text
    app.query_one(Prompt).focus()
    await pilot.press("enter")


async def wait_for_approval(pilot: Pilot[None], app: KorokuApp) -> ApprovalScreen:
    """The approval dialog, once it is drawn (before that it ignores keys)."""
    for _ in range(500):
        screen = app.screen
        if isinstance(screen, ApprovalScreen) and screen.displayed_at is not None:
            await pilot.pause()  # let it take focus
            return screen
        await pilot.pause(0.02)
    raise AssertionError("the approval dialog never opened")


def rendered(widget: AnswerPiece) -> str:
    """The text a finished answer piece draws (Rich's Markdown), unwrapped like other blocks'."""
    console = Console(width=1_000, file=io.StringIO(), color_system=None)
    with console.capture() as capture:
        console.print(widget.content)
    return capture.get()


def plain(widget: Widget) -> str:
    """What a block shows, as plain text (Markdown blocks and answer pieces included)."""
    parts = []
    for w in [widget, *widget.query("*")]:
        if isinstance(w, AnswerPiece):
            parts.append(rendered(w))
            continue
        text = getattr(w.render(), "plain", None)
        if isinstance(text, str) and text:
            parts.append(text)
    return "\n".join(parts)


def texts(app: KorokuApp, kind: type[Widget]) -> list[str]:
    """The plain text of every mounted widget of ``kind``, in order."""
    return [plain(w) for w in app.query(kind)]
