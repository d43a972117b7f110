"""The history screen against a real SessionManager on a temporary SQLite file.

The database holds three sessions with fixed timestamps (a tool call and
response with FCMetadata, a failed tool call, a compaction that hides older
turns, a row with broken JSON written behind the store's back, and hostile
text), and the screen's clock is fixed, so what it shows does not depend on
the day the tests run.
"""

from __future__ import annotations

import asyncio
import html
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers.events import model, user
from helpers.history_kit import move_to
from helpers.ui_kit import settle
from rich.text import Text
from textual.app import App, ComposeResult
from textual.notifications import SeverityLevel
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static, TextArea

import koroku_tui.store.manager.core as store_core
from koroku_tui.events import (
    CompactionEvent,
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
)
from koroku_tui.store import SessionManager, StoreReadError
from koroku_tui.ui.history import (
    ConfirmDialog,
    HistoryScreen,
    OpenSession,
    RenameDialog,
    SessionDeleted,
    SessionRenamed,
    TextReader,
)
from koroku_tui.ui.history.browser import SessionBrowser
from koroku_tui.ui.history.lists import SearchResults, SessionList, SummaryList

NOW = datetime(2025, 6, 10, 12, 0, tzinfo=UTC)
HOSTILE = "[bold red]x[/] [link=file:///etc/passwd]y[/link] \x1b]0;title\x07 \x1b[2J done"
HOSTILE_SHOWN = "[bold red]x[/] [link=file:///etc/passwd]y[/link]"


def fixed_clock() -> datetime:
    return NOW


def at(days: float = 0, minutes: float = 0) -> float:
    return (NOW - timedelta(days=days, minutes=minutes)).timestamp()


def call(name: str, **args: Any) -> SessionEvent:
    part = FunctionCallPart(function_call=FunctionCallData(name=name, args=args, id="c1"))
    return SessionEvent(role="model", parts=[part])


def response(name: str, result: dict[str, Any], **args: Any) -> SessionEvent:
    part = FunctionResponsePart(
        function_response=FunctionResponseData(name=name, response=result, id="c1"),
        fc_metadata=FCMetadata(name=name, args=args),
    )
    return SessionEvent(role="user", parts=[part])


class StoreClock:
    """Stands in for the ``time`` module of the store's clock, which stamps new sessions."""

    def __init__(self) -> None:
        self.now = at(days=30)

    def time(self) -> float:
        return self.now


@dataclass
class Fixture:
    garden: int
    hostile: int
    kyoto: int
    hidden_id: int
    compaction_id: int
    broken_id: int


async def fill(manager: SessionManager, clock: StoreClock) -> Fixture:
    """Three sessions: the garden (tools, compaction, broken row), hostile text, Kyoto."""
    clock.now = at(days=3, minutes=30)
    garden = (await manager.new_session()).id
    add = manager.add_message
    hidden_id = await add(user("How should I plan the tomato garden?"), at(days=3, minutes=30))
    await add(model("Start with the soil.", thought="Think about sun."), at(days=3, minutes=29))
    await add(call("read_file", path="garden.txt"), at(days=3, minutes=28))
    await add(response("read_file", {"output": "rows: 4"}, path="garden.txt"), at(3, 27))
    kept = await add(model("Four rows of tomatoes fit."), at(days=3, minutes=26))
    summary = CompactionEvent.from_summary(
        "The user plans a tomato garden.\nFour rows fit.\nSoil first.", kept_from_id=kept
    )
    compaction_id = await add(summary, at(days=3, minutes=20))
    await add(user("And basil?"), at(days=3, minutes=10))
    with closing(sqlite3.connect(manager.path, isolation_level=None)) as other:
        broken_id = other.execute(
            "INSERT INTO messages(session_id, kind, event_json, created_at) "
            "VALUES (?, 'session', '{not json', ?) RETURNING id",
            (garden, at(days=3, minutes=5)),
        ).fetchone()[0]

    clock.now = at(days=1)
    hostile = (await manager.new_session()).id
    await add(user(HOSTILE), at(days=1))
    await add(model("echo " + HOSTILE), at(days=1, minutes=-1))
    await add(response("shell", {"error": "no " + HOSTILE}, cmd=HOSTILE), at(days=1, minutes=-2))

    clock.now = at(minutes=90)
    kyoto = (await manager.new_session()).id
    await add(user("Plan a weekend trip to Kyoto with tomato ramen"), at(minutes=90))
    await add(model("Day one: Fushimi Inari."), at(minutes=89))
    return Fixture(garden, hostile, kyoto, hidden_id, compaction_id, broken_id)


async def open_store(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SessionManager, Fixture]:
    clock = StoreClock()
    monkeypatch.setattr(store_core, "time", clock)
    manager = SessionManager(path)
    await manager.initialize()
    # initialize()'s new session is stored with a first message only: never listed.
    ids = await fill(manager, clock)  # leaves the newest session (Kyoto) current
    return manager, ids


class HostApp(App[None]):
    """A minimal App that pushes the history screen and records what it reports."""

    def __init__(
        self,
        manager: SessionManager | None,
        current: int | None,
        *,
        db_path: Path | None = None,
        export_dir: Path | None = None,
        grace: float | None = 0.0,
    ) -> None:
        super().__init__()
        self.grace = grace
        """The confirmations' quiet time: none by default here, the real one (None) to test it."""
        self.manager = manager
        self.current = current
        self.db_path = db_path
        self.export_dir = export_dir
        self.results: list[OpenSession | None] = []
        self.deleted: list[SessionDeleted] = []
        self.renamed: list[SessionRenamed] = []
        self.notices: list[tuple[str, str]] = []
        self.own_manager: SessionManager | None = None

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        self.notices.append((message, severity))
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def compose(self) -> ComposeResult:
        yield Static("main screen")

    async def on_mount(self) -> None:
        if self.manager is None:
            assert self.db_path is not None
            self.manager = self.own_manager = SessionManager(self.db_path, session_id=self.current)
            await self.manager.initialize()
        screen = HistoryScreen(
            self.manager,
            self.current,
            export_dir=self.export_dir,
            clock=fixed_clock,
            grace=self.grace,
        )
        self.push_screen(screen, self.results.append)

    async def on_unmount(self) -> None:
        if self.own_manager is not None:
            await self.own_manager.close()

    def on_session_deleted(self, message: SessionDeleted) -> None:
        self.deleted.append(message)

    def on_session_renamed(self, message: SessionRenamed) -> None:
        self.renamed.append(message)


def lines(widget: Widget) -> list[str]:
    """The widget's visible lines as rendered (what the terminal would show)."""
    return [widget.render_line(y).text.rstrip() for y in range(widget.size.height)]


_SVG_TEXT = re.compile(r'<text [^>]*?x="([\d.]+)"[^>]*?line-(\d+)\)">([^<]*)</text>')


def screen_text(app: App[Any]) -> str:
    """The whole screen as lines of text, rebuilt from the SVG screenshot's cells."""
    rows: dict[int, dict[int, str]] = {}
    for x, row, chunk in _SVG_TEXT.findall(app.export_screenshot()):
        column = round(float(x) / 12.2) - 1
        for offset, char in enumerate(html.unescape(chunk).replace("\xa0", " ")):
            rows.setdefault(int(row), {})[column + offset] = char
    return "\n".join(
        "".join(cells.get(i, " ") for i in range(max(cells) + 1)).rstrip()
        for _, cells in sorted(rows.items())
    )


@pytest.fixture
async def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    manager, ids = await open_store(tmp_path / "koroku.db", monkeypatch)
    yield manager, ids
    await manager.close()


Run = Callable[..., Any]


@pytest.fixture
def run(store: tuple[SessionManager, Fixture], tmp_path: Path) -> Iterator[Run]:
    manager, ids = store

    def start(**kwargs: Any) -> Any:
        app = HostApp(manager, ids.kyoto, export_dir=tmp_path, **kwargs)
        return app.run_test(size=(120, 40))

    yield start


def history_screen(app: App[Any]) -> HistoryScreen:
    assert isinstance(app.screen, HistoryScreen)
    return app.screen


def option_texts(widget: OptionList) -> list[str]:
    return [str(getattr(option.prompt, "plain", option.prompt)) for option in widget.options]


async def select_session(pilot: Pilot[Any], session_id: int) -> HistoryScreen:
    """Move the session list's cursor onto ``session_id`` with the keys, as a user does."""
    screen = history_screen(pilot.app)
    await move_to(pilot, screen.sessions, screen.sessions.get_option_index(f"session-{session_id}"))
    await settle(pilot)
    assert screen.detail.session is not None and screen.detail.session.id == session_id
    return screen


# -- the session list --------------------------------------------------------


async def test_sessions_newest_first_with_counts_and_current_marked(run: Run) -> None:
    async with run() as pilot:
        await settle(pilot)
        shown = lines(history_screen(pilot.app).sessions)
        # The cursor's ▶ has a column of its own, apart from the current session's ●.
        assert shown[:6] == [
            "▶ ● Plan a weekend trip to Kyoto with tomato…",
            "    10:31 · 2 messages · current",
            "    [bold red]x[/] [link=file:///etc/passwd]…",
            "    yesterday 12:02 · 3 messages",
            "    How should I plan the tomato garden?",
            "    Sat 11:50 · 7 messages · 1 summary",
        ]
        await pilot.press("down")
        await settle(pilot)
        shown = lines(history_screen(pilot.app).sessions)
        assert [line[:4] for line in shown[:6]] == ["  ● ", "    ", "▶   ", "    ", "    ", "    "]


async def test_the_cursor_row_is_reversed_where_keys_act_on_it(run: Run) -> None:
    """Not only a tint next to the ●: the focused list's cursor row swaps its colours."""
    async with run() as pilot:
        await settle(pilot)
        sessions = history_screen(pilot.app).sessions
        assert sessions.has_focus
        cursor = sessions.get_visual_style("option-list--option", "option-list--option-highlighted")
        row = sessions.get_visual_style("option-list--option")
        assert cursor.foreground is not None and row.foreground is not None
        assert cursor.background == row.foreground  # a light block on a dark list
        assert cursor.foreground.brightness < 0.5 < row.foreground.brightness


async def test_sessions_load_a_page_at_a_time(tmp_path: Path) -> None:
    async with SessionManager(tmp_path / "many.db") as manager:
        for number in range(250):
            await manager.new_session()
            await manager.add_message(user(f"session number {number}"))
        app = HostApp(manager, manager.session_id)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            sessions = history_screen(app).sessions
            assert sessions.option_count == SessionBrowser.PAGE_SIZE
            assert "session number 249" in option_texts(sessions)[0]  # newest first
            sessions.scroll_end(animate=False, immediate=True)  # reaching the end by scrolling
            await settle(pilot)
            assert sessions.option_count == 2 * SessionBrowser.PAGE_SIZE
            await pilot.press("end")  # and by keyboard
            await settle(pilot)
            assert sessions.option_count == 250 and sessions.exhausted
            # Oldest last (initialize()'s new session, never sent to, is not listed).
            assert "session number 0" in option_texts(sessions)[-1]
            assert "250 sessions" in lines(app.screen.query_one("#history-status"))[0]


# -- search --------------------------------------------------------------------


async def test_search_finds_a_word_across_sessions_and_jumps_to_the_hit(
    run: Run, store: tuple[SessionManager, Fixture]
) -> None:
    ids = store[1]
    async with run() as pilot:
        await settle(pilot)
        screen = history_screen(pilot.app)
        await pilot.press("slash", *"tomato")
        await settle(pilot)
        results = screen.query_one(SearchResults)
        assert results.display and not screen.sessions.display
        hits = results.hits
        assert {hit.session_id for hit in hits} == {ids.garden, ids.kyoto}
        assert any(hit.kind == "compaction" for hit in hits)  # summaries are searched too
        # The match is highlighted in the rendered snippet.
        garden_hit = next(i for i, hit in enumerate(hits) if hit.message_id == ids.hidden_id)
        prompt = results.get_option_at_index(garden_hit).prompt
        assert isinstance(prompt, Text)
        assert any(
            prompt.plain[span.start : span.end].lower() == "tomato" and "reverse" in str(span.style)
            for span in prompt.spans
        )
        results.focus()
        results.highlighted = garden_hit
        await pilot.press("enter")
        await settle(pilot)
        assert screen.detail.session is not None and screen.detail.session.id == ids.garden
        view = screen.detail.history
        assert view.has_focus
        target = view.message_at(view.highlighted)
        assert target is not None and target.id == ids.hidden_id
        await pilot.press("escape")  # clears the search, back to the session list
        await settle(pilot)
        assert screen.sessions.display and not results.display
        assert isinstance(pilot.app.screen, HistoryScreen)


async def test_a_search_with_more_hits_than_listed_says_how_many(tmp_path: Path) -> None:
    async with SessionManager(tmp_path / "many.db") as manager:
        await manager.add_messages([user(f"tomato note {n}") for n in range(130)])
        app = HostApp(manager, manager.session_id)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("slash", *"tomato")
            await settle(pilot)
            status = lines(app.screen.query_one("#history-status"))[0]
            assert status == "Showing the best 100 of 130 matches"
            assert len(app.screen.query_one(SearchResults).hits) == 100


async def test_search_with_no_match_says_so(run: Run) -> None:
    async with run() as pilot:
        await settle(pilot)
        await pilot.press("slash", *"zebra")
        await settle(pilot)
        status = lines(pilot.app.screen.query_one("#history-status"))[0]
        assert status == "No matches for “zebra”."


# -- summaries and raw history ---------------------------------------------


async def test_summaries_are_listed_with_their_times_and_read_whole(
    run: Run, store: tuple[SessionManager, Fixture]
) -> None:
    ids = store[1]
    async with run() as pilot:
        await settle(pilot)
        screen = await select_session(pilot, ids.garden)
        summaries = screen.query_one(SummaryList)
        assert summaries.display
        shown = lines(summaries)
        assert shown[0].startswith(f"  2025-06-07 11:40 · summary #{ids.compaction_id}")
        assert shown[1].startswith("  The user plans a tomato garden.")
        summaries.focus()
        await pilot.pause()
        await pilot.press("space")
        await pilot.pause()
        assert isinstance(pilot.app.screen, TextReader)
        body = pilot.app.screen.query_one(TextArea).text
        assert body == "The user plans a tomato garden.\nFour rows fit.\nSoil first."
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(pilot.app.screen, HistoryScreen)


async def test_raw_history_shows_what_compaction_hid_and_unreadable_rows(
    run: Run, store: tuple[SessionManager, Fixture]
) -> None:
    ids = store[1]
    async with run() as pilot:
        await settle(pilot)
        screen = await select_session(pilot, ids.garden)
        text = "\n".join(option_texts(screen.detail.history))
        assert f"#{ids.hidden_id} you  2025-06-07 11:30  · hidden from model" in text
        assert "How should I plan the tomato garden?" in text
        assert "thought: Think about sun.\nStart with the soil." in text
        assert '→ call read_file {"path": "garden.txt"}' in text
        assert '✓ read_file {"path": "garden.txt"}\nrows: 4' in text
        assert "── earlier turns summarised for the model; kept verbatim from #" in text
        assert f"unreadable message #{ids.broken_id}: invalid JSON" in text
        assert "And basil?" in text
        # The newest row is on screen (the tail is shown first).
        assert any("unreadable message" in line for line in lines(screen.detail.history))


async def test_a_failed_tool_call_shows_a_cross(
    run: Run, store: tuple[SessionManager, Fixture]
) -> None:
    async with run() as pilot:
        await settle(pilot)
        screen = await select_session(pilot, store[1].hostile)
        assert any(line.startswith("  ✗ shell") for line in lines(screen.detail.history))


async def test_history_loads_older_pages_on_demand(tmp_path: Path) -> None:
    async with SessionManager(tmp_path / "long.db") as manager:
        for number in range(250):
            await manager.add_message(user(f"message {number}"))
        app = HostApp(manager, manager.session_id)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            view = history_screen(app).detail.history
            assert len(view.messages) == 100 and view.has_older
            assert "message 249" in option_texts(view)[-1]
            await pilot.press("home", "l")  # the key, once in the list (else it is searched for)
            await settle(pilot)
            assert len(view.messages) == 200
            view.focus()
            await pilot.press("home")  # reaching the top
            await settle(pilot)
            assert len(view.messages) == 250 and not view.has_older
            assert "message 0" in option_texts(view)[0]


# -- actions -----------------------------------------------------------------


async def test_enter_opens_the_selected_session(
    run: Run, store: tuple[SessionManager, Fixture]
) -> None:
    async with run() as pilot:
        await settle(pilot)
        await select_session(pilot, store[1].garden)
        await pilot.press("enter")
        await pilot.pause()
        app = pilot.app
        assert isinstance(app, HostApp)
        assert app.results == [OpenSession(store[1].garden)]
        assert not isinstance(app.screen, HistoryScreen)


async def test_escape_closes_with_no_result(run: Run) -> None:
    async with run() as pilot:
        await settle(pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(pilot.app, HostApp) and pilot.app.results == [None]


async def test_a_click_shows_a_session_and_a_double_click_opens_it(
    run: Run, store: tuple[SessionManager, Fixture]
) -> None:
    async with run() as pilot:
        await settle(pilot)
        screen = history_screen(pilot.app)
        await pilot.click(SessionList, offset=(5, 4))  # third row pair: the garden
        await settle(pilot)
        assert screen.detail.session is not None and screen.detail.session.id == store[1].garden
        assert isinstance(pilot.app.screen, HistoryScreen)
        await pilot.click(SessionList, offset=(5, 4), times=2)
        await pilot.pause()
        assert isinstance(pilot.app, HostApp)
        assert pilot.app.results == [OpenSession(store[1].garden)]


async def test_rename_updates_the_list_and_tells_the_app(
    run: Run, store: tuple[SessionManager, Fixture]
) -> None:
    manager, ids = store
    async with run() as pilot:
        await settle(pilot)
        screen = await select_session(pilot, ids.garden)
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(pilot.app.screen, RenameDialog)
        pilot.app.screen.query_one(Input).value = "Tomatoes [b]and[/b] basil"
        await pilot.press("enter")
        await settle(pilot)
        assert (await manager.get_session(ids.garden)).title == "Tomatoes [b]and[/b] basil"
        assert "▶   Tomatoes [b]and[/b] basil" in lines(screen.sessions)
        assert isinstance(pilot.app, HostApp)
        assert [m.info.title for m in pilot.app.renamed] == ["Tomatoes [b]and[/b] basil"]


async def test_rename_cancelled_changes_nothing(
    run: Run, store: tuple[SessionManager, Fixture]
) -> None:
    manager, ids = store
    async with run() as pilot:
        await settle(pilot)
        await select_session(pilot, ids.garden)
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("x", "escape")
        await settle(pilot)
        title = (await manager.get_session(ids.garden)).title
        assert title == "How should I plan the tomato garden?"


async def test_delete_asks_first_and_cancel_keeps_the_session(
    run: Run, store: tuple[SessionManager, Fixture]
) -> None:
    manager, ids = store
    async with run() as pilot:
        await settle(pilot)
        screen = await select_session(pilot, ids.garden)
        await pilot.press("d")
        await pilot.pause()
        dialog = pilot.app.screen
        assert isinstance(dialog, ConfirmDialog)
        question = " ".join(" ".join(lines(dialog.query_one(Static))).split())
        assert question == (
            "Move “How should I plan the tomato garden?” and its 7 messages to the trash? "
            "Nothing is lost: ctrl+t shows the trash, where Enter restores it."
        )
        await pilot.press("enter")  # the focused button is Cancel
        await settle(pilot)
        assert (await manager.get_session(ids.garden)).trashed_at is None
        assert screen.sessions.option_count == 3

        await pilot.press("d")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert [s.id for s in await manager.list_sessions()] == [ids.kyoto, ids.hostile]
        assert [s.id for s in await manager.list_trash()] == [ids.garden]
        assert screen.sessions.option_count == 2
        assert isinstance(pilot.app, HostApp)
        [deleted] = pilot.app.deleted
        assert (deleted.session_id, deleted.was_current, deleted.replacement_id) == (
            ids.garden,
            False,
            None,
        )
        assert screen.detail.session is not None and screen.detail.session.id != ids.garden
        assert pilot.app.notices[-1] == (
            "Moved “How should I plan the tomato garden?” to the trash: ctrl+t shows it, "
            "Enter there restores it.",
            "information",
        )


async def test_deleting_the_current_session_reports_its_replacement(
    run: Run, store: tuple[SessionManager, Fixture]
) -> None:
    manager, ids = store
    async with run() as pilot:
        await settle(pilot)
        screen = await select_session(pilot, ids.kyoto)
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(pilot.app, HostApp)
        [deleted] = pilot.app.deleted
        assert deleted.session_id == ids.kyoto and deleted.was_current
        assert deleted.replacement_id == manager.session_id != ids.kyoto
        # The fresh session is stored with its first message: the list holds the others.
        assert "Untitled" not in "\n".join(lines(screen.sessions))
        assert lines(screen.sessions)[0].startswith("▶   [bold red]x[/]")


async def test_export_writes_markdown_and_says_where(
    run: Run, store: tuple[SessionManager, Fixture], tmp_path: Path
) -> None:
    ids = store[1]
    async with run() as pilot:
        await settle(pilot)
        await select_session(pilot, ids.garden)
        await pilot.press("e")
        await settle(pilot)
        path = tmp_path / f"how-should-i-plan-the-tomato-garden-{ids.garden}.md"
        text = path.read_text(encoding="utf-8")
        assert text.startswith("# How should I plan the tomato garden?\n")
        assert "## Compaction summary" in text and "## Unreadable message" in text
        assert isinstance(pilot.app, HostApp)
        assert pilot.app.notices == [(f"Exported to {path}", "information")]


async def test_export_without_a_folder_says_the_full_path_and_why_there(
    store: tuple[SessionManager, Fixture], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager, ids = store
    started_in = tmp_path / "project"
    started_in.mkdir()
    monkeypatch.chdir(started_in)
    app = HostApp(manager, ids.kyoto, export_dir=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("home", "e")  # on the current session
        await settle(pilot)
        [(message, severity)] = app.notices
        [written] = started_in.iterdir()
        assert severity == "information" and written.is_absolute()
        assert message == f"Exported to {written} (the folder Koroku was started in)"


async def test_export_to_a_missing_folder_is_reported(
    store: tuple[SessionManager, Fixture], tmp_path: Path
) -> None:
    manager, ids = store
    missing = tmp_path / "missing"
    app = HostApp(manager, ids.kyoto, export_dir=missing)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("home", "e")  # on the current session
        await settle(pilot)
        [(message, severity)] = app.notices
        assert severity == "error"
        assert message.startswith(f"Could not export to {missing}: No such file or directory.")


async def test_typing_in_the_search_box_never_triggers_actions(run: Run) -> None:
    async with run() as pilot:
        await settle(pilot)
        await pilot.press("slash", *"red", "enter")  # r, e, d: rename, export, delete keys
        await settle(pilot)
        assert isinstance(pilot.app, HostApp)
        assert isinstance(pilot.app.screen, HistoryScreen)  # no dialog opened
        assert pilot.app.notices == [] and pilot.app.deleted == []
        assert pilot.app.screen.query_one(SearchResults).has_focus  # enter moved to the hits


async def test_store_errors_become_notifications(
    run: Run, store: tuple[SessionManager, Fixture], monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = store[0]

    async def broken_search(*args: Any, **kwargs: Any) -> Any:
        raise StoreReadError(manager.path, "database disk image is malformed")

    monkeypatch.setattr(manager, "search", broken_search)
    async with run() as pilot:
        await settle(pilot)
        await pilot.press("slash", *"tomato")
        await settle(pilot)
        assert isinstance(pilot.app, HostApp)
        # One notice per search that ran: on a slow machine keystrokes can
        # outlast the debounce, so there may be more than one.
        assert pilot.app.notices
        for message, severity in pilot.app.notices:
            assert severity == "error" and message.startswith("Koroku could not read")
            assert "database disk image is malformed" in message
        assert isinstance(pilot.app.screen, HistoryScreen)  # still usable


# -- hostile text ----------------------------------------------------------------


def assert_harmless(text: str) -> None:
    """No control character reached the screen (newlines separate lines here)."""
    assert not [ch for ch in text if ch != "\n" and (ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0)]


async def test_hostile_text_is_shown_literally_everywhere(
    run: Run, store: tuple[SessionManager, Fixture]
) -> None:
    ids = store[1]
    async with run() as pilot:
        await settle(pilot)
        screen = await select_session(pilot, ids.hostile)
        shown = screen_text(pilot.app)
        assert_harmless(shown)
        # The list and the heading show the (derived, clipped) title literally.
        assert "▶   [bold red]x[/] [link=file:///etc/passwd]…" in lines(screen.sessions)
        heading = lines(screen.query_one("#session-heading"))[0]
        assert heading.startswith(HOSTILE_SHOWN)
        # The history: markup literal, escape sequences gone without a trace.
        history = [line.removeprefix("  ") for line in lines(screen.detail.history)]
        assert f"{HOSTILE_SHOWN}   done" in history
        assert f"echo {HOSTILE_SHOWN}   done" in history
        assert f"error: no {HOSTILE_SHOWN}   done" in history
        # Arguments are JSON: the escape shows as the harmless text "\u001b".
        assert any(line.startswith('✗ shell {"cmd": "[bold red]x[/]') for line in history)
        # Search results.
        await pilot.press("slash", *"passwd")
        await settle(pilot)
        results = lines(screen.query_one(SearchResults))
        assert any("[link=file:///etc/passwd]y[/link]" in line for line in results)
        # The snippet ends inside the title sequence, before its BEL: cut,
        # it is no sequence, so only its ESC ] goes and "0;title" is text.
        assert "] 0;title…" in "".join(results)
        assert_harmless(screen_text(pilot.app))


# -- snapshot --------------------------------------------------------------------


def test_history_screen_snapshot(
    snap_compare: Callable[..., bool], snapshot_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The garden session selected: list, heading, summary and raw history (fixed clock)."""
    path = snapshot_home / "koroku.db"

    async def build() -> Fixture:
        manager, ids = await open_store(path, monkeypatch)
        await manager.close()
        return ids

    ids = asyncio.run(build())

    async def show_garden(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await select_session(pilot, ids.garden)

    app = HostApp(None, ids.kyoto, db_path=path)
    assert snap_compare(app, terminal_size=(120, 40), run_before=show_garden)
