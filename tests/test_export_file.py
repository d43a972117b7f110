"""The export file: always a new private file, never written through what sits at its name.

A real session in real SQLite is exported into a folder where something
(``hostile/export_targets.py``) already has the export's file name.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.events import user
from hostile.export_targets import PLANTED

from koroku_tui.store import SessionManager
from koroku_tui.store.export import export_filename
from koroku_tui.ui.history.exporting import export_session

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
async def store(store: SessionManager) -> SessionManager:
    """The suite's store, holding one user message ("hello")."""
    await store.add_message(user("hello"))
    return store


@pytest.fixture
def loose_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def plant(what: str, at: Path, outside: Path) -> None:
    if what == "symlink":
        outside.write_text("precious\n")
        at.symlink_to(outside)
    elif what == "dangling symlink":
        at.symlink_to(outside)
    elif what == "earlier export":
        at.write_text("the earlier export\n")
    elif what == "fifo":
        os.mkfifo(at)


@pytest.mark.usefixtures("loose_umask")
@pytest.mark.parametrize("what", PLANTED)
async def test_an_export_never_writes_through_what_has_its_name(
    store: SessionManager, tmp_path: Path, what: str
) -> None:
    folder, outside = tmp_path / "work", tmp_path / "outside.txt"
    folder.mkdir()
    name = export_filename(await store.get_session(store.session_id))
    taken = folder / name
    plant(what, taken, outside)
    before = os.lstat(taken)

    path = await export_session(store, store.session_id, folder)

    assert path == folder / name.replace(".md", "-2.md")
    assert "hello" in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    after = os.lstat(taken)  # what was there is untouched
    assert (after.st_ino, after.st_mode, after.st_size) == (
        before.st_ino,
        before.st_mode,
        before.st_size,
    )
    if what == "symlink":
        assert outside.read_text() == "precious\n"
    if what == "dangling symlink":
        assert not outside.exists()


@pytest.mark.usefixtures("loose_umask")
async def test_an_export_is_private(store: SessionManager, tmp_path: Path) -> None:
    path = await export_session(store, store.session_id, tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
