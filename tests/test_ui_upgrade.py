"""The first start after an upgrade: a slow migration shows its progress, then the conversation.

The database is a real file of the previous schema version: built with the
real migrations, then one slow step is appended to ``MIGRATIONS`` (and
``SCHEMA_VERSION`` moved with it) that reports progress and waits on an
event the test sets.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, plain, seed_session, settle, wait_until
from textual.widget import Widget
from textual.widgets import Static

from koroku_tui.store import opening
from koroku_tui.store import schema as schema_module
from koroku_tui.store.schema import MigrationProgress
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.blocks import AnswerBlock, UserBlock
from koroku_tui.ui.main.screen import MainScreen
from koroku_tui.ui.main.upgrade import UpgradeScreen


class SlowMigration:
    """A migration step appended for the test: reports 45%, then waits for ``release``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, fail: bool = False) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.fail = fail
        self._progress: list[MigrationProgress | None] = []
        real_migrate = schema_module.migrate

        def migrate(conn: sqlite3.Connection, progress: MigrationProgress | None = None) -> int:
            self._progress.append(progress)  # the callback the app gave initialize()
            return real_migrate(conn, progress)

        steps = (*schema_module.MIGRATIONS, self.step)
        monkeypatch.setattr(schema_module, "MIGRATIONS", steps)
        monkeypatch.setattr(schema_module, "SCHEMA_VERSION", len(steps))
        monkeypatch.setattr(opening, "SCHEMA_VERSION", len(steps))
        monkeypatch.setattr(opening, "migrate", migrate)

    def step(self, conn: sqlite3.Connection, *_: object) -> None:
        progress = self._progress[-1]
        assert progress is not None, "the app opened the store without a progress callback"
        progress(0, 200)
        progress(90, 200)
        self.started.set()
        if not self.release.wait(timeout=30):
            raise AssertionError("the test never released the migration")
        if self.fail:
            raise sqlite3.OperationalError("disk I/O error")
        progress(200, 200)


async def wait_for(event: threading.Event) -> None:
    if not await asyncio.to_thread(event.wait, 30):
        raise AssertionError("the migration step never started")


def shown(app: KorokuApp, kind: type[Widget]) -> list[str]:
    """The plain text of every ``kind`` on the screen the user sees."""
    return [plain(w) for w in app.screen.query(kind)]


def line_of(screen: UpgradeScreen) -> Static:
    return screen.query_one("#upgrade-progress", Static)


async def test_a_slow_migration_shows_its_progress_then_the_newest_page(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed_session(tmp_path, 2)  # a file of today's version, which the patch makes old
    slow = SlowMigration(monkeypatch)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, UpgradeScreen)  # a first frame before the store opens
        await wait_for(slow.started)
        assert app.store is None
        await asyncio.wait_for(screen.revealed.wait(), 30)
        line = line_of(screen)

        def shows_45() -> bool:
            return plain(line) == "Updating the search index… 45%"

        await wait_until(pilot, shows_45, "the progress line saying 45%")
        assert line.visible and line.region.width > 0
        slow.release.set()
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)
        # app.query would look under the progress screen (the bottom of the stack).
        assert shown(app, UserBlock) == ["question 0", "question 1"]
        assert shown(app, AnswerBlock)[-1].strip() == "answer 1"
        assert app.agent is not None and app.problem is None


async def test_a_quick_migration_shows_no_progress_line(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed_session(tmp_path, 1)
    slow = SlowMigration(monkeypatch)
    slow.release.set()  # the step does not wait
    # Generous: the line must not flash for a migration well under the delay,
    # even on a loaded machine.
    monkeypatch.setattr(UpgradeScreen, "REVEAL_AFTER", 10.0)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, UpgradeScreen)
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)
        assert not screen.revealed.is_set()
        assert shown(app, UserBlock) == ["question 0"]


async def test_a_failed_migration_says_so_in_one_sentence(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed_session(tmp_path, 1)
    slow = SlowMigration(monkeypatch, fail=True)
    slow.release.set()
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)
        banner = plain(app.screen.query_one("#banner", Static))
        assert "koroku.db" in banner and "Traceback" not in banner
        assert app.problem == banner and app.store is None and app.agent is None
