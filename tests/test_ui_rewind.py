"""Rewind and fork in the TUI, against the real SDK, the strict FakeGemini and a real store.

The conversations are made by real turns through the fake, so the answers
carry signatures the strict fake issued: a fork's first request must be
accepted with them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from google import genai
from helpers.events import model, user
from helpers.history_kit import move_to
from helpers.ui_kit import build, send, settle, steady, texts, wait_until
from test_store_recall import call, result
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot

import koroku_tui.ui.main.branching as branching
import koroku_tui.ui.main.screen as main_screen
from koroku_tui.config.settings import Settings
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, Hang, text_reply
from koroku_tui.fake_gemini.recording import RecordedRequest
from koroku_tui.store import SessionManager
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.history import HistoryScreen
from koroku_tui.ui.history.forking import ForkPoint, fork_point
from koroku_tui.ui.history.message_text import HistoryMoment
from koroku_tui.ui.main.blocks import UserBlock
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.rewind import RewindScreen, TurnList
from koroku_tui.ui.main.sidebar import ToolSidebar

HOSTILE = "look \u202eevil\u202c [bold]x[/] \x1b]0;t\x07 end\nsecond line"


def said(request: RecordedRequest) -> list[tuple[str, str]]:
    """Each content of a request as (role, its text)."""
    return [
        (str(c.get("role")), "".join(str(p.get("text", "")) for p in c.get("parts", [])))
        for c in request.contents
    ]


def rows(screen: RewindScreen) -> list[str]:
    """The list's rows as plain text, top to bottom."""
    turns = screen.query_one(TurnList)
    return [turns.get_option_at_index(i).prompt.plain for i in range(turns.option_count)]  # type: ignore[union-attr]


async def talk(pilot: Pilot[None], app: KorokuApp, fake: FakeGemini, *turns: str) -> None:
    """Send each question; the fake answers "answer to <question>" with a signature."""
    for question in turns:
        fake.add(text_reply(f"answer to {question}", signature_chunk=True))
        await send(pilot, app, question)
        await settle(pilot, app)


async def open_list(pilot: Pilot[None], app: KorokuApp) -> RewindScreen:
    app.query_one(Prompt).focus()
    await pilot.press("escape", "escape")
    await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen), "the rewind list opening")
    await settle(pilot, app)
    assert isinstance(app.screen, RewindScreen)
    return app.screen


def notices(app: KorokuApp) -> list[str]:
    return [n.message for n in app._notifications]


async def test_escape_twice_lists_messages_and_enter_rewinds(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await talk(pilot, app, fake, "one", "two", "three")
        screen = await open_list(pilot, app)
        shown = rows(screen)
        assert [row.split()[-1] for row in shown] == ["three", "two", "one"]  # newest first
        assert all(row.startswith("#") for row in shown)
        await pilot.press("down", "enter")  # "two"
        await settle(pilot, app)
        assert not isinstance(app.screen, RewindScreen)
        prompt = app.query_one(Prompt)
        assert prompt.text == "two" and app.focused is prompt
        # The live conversation shown ends before "two".
        assert texts(app, UserBlock)[-1] == "one"
        # Resend, edited: the model sees the turns before "two" only.
        fake.add(text_reply("answer to two, again"))
        await send(pilot, app, "two, again")
        await settle(pilot, app)
        assert said(fake.generate_requests[-1]) == [
            ("user", "one"),
            ("model", "answer to one"),
            ("user", "two, again"),
        ]
        assert fake.generate_requests[-1].status == 200
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        kept = [m.event.text for m in await store.load_all() if isinstance(m.event, SessionEvent)]
    assert "three" in kept and "answer to three" in kept  # nothing deleted


async def test_f_in_the_list_forks_and_opens_the_fork(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        await talk(pilot, app, fake, "one", "two")
        assert app.store is not None
        source = app.store.session_id
        await open_list(pilot, app)
        await pilot.press("f")  # on the newest: "two"
        await settle(pilot, app)
        assert app.store.session_id != source
        assert app.query_one(Prompt).text == "two"
        assert any("Forked into session" in n for n in notices(app))
        assert texts(app, UserBlock) == ["one"]
        fake.add(text_reply("answer in the fork"))
        await send(pilot, app, "two, differently")
        await settle(pilot, app)
        first = fake.generate_requests[-1]
        assert first.status == 200  # the copied signatures are accepted
        assert said(first) == [
            ("user", "one"),
            ("model", "answer to one"),
            ("user", "two, differently"),
        ]
        model_parts = first.contents[1]["parts"]
        assert any("thoughtSignature" in part for part in model_parts)
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        original = await store.load_all(source)
    stored = [m.event.text for m in original if isinstance(m.event, SessionEvent)]
    assert stored[-1] == "answer to two"


async def test_f_on_the_first_message_then_quitting_leaves_no_session_behind(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        await talk(pilot, app, fake, "one")
        assert app.store is not None
        source = app.store.session_id
        await open_list(pilot, app)
        await pilot.press("f")  # on "one", the first message: nothing before it to copy
        await settle(pilot, app)
        assert app.store.session_id == source + 1
        assert any(f"Forked into session #{source + 1}" in n for n in notices(app))
        assert app.query_one(Prompt).text == "one"
        assert texts(app, UserBlock) == []
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        assert [s.id for s in await store.list_sessions()] == [source]
        # The fork's number was never used: the next conversation gets it.
        assert (await store.new_session()).id == source + 1


async def test_a_single_escape_still_cancels_a_running_turn(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(Hang())
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hello")
        await wait_until(pilot, lambda: fake.pending == 0, "the request reaching the model")
        await pilot.press("escape")
        await settle(pilot, app)
        assert not app.running
        assert not isinstance(app.screen, RewindScreen)
        # Right after the cancel, one more Escape is the first of a pair, not the second.
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, RewindScreen)


async def test_escapes_far_apart_do_not_open_the_list(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(main_screen, "DOUBLE_ESCAPE", 0.0)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await talk(pilot, app, fake, "one")
        await pilot.press("escape")
        await pilot.pause(0.01)  # past the (zero) double-Escape window
        await pilot.press("escape")
        await settle(pilot, app)
        assert not isinstance(app.screen, RewindScreen)


async def test_the_list_is_refused_while_a_turn_runs_and_closes_with_escape(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(Hang(then=text_reply("Hello.")))  # released: the turn ends at once
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hello")
        await wait_until(pilot, lambda: fake.pending == 0, "the request reaching the model")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert not isinstance(app.screen, RewindScreen)
        assert any("A turn is running" in n for n in notices(app))
        fake.release()
        await settle(pilot, app)
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen), "the list")
        await pilot.press("escape")
        await settle(pilot, app)
        assert not isinstance(app.screen, RewindScreen)
        assert app.focused is app.query_one(Prompt)
        assert app.query_one(Prompt).text == ""


async def test_hidden_characters_in_the_list_are_escaped(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await talk(pilot, app, fake, HOSTILE)
        (row,) = rows(await open_list(pilot, app))
        assert "look \\u202eevil\\u202c [bold]x[/]" in row and row.endswith("…")
        assert "\x1b" not in row and "\u202e" not in row and "second line" not in row


async def until_offered(pilot: Pilot[None], app: KorokuApp, title: str) -> None:
    results = app.screen.query_one(CommandList)

    def offered() -> list[str]:
        options = [results.get_option_at_index(i) for i in range(results.option_count)]
        return [str(option.prompt) for option in options]

    await wait_until(pilot, lambda: any(title in o for o in offered()), f"{title} offered")
    assert title in offered()[results.highlighted or 0]


@pytest.mark.parametrize(("typed", "title"), [("rew", "Rewind…"), ("fork", "Fork…")])
async def test_the_palette_offers_rewind_and_fork(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, typed: str, title: str
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await talk(pilot, app, fake, "one")
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*typed)
        await until_offered(pilot, app, title)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen), "the list")
        assert isinstance(app.screen, RewindScreen)
        assert app.screen.mode == ("rewind" if typed == "rew" else "fork")


async def test_fork_from_the_palette_at_the_end_copies_everything(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await talk(pilot, app, fake, "one")
        assert app.store is not None
        source = app.store.session_id
        app.main.action_fork()
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen), "the list")
        await settle(pilot, app)
        assert rows(app.screen)[0].startswith("Now: the whole conversation")  # type: ignore[arg-type]
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.store.session_id != source
        assert texts(app, UserBlock) == ["one"]
        assert app.query_one(Prompt).text == ""


# -- the history screen ------------------------------------------------------


async def open_history_at(pilot: Pilot[None], app: KorokuApp, text: str) -> HistoryScreen:
    """The history screen with the raw history's cursor on the row whose body is ``text``."""
    await pilot.press("ctrl+r")
    await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen), "the history")
    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, HistoryScreen)
    view = screen.detail.history
    (index,) = [
        i
        for i, m in enumerate(view.messages)
        if isinstance(m.event, SessionEvent) and m.event.text == text
    ]
    # With the keys, as a user does: letters act on a row only after a move.
    await move_to(pilot, view, index + (1 if view.has_older else 0))
    return screen


def history_lines(screen: HistoryScreen) -> list[str]:
    view = screen.detail.history
    return [
        view.get_option_at_index(i).prompt.plain  # type: ignore[union-attr]
        for i in range(view.option_count)
    ]


async def test_f_in_the_history_forks_after_an_answer_and_opens_the_fork(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        await talk(pilot, app, fake, "one", "two")
        assert app.store is not None
        source = app.store.session_id
        await open_history_at(pilot, app, "answer to one")
        await pilot.press("f")
        await settle(pilot, app)
        assert not isinstance(app.screen, HistoryScreen)
        assert app.store.session_id != source
        assert texts(app, UserBlock) == ["one"]
        assert app.query_one(Prompt).text == ""  # no message of the user's was cut off
        fake.add(text_reply("fork answer"))
        await send(pilot, app, "three")
        await settle(pilot, app)
        assert fake.generate_requests[-1].status == 200
        assert said(fake.generate_requests[-1]) == [
            ("user", "one"),
            ("model", "answer to one"),
            ("user", "three"),
        ]


async def test_f_in_the_history_on_a_message_forks_before_it(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await talk(pilot, app, fake, "one", "two")
        await open_history_at(pilot, app, "two")
        await pilot.press("f")
        await settle(pilot, app)
        assert texts(app, UserBlock) == ["one"]
        assert app.query_one(Prompt).text == "two"


async def test_the_history_marks_what_a_rewind_abandoned(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await talk(pilot, app, fake, "one", "two", "three")
        await open_list(pilot, app)
        await pilot.press("down", "enter")  # before "two"
        await settle(pilot, app)
        app.query_one(Prompt).text = ""
        screen = await open_history_at(pilot, app, "one")
        headings = [line.splitlines()[0] for line in history_lines(screen)]
        marked = [h for h in headings if "abandoned by rewind" in h]
        bodies = {
            m.event.text
            for m in screen.detail.history.messages
            if isinstance(m.event, SessionEvent)
        }
        assert {"two", "answer to two", "three", "answer to three"} <= bodies
        assert len(marked) == 4  # two, its answer, three, its answer
        assert not any("abandoned" in h for h in headings[:2])  # "one" and its answer


# -- snapshot -----------------------------------------------------------------


def test_snapshot_rewind_list(
    snapshot_home: Path,
    snap_compare: Callable[..., bool],
    monkeypatch: pytest.MonkeyPatch,
    fake_in_env: None,
) -> None:
    """Three messages at fixed times (UTC), the list open on the newest."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.setattr(branching, "local_now", lambda: datetime(2025, 6, 10, 12, tzinfo=UTC))
    import asyncio

    from google.genai import types

    async def seed() -> None:
        base = datetime(2025, 6, 10, 9, 0, tzinfo=UTC).timestamp()
        async with SessionManager(Settings(home=snapshot_home).database_path) as store:
            texts_ = ["plan the garden", "and basil?\nwith tomatoes", "[bold]markup[/] stays"]
            for n, text in enumerate(texts_):
                for role, said_ in (("user", text), ("model", f"answer {n}")):
                    content = types.Content(role=role, parts=[types.Part(text=said_)])
                    event = SessionEvent.from_content(content)
                    await store.add_message(event, base + n * 600 + (role == "model"))

    asyncio.run(seed())
    app = build(snapshot_home, None)

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot, app)
        app.query_one(Prompt).cursor_blink = False
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen), "the list")
        await settle(pilot, app)
        await steady(pilot)

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


async def test_f_on_an_abandoned_answer_never_forks_on_another_line(tmp_path: Path) -> None:
    # u1 a1 u2 a2, rewind to u2, u3 a3, rewind to u1: the spans merge into one,
    # yet u3 is not on a2's line (a fork before u3 would hold only u1 a1).
    async with SessionManager(tmp_path / "koroku.db") as store:
        u1 = await store.add_message(user("u1"))
        await store.add_message(model("a1"))
        u2 = await store.add_message(user("u2"))
        a2 = await store.add_message(model("a2"))
        await store.rewind(u2)
        u3 = await store.add_message(user("u3"))
        await store.add_message(model("a3"))
        await store.rewind(u1)
        rows = await store.load_all()
        moment = HistoryMoment(datetime.now(UTC), abandoned=tuple(await store.abandoned_spans()))
        on_a2 = fork_point(next(r for r in rows if r.id == a2), rows, moment)
        assert not (isinstance(on_a2, ForkPoint) and on_a2.before == u3)
        assert isinstance(on_a2, str) and "abandoned" in on_a2
        on_u2 = fork_point(next(r for r in rows if r.id == u2), rows, moment)
        assert isinstance(on_u2, ForkPoint) and on_u2.before == u2


async def test_a_rewind_to_an_early_message_shows_that_conversation(
    client: genai.Client, tmp_path: Path
) -> None:
    # 30 turns (120 rows, three pages), rewound to turn 2: the first page is
    # the conversation the model continues, not a marker above pages of
    # abandoned rows.
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        turns = [await add_turn(store, n) for n in range(30)]
        await store.rewind(turns[2])
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert texts(app, UserBlock) == ["question 0", "question 1"]
        assert len(app.query_one(ToolSidebar).rows()) == 2


async def test_the_sidebar_lists_the_calls_of_the_line_only(
    client: genai.Client, tmp_path: Path
) -> None:
    # Turns 0-9, rewound to 5, then turns 10-29: the page shows the newest
    # turns; the calls older than it are those of turns 0-4 and 10-19 (the
    # abandoned 5-9 are no longer the conversation).
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        turns = [await add_turn(store, n) for n in range(10)]
        await store.rewind(turns[5])
        for n in range(10, 30):
            await add_turn(store, n)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await wait_until(
            pilot, lambda: app.query_one(ToolSidebar).row_count >= 25, "the earlier calls"
        )
        await settle(pilot, app)
        assert app.query_one(ToolSidebar).row_count == 25


async def add_turn(store: SessionManager, n: int) -> int:
    """A question, a tool call and its result, an answer; the question's id."""
    asked = await store.add_message(user(f"question {n}"))
    await store.add_message(call("run_command", command=f"ls {n}"))
    await store.add_message(result("run_command", f"listing {n}"))
    await store.add_message(model(f"answer {n}"))
    return asked
