"""One mode for everything Koroku makes in its home, and never a chmod of what it did not make.

``KOROKU_HOME=$HOME``, a shared folder or ``/etc`` under root were chmod'ed
0700 at start (dropping sticky and setgid bits); ``unsent.txt`` was 0644 and
``demo/`` 0755 while the rest was 0600/0700. Now the home folder keeps its
mode (a one-line warning when other users can read it), and Koroku's own
entries in it are 0600/0700.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from google import genai
from helpers.processes import KOROKU
from helpers.ui_kit import build, settle

from koroku_tui.config.settings import Settings
from koroku_tui.modes.demo import DEMO_DIRNAME, demo_app
from koroku_tui.privacy.file_modes import home_warning, tighten_home
from koroku_tui.privacy.logs import LOG_FILENAME


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[Path]:
    """A folder other users can reach: in the system's temporary folder (1777), not tmp_path."""
    folder = Path(tempfile.mkdtemp(prefix="koroku-shared-", dir=tempfile.gettempdir()))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def no_key_environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env["KOROKU_HOME"] = str(home)
    return env


@pytest.mark.parametrize("home_mode", [0o1777, 0o2775, 0o755])
def test_an_existing_home_keeps_its_mode_and_gets_one_warning_line(
    shared: Path, home_mode: int
) -> None:
    assert KOROKU is not None
    home = shared / "home"
    home.mkdir()
    home.chmod(home_mode)  # sticky, setgid: the user's, never Koroku's to drop
    done = subprocess.run(
        [KOROKU, "--print", "hello"],
        env=no_key_environment(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1  # no key: stops after the start-up
    assert mode(home) == home_mode
    warnings = [line for line in done.stderr.splitlines() if "Koroku home" in line]
    assert warnings == [
        f"koroku-tui: The Koroku home {home} is open to other users (mode {home_mode:o}); "
        "Koroku leaves a folder it did not make as it is: chmod go-rwx it to keep your "
        "conversations private."
    ]
    assert warnings[0].removeprefix("koroku-tui: ") in (home / LOG_FILENAME).read_text()
    assert mode(home / LOG_FILENAME) == 0o600


async def test_the_app_says_it_in_one_notice(client: genai.Client, shared: Path) -> None:
    os.chmod(shared, 0o2775)
    app = build(shared, client)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        said = [str(n.message) for n in app._notifications if "Koroku home" in str(n.message)]
        assert said == [home_warning(shared)]
    assert mode(shared) == 0o2775


def test_a_home_koroku_makes_is_0700_and_draws_no_warning(shared: Path) -> None:
    assert KOROKU is not None
    previous = os.umask(0o022)
    try:
        done = subprocess.run(
            [KOROKU, "--print", "hello"],
            env=no_key_environment(shared / "new-home"),
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        os.umask(previous)
    assert mode(shared / "new-home") == 0o700
    assert "Koroku home" not in done.stderr


def test_a_home_others_cannot_reach_draws_no_warning(tmp_path: Path, shared: Path) -> None:
    home = tmp_path / "closed" / "home"
    home.mkdir(parents=True)
    home.chmod(0o755)
    (tmp_path / "closed").chmod(0o700)  # no one else passes through
    assert home_warning(home) is None
    private = shared / "private"
    private.mkdir(mode=0o700)
    assert home_warning(private) is None
    private.chmod(0o750)
    assert home_warning(private) is not None  # the group reaches /tmp and reads it


def test_only_koroku_s_own_entries_are_tightened(shared: Path, tmp_path: Path) -> None:
    home = shared / "home"
    home.mkdir()
    home.chmod(0o1777)
    own_files = ["koroku.db", "koroku.db-wal", "koroku.log.2", "unsent.txt", "unsent.txt.9.taking"]
    for name in own_files:
        (home / name).write_text("")
        (home / name).chmod(0o644)
    (home / "notes.txt").write_text("the user's")  # not Koroku's
    (home / "notes.txt").chmod(0o644)
    (home / "memory").mkdir(mode=0o755)
    (home / "memory" / "02-01-2026.md").write_text("")
    (home / "memory" / "02-01-2026.md").chmod(0o644)
    demo = home / DEMO_DIRNAME
    (demo / "memory").mkdir(parents=True)
    demo.chmod(0o755)
    (demo / "koroku.db").write_text("")
    (demo / "koroku.db").chmod(0o644)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    (home / "keymap.toml").symlink_to(elsewhere)

    changed = tighten_home(home)

    assert mode(home) == 0o1777
    assert {name: mode(home / name) for name in own_files} == dict.fromkeys(own_files, 0o600)
    assert mode(home / "notes.txt") == 0o644
    assert mode(home / "memory") == 0o700 and mode(home / "memory" / "02-01-2026.md") == 0o600
    assert mode(demo) == 0o700 and mode(demo / "koroku.db") == 0o600
    assert mode(elsewhere) == 0o755
    assert home not in changed and demo in changed


def test_a_folder_named_demo_or_a_linked_memory_is_not_koroku_s(
    shared: Path, tmp_path: Path
) -> None:
    home = shared / "home"
    (home / DEMO_DIRNAME).mkdir(parents=True)
    (home / DEMO_DIRNAME).chmod(0o755)  # the user's own demo/, no Koroku database in it
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    elsewhere.chmod(0o777)
    (elsewhere / "02-01-2026.md").write_text("")
    (elsewhere / "02-01-2026.md").chmod(0o644)
    (home / "memory").symlink_to(elsewhere)
    tighten_home(home)
    assert mode(home / DEMO_DIRNAME) == 0o755
    assert mode(elsewhere) == 0o777 and mode(elsewhere / "02-01-2026.md") == 0o644


async def test_the_demo_makes_its_folder_0700(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        async with demo_app(Settings(home=tmp_path), pace=0, opening=None):
            pass
    finally:
        os.umask(previous)
    assert mode(tmp_path / DEMO_DIRNAME) == 0o700
    assert mode(tmp_path / DEMO_DIRNAME / "koroku.db") == 0o600


@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_a_planted_log_is_never_written_through(tmp_path: Path, planted: str) -> None:
    assert KOROKU is not None
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    outside = tmp_path / "outside.txt"
    outside.write_text("someone else's\n")
    outside.chmod(0o644)
    if planted == "link":
        (home / LOG_FILENAME).symlink_to(outside)
    else:
        os.mkfifo(home / LOG_FILENAME)  # opening it to write would wait for a reader
    done = subprocess.run(
        [KOROKU, "--print", "hello"],
        env=no_key_environment(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        "koroku-tui: koroku.log in the Koroku home is a link or not a regular file, and Koroku "
        "writes no log through it: Koroku runs without a log until it is removed."
    ) in done.stderr.splitlines()
    assert outside.read_text() == "someone else's\n" and mode(outside) == 0o644
