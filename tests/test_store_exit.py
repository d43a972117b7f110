"""A program that opens the store and never closes it still exits, every row kept.

aiosqlite's worker thread is not a daemon, and the interpreter waits for it
at exit; it ends only when its connection closes. The seed's programs never
call ``close()``, so the store closes itself: at the end of its event loop
(``asyncio.run``), or else just before the interpreter joins its threads.
Each program below keeps its store in a global, prints the id of its row
once ``add_message`` has returned, then returns from ``main()`` without
closing anything.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

PROGRAM = """\
import asyncio

import os

from koroku_tui.events import SessionEvent, TextPart
from koroku_tui.store import SessionManager

# Open for the program's whole life, as a program's one store is, so nothing
# collects it before the interpreter waits for its worker thread.
STORE = SessionManager(os.path.join(os.environ["STORE_HOME"], "koroku.db"))


async def main():
    await STORE.initialize()
{body}
    row = await STORE.add_message(SessionEvent(role="user", parts=[TextPart(text="kept")]))
    print(row, flush=True)


{runner}
"""

RUNNERS = {
    # The seed's way: the loop closes its async generators, then itself.
    "asyncio.run": "asyncio.run(main())",
    # A loop left open, never told to close its async generators.
    "loop left open": "asyncio.new_event_loop().run_until_complete(main())",
    # A current loop closed without closing its async generators first.
    "loop closed bare": (
        "loop = asyncio.new_event_loop()\n"
        "asyncio.set_event_loop(loop)\n"
        "loop.run_until_complete(main())\n"
        "loop.close()"
    ),
}


def run_forgetful(tmp_path: Path, runner: str, body: str = "    pass") -> tuple[int, Path]:
    """Run the program; return the row id it printed and its database, once it has exited."""
    home = tmp_path / "home"
    script = tmp_path / "forgetful.py"
    script.write_text(PROGRAM.format(runner=runner, body=body))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOROKU_")}
    env["STORE_HOME"] = str(home)  # the program opens koroku.db there
    with subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    ) as program:
        assert program.stdout is not None and program.stderr is not None
        row_id = int(program.stdout.readline())  # acknowledged: main() returns now
        try:
            returncode = program.wait(timeout=2)
        except subprocess.TimeoutExpired:
            program.kill()
            pytest.fail("the program was still running 2 s after main() returned")
        stderr = program.stderr.read()
    assert (returncode, stderr) == (0, "")
    return row_id, home / "koroku.db"


@pytest.mark.parametrize("runner", RUNNERS.values(), ids=RUNNERS.keys())
def test_a_store_never_closed_lets_its_program_exit_with_the_row(
    tmp_path: Path, runner: str
) -> None:
    row_id, database = run_forgetful(tmp_path, runner)
    with closing(sqlite3.connect(database)) as db:
        rows = db.execute("SELECT id, event_json FROM messages").fetchall()
    assert [(found, json.loads(text)["parts"][0]["text"]) for found, text in rows] == [
        (row_id, "kept")
    ]
    # Closed, not abandoned: closing the last connection removes the WAL.
    assert not database.with_name("koroku.db-wal").exists()


def test_at_the_end_of_asyncio_run_the_store_closes_as_close_does(tmp_path: Path) -> None:
    # A turn begun and never ended: close() gives the session's lease back,
    # which stopping the connection at exit alone would not.
    _, database = run_forgetful(tmp_path, RUNNERS["asyncio.run"], "    await STORE.begin_turn()")
    with closing(sqlite3.connect(database)) as db:
        assert db.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 1
        assert db.execute("SELECT COUNT(*) FROM session_leases").fetchone()[0] == 0


WORKER_PROGRAM = """\
import asyncio
import os
import threading

from koroku_tui.events import SessionEvent, TextPart
from koroku_tui.store import SessionManager

opened = threading.Event()


def write(loop, store, text):
    event = SessionEvent(role="user", parts=[TextPart(text=text)])
    print(loop.run_until_complete(store.add_message(event)), flush=True)


def worker():
    loop = asyncio.new_event_loop()
    store = SessionManager(os.path.join(os.environ["STORE_HOME"], "koroku.db"))
    loop.run_until_complete(store.initialize())
    write(loop, store, "before")
    opened.set()
    threading.main_thread().join()  # the main code has ended: the interpreter exits
    write(loop, store, "after")
    loop.run_until_complete(store.close())
    loop.close()


threading.Thread(target=worker).start()
opened.wait()
"""


def test_a_thread_still_at_work_at_exit_keeps_its_store(tmp_path: Path) -> None:
    # The interpreter runs its exit hooks, then waits for the threads still
    # running: a thread that owns its loop (not running between two writes)
    # and closes its store itself must still find it open after main ends.
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / "worker.py"
    script.write_text(WORKER_PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOROKU_")}
    env["STORE_HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=30
    )
    assert (done.returncode, done.stderr) == (0, "")
    with closing(sqlite3.connect(home / "koroku.db")) as db:
        rows = db.execute("SELECT id, event_json FROM messages").fetchall()
    assert [json.loads(text)["parts"][0]["text"] for _, text in rows] == ["before", "after"]
    assert done.stdout.split() == [str(found) for found, _ in rows]
