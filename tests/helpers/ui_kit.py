"""Building the app for Pilot tests and waiting for it to be idle."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types
from rich.console import Console
from textual import events
from textual.app import App
from textual.command import CommandList, CommandPalette
from textual.message import Message
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.worker import WorkerCancelled

from koroku_tui.agent import AgentConfig
from koroku_tui.agent.tools import ToolRegistry
from koroku_tui.config.settings import ApprovalSettings, Settings
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.modes.wiring import assemble
from koroku_tui.store import SessionManager
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.key_bar import KeyBar
from koroku_tui.ui.main.answer import AnswerBlock, AnswerPiece
from koroku_tui.ui.main.approval import ApprovalScreen
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.terminal_input import PasteParser


async def seed_session(tmp_path: Path, turns: int) -> None:
    """Store ``turns`` user/model pairs ("question n" / "answer n") in the home's database."""
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        for n in range(turns):
            for role, text in (("user", f"question {n}"), ("model", f"answer {n}")):
                content = types.Content(role=role, parts=[types.Part(text=text)])
                await store.add_message(SessionEvent.from_content(content))


@asynccontextmanager
async def two_windows(
    tmp_path: Path, client: genai.Client, *, size: tuple[int, int] = (120, 40)
) -> AsyncIterator[tuple[Pilot[None], KorokuApp, SessionManager]]:
    """The app on a stored one-turn conversation, and another Koroku window's store on it.

    Both open session 1 of the same database file, as two windows do.
    """
    await seed_session(tmp_path, 1)
    app = build(tmp_path, client)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        async with SessionManager(Settings(home=tmp_path).database_path) as other:
            yield pilot, app, other


def build(
    tmp_path: Path,
    client: genai.Client | None,
    *,
    config: AgentConfig | None = None,
    auto_approve: bool = False,
    tools: ToolRegistry | None = None,
    approval: ApprovalSettings | None = None,
    settings: Settings | None = None,
    workspace: Path | None = None,
    notices: tuple[str, ...] = (),
    **kwargs: Any,
) -> KorokuApp:
    """The app on a home in ``tmp_path``, with a 1M-token window unless ``config`` is given.

    ``tools`` replaces the built-in registry (the assembly's, which the app and
    its agent share); ``approval`` holds the settings' approval rules;
    ``settings`` (default: the home ``tmp_path``, with ``approval``'s rules),
    ``workspace`` (default: ``tmp_path``) and ``notices`` (the config's
    warnings) are the run's; ``kwargs`` go to the app (``session_id``,
    ``new_session``).
    """
    settings = settings or Settings(home=tmp_path, approval=approval or ApprovalSettings())
    config = config or AgentConfig(memory_dir=settings.memory_dir, context_window=1_000_000)
    parts = assemble(
        settings,
        workspace=workspace or tmp_path,
        auto_approve=auto_approve,
        client=client,
        agent_config=config,
        tools=tools,
        notices=notices,
    )
    return KorokuApp(parts, **kwargs)


async def settle(pilot: Pilot[Any], app: App[Any] | None = None) -> None:
    """Wait for start-up (the main app's), the keys typed, every worker and the messages
    they posted.

    Workers started meanwhile (a debounced search, the next page) are waited
    for too, and every answer's text to be drawn; a test whose workers never
    settle fails here rather than later.
    """
    app = app or pilot.app
    if isinstance(app, KorokuApp):
        await app.ready.wait()
    for _ in range(100):
        if isinstance(app, KorokuApp):  # a key held behind a job (Escape after ctrl+o)
            await wait_until(pilot, lambda: app.key_order.idle, "the keys typed to be handed on")
        # A worker cancelled meanwhile (Escape let go after ctrl+o) has ended too.
        with suppress(WorkerCancelled):
            await app.workers.wait_for_complete()
        await pilot.pause()
        for answer in app.query(AnswerBlock):  # a fast stream is drawn a frame at a time
            await answer.shown.wait()
        if all(worker.is_finished for worker in app.workers):
            await pilot.pause()
            return
    raise AssertionError("workers never settled")


async def send(pilot: Pilot[None], app: KorokuApp, text: str) -> None:
    """Type ``text`` into the prompt and press Enter."""
    app.query_one(Prompt).text = text
    app.query_one(Prompt).focus()
    await pilot.press("enter")


def read(data: str | Sequence[str]) -> Iterator[Message]:
    """The keys and pastes the app's driver reads from ``data``: one chunk, or chunks read
    one after another (a lone ESC ending one is Escape, not the start of alt+x)."""
    for chunk in [data] if isinstance(data, str) else data:
        parser = PasteParser()
        yield from parser.feed(chunk)
        yield from parser.feed("")  # the chunk's end: a pending ESC is a key


async def type_raw(pilot: Pilot[Any], app: App[Any], data: str | Sequence[str]) -> None:
    """``data`` read from the terminal in one burst: parsed as the app's driver parses it,
    every key and paste posted at once (none waits for the one before it), then settled."""
    for token in read(data):
        token.set_sender(app)
        app.post_message(token)
    await pilot.pause()
    await settle(pilot, app)


async def type_slowly(pilot: Pilot[Any], app: App[Any], data: str | Sequence[str]) -> None:
    """``data`` typed one key at a time, each once the app has settled after the one
    before: what the same keys read in one burst (:func:`type_raw`) must come to."""
    for token in read(data):
        token.set_sender(app)
        app.post_message(token)
        await pilot.pause()
        await settle(pilot, app)


async def wait_until(
    pilot: Pilot[None], condition: Callable[[], bool], what: str, within: float = 10.0
) -> None:
    """Let the app run until ``condition()`` holds, or fail saying ``what`` never happened.

    For states no event announces (a request reaching the fake, a toast on
    screen): polled, with a deadline, instead of a fixed sleep before an assert.
    """
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {within} s")
        await pilot.pause(0.01)


async def polled(condition: Callable[[], bool], what: str, within: float = 10.0) -> None:
    """``wait_until`` without the pilot, for a test that keeps the app busy on purpose.

    The pilot's pauses wait for every widget's messages to be handled: with
    a step held in its thread (``held_plans``), they would wait for it.
    """
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {within} s")
        await asyncio.sleep(0.01)


async def run_command(pilot: Pilot[None], app: App[Any], typed: str, offer: str) -> None:
    """Open the palette (ctrl+p), type ``typed``, and run its first offer once it is ``offer``."""
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
    await pilot.press(*typed)
    results = app.screen.query_one(CommandList)

    def first() -> str:
        return str(results.get_option_at_index(0).prompt) if results.option_count else ""

    await wait_until(pilot, lambda: offer in first(), f"the palette's offer {offer!r}")
    await pilot.press("enter")


async def cut_mid_answer(
    pilot: Pilot[None], app: KorokuApp, cut: str | Callable[[], object]
) -> None:
    """Send "tell me", wait for "first half" of the answer, then cut it: a key, or ``cut()``.

    After Escape the turn's end is waited for (the app stays open); ctrl+q,
    or a ``cut`` that stops the app, leaves it closing.
    """
    await send(pilot, app, "tell me")
    await wait_until(
        pilot,
        lambda: any("first half" in plain(a) for a in app.query(AnswerBlock)),
        "a first piece",
    )
    if isinstance(cut, str):
        await pilot.press(cut)
    else:
        cut()
    if cut == "escape":
        await settle(pilot, app)


async def wait_for_approval(pilot: Pilot[None], app: KorokuApp) -> ApprovalScreen:
    """The approval dialog, once it is drawn (before that it ignores keys)."""

    def drawn() -> bool:
        return isinstance(app.screen, ApprovalScreen) and app.screen.displayed_at is not None

    await wait_until(pilot, drawn, "the approval dialog opening")
    await pilot.pause()  # let it take focus
    assert isinstance(app.screen, ApprovalScreen)
    return app.screen


def first_frames(monkeypatch: pytest.MonkeyPatch) -> dict[Screen[Any], float]:
    """When each screen's first frame went to the terminal (``time.monotonic()``), as the app runs.

    Under Pilot the app composes every frame as in a terminal, only not written:
    a person can press a key about what they see from that moment on.
    """
    first: dict[Screen[Any], float] = {}
    write = KorokuApp._display

    def display(app: KorokuApp, screen: Screen[Any], renderable: Any) -> None:
        if renderable is not None:  # None: nothing to write
            first.setdefault(screen, time.monotonic())
        write(app, screen, renderable)

    monkeypatch.setattr(KorokuApp, "_display", display)
    return first


async def key_at(pilot: Pilot[None], app: KorokuApp, key: str, at: float) -> None:
    """Send ``key`` as if typed at ``at`` (``time.monotonic()``), as the terminal driver does."""
    event = events.Key(key, key)
    event.time = at
    app.post_message(event)
    await pilot.pause()


async def steady(pilot: Pilot[None]) -> None:
    """Scheduled animations finished and their last frame handled: ready for a snapshot."""
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


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


def key_bar_line(app: App[Any]) -> str:
    """The bottom line of keys as a user sees it: what fits in the screen's width."""
    return app.screen.query_one(KeyBar).render().plain[: app.size.width]


def texts(app: KorokuApp, kind: type[Widget]) -> list[str]:
    """The plain text of every mounted widget of ``kind``, in order."""
    return [plain(w) for w in app.query(kind)]


@asynccontextmanager
async def asking(
    fake: FakeGemini,
    client: genai.Client,
    tmp_path: Path,
    call: tuple[str, dict[str, Any]],
    *,
    request: str,
    then: str,
    approval: ApprovalSettings | None = None,
) -> AsyncIterator[tuple[Pilot[None], KorokuApp, ApprovalScreen]]:
    """The running app with the approval dialog open for ``call``, asked for by ``request``.

    The model answers ``then`` once the call is answered; ``approval``: the settings' rules.
    """
    fake.add(call_reply(call), text_reply(then))
    app = build(tmp_path, client, approval=approval)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, request)
        yield pilot, app, await wait_for_approval(pilot, app)


def asking_to_run(
    fake: FakeGemini,
    client: genai.Client,
    tmp_path: Path,
    command: str,
    *,
    request: str = "run it",
    then: str = "Ok.",
    approval: ApprovalSettings | None = None,
) -> AbstractAsyncContextManager[tuple[Pilot[None], KorokuApp, ApprovalScreen]]:
    """:func:`asking` about a ``run_command`` call of ``command``."""
    call = ("run_command", {"command": command})
    return asking(fake, client, tmp_path, call, request=request, then=then, approval=approval)


def count_restyles(monkeypatch: pytest.MonkeyPatch, kind: type[Widget]) -> list[Widget]:
    """A list that gains each widget of ``kind`` every time Textual restyles it.

    What an order rule (``:first-child``, ``:last-child``) costs shows here:
    Textual restyles every sibling such a rule could match at each mount.
    """
    from textual.dom import DOMNode

    styled: list[Widget] = []
    update = DOMNode.update_node_styles

    def counting(node: DOMNode, animate: bool = True) -> None:
        if isinstance(node, kind):
            styled.append(node)
        update(node, animate)

    monkeypatch.setattr(DOMNode, "update_node_styles", counting)
    return styled
