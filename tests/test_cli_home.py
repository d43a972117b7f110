"""The home folder as given: a file is one sentence; a read-only folder opens for browsing.

A read-only home is a real read-only mount (``unshare -m`` and a bind mount):
the tests run as root, whom a folder's mode does not stop.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from google.genai import types
from helpers.agent_kit import ENV_VARIABLES
from helpers.events import texts

from koroku_tui.events import SessionEvent
from koroku_tui.store import (
    SCHEMA_VERSION,
    SessionManager,
    StoreOpenError,
    StoreWriteError,
)

COMMAND = str(Path(sys.executable).parent / "koroku-tui")
HELPERS = Path(__file__).parent / "helpers"
UNSHARE = shutil.which("unshare")
_MOUNT_READ_ONLY = 'mount --bind -o ro "$0" "$0" && exec "$@"'


def read_only_mounts() -> bool:
    """True where a test can mount a folder read-only in its own mount namespace."""
    if UNSHARE is None:
        return False
    probe = subprocess.run(
        [UNSHARE, "-m", "sh", "-c", _MOUNT_READ_ONLY + " 2>/dev/null", "/tmp", "true"],
        capture_output=True,
    )
    return probe.returncode == 0


needs_read_only_mounts = pytest.mark.skipif(
    not read_only_mounts(), reason="needs unshare -m and bind mounts (root)"
)


def run(
    home: Path, *args: str, read_only: bool = False, via: str = "env"
) -> subprocess.CompletedProcess[str]:
    """The command on ``home`` (``via`` KOROKU_HOME or --home), the home mounted read-only or not.

    Its key is never used: port 9 (discard) answers nothing.
    """
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES and k != "UV"}
    env |= {"GEMINI_API_KEY": "unused", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"}
    command = [COMMAND, *args]
    if via == "env":
        env["KOROKU_HOME"] = str(home)
    else:
        command[1:1] = ["--home", str(home)]
    if read_only:
        assert UNSHARE is not None
        command = [UNSHARE, "-m", "sh", "-c", _MOUNT_READ_ONLY, str(home), *command]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


async def seed(home: Path, *first_messages: str) -> list[int]:
    """One two-message session per first message; their ids. The file is closed cleanly."""
    ids = []
    async with SessionManager(home / "koroku.db") as store:
        for text in first_messages:
            await store.new_session()
            for role, said in (("user", text), ("model", f"about {text}")):
                content = types.Content(role=role, parts=[types.Part(text=said)])
                await store.add_message(SessionEvent.from_content(content))
            ids.append(store.session_id)
    return ids


def snapshot(home: Path) -> dict[str, str]:
    """Every file of the home and a digest of its bytes."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(home.iterdir())
    }


# -- a file where the home should be -------------------------------------------


@pytest.mark.parametrize("mode", [["--print", "hi"], ["--list"], []], ids=["print", "list", "app"])
def test_a_file_as_the_home_is_one_sentence(tmp_path: Path, mode: list[str]) -> None:
    home = tmp_path / "notes.txt"
    home.write_text("my notes")
    done = run(home, *mode)
    assert (done.returncode, done.stderr) == (
        1,
        f"koroku-tui: KOROKU_HOME {home} is a file, not a folder; give the path of a folder.\n",
    )
    assert home.read_text() == "my notes"
    done = run(home / "koroku", *mode, via="flag")
    assert done.stderr == (
        f"koroku-tui: --home {home / 'koroku'} cannot be a folder: {home} is a file, not a "
        "folder; give the path of a folder.\n"
    )


# -- a read-only home ------------------------------------------------------------


@needs_read_only_mounts
async def test_a_read_only_home_lists_its_conversations_and_writes_nothing(
    tmp_path: Path,
) -> None:
    ids = await seed(tmp_path, "deploy plan", "backup script")
    before = snapshot(tmp_path)
    done = run(tmp_path, "--list", read_only=True)
    assert done.returncode == 0, done.stderr
    rows = [line.split(None, 4) for line in done.stdout.splitlines()[1:3]]
    assert [(int(r[0]), r[4]) for r in rows] == [(ids[1], "backup script"), (ids[0], "deploy plan")]
    assert snapshot(tmp_path) == before


@needs_read_only_mounts
@pytest.mark.parametrize(
    ("args", "flag"),
    [(["--print", "hi"], "--print"), (["--new"], "--new"), (["--demo"], "--demo")],
)
async def test_a_read_only_home_refuses_what_would_write_in_one_sentence(
    tmp_path: Path, args: list[str], flag: str
) -> None:
    await seed(tmp_path, "deploy plan")
    before = snapshot(tmp_path)
    done = run(tmp_path, *args, read_only=True)
    assert (done.returncode, done.stderr) == (
        1,
        f"koroku-tui: KOROKU_HOME {tmp_path} is read-only, so {flag} cannot save anything "
        "there; make the folder writable or choose another home (--home).\n",
    )
    assert snapshot(tmp_path) == before


@needs_read_only_mounts
async def test_the_app_opens_a_read_only_home_for_browsing_with_a_banner(tmp_path: Path) -> None:
    ids = await seed(tmp_path, "deploy plan", "backup script")
    before = snapshot(tmp_path)
    assert UNSHARE is not None
    script = [sys.executable, str(HELPERS / "read_only_app.py"), str(tmp_path), str(ids[0])]
    done = subprocess.run(  # noqa: ASYNC221 (the test waits for it and nothing else)
        [UNSHARE, "-m", "sh", "-c", _MOUNT_READ_ONLY, str(tmp_path), *script],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ
        | {"GEMINI_API_KEY": "unused", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["read_only"] and not report["agent"]
    assert report["banner"].startswith(f"Koroku's home {tmp_path} is read-only: you can read")
    assert report["shown"] == ["backup script"]  # the newest conversation, as always
    assert report["kept_in_prompt"] == "hello?" and report["after_send"] == ["backup script"]
    assert report["opened"] == ["deploy plan"]  # another one opens: browsing writes nothing
    assert not [n for n in report["notices"] if "could not" in n.lower()], report["notices"]
    assert snapshot(tmp_path) == before


# -- the store, opened to read only -----------------------------------------------


async def test_a_read_only_store_reads_every_session_and_refuses_each_write(
    tmp_path: Path,
) -> None:
    path = tmp_path / "koroku.db"
    ids = await seed(tmp_path, "one", "two")
    async with SessionManager(path, read_only=True) as store:
        assert store.read_only and store.session_id == ids[1]
        assert [info.id for info in await store.list_sessions()] == [ids[1], ids[0]]
        await store.switch_session(ids[0])
        assert texts(await store.load_messages()) == ["one", "about one"]
        content = types.Content(role="user", parts=[types.Part(text="more")])
        with pytest.raises(StoreWriteError, match="read-only"):
            await store.add_message(SessionEvent.from_content(content))
        with pytest.raises(StoreWriteError, match="read-only"):
            await store.rename_session(ids[0], "renamed")
    async with SessionManager(path) as store:
        assert [info.title for info in await store.list_sessions()] == ["two", "one"]


async def test_a_read_only_store_never_creates_nor_migrates_a_file(tmp_path: Path) -> None:
    missing = tmp_path / "koroku.db"
    with pytest.raises(StoreOpenError, match="holds no conversations yet"):
        await SessionManager(missing, read_only=True).initialize()
    assert not missing.exists()
    old = tmp_path / "old.db"
    await seed(tmp_path, "x")
    (tmp_path / "koroku.db").rename(old)
    with sqlite3.connect(old) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    with pytest.raises(StoreOpenError, match="must update it") as caught:
        await SessionManager(old, read_only=True).initialize()
    assert "\n" not in str(caught.value)
