"""Tools leave nothing behind, even processes that left the command's process group.

GNU ``timeout`` (and anything calling ``setpgid``) moves into a process group
of its own in the command's session; killing the group missed it on every
path. The real shell runs each case from ``hostile/leftover_commands.py``;
the stop cases run the real ``koroku-tui --print --yes`` against the fake.
Also here: a child that keeps the command's output open (``setsid``) costs
neither a traceback on stderr nor file descriptors.
"""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.processes import KOROKU, kill_leftovers, koroku_env, wait_for_pid, wait_until_gone
from hostile.leftover_commands import REGROUPING

from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.tools.builtin.shell import run_command
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(90)

CASES = [case.format(python=sys.executable) for case in REGROUPING]
NAMES = [case.split()[0].rsplit("/", 1)[-1] for case in REGROUPING]


def in_background(case: str) -> str:
    """``case`` started in the background; the command ends once it runs."""
    return f"( {case} ) >/dev/null 2>&1 & until [ -s held.pid ]; do sleep 0.01; done; echo started"


@pytest.mark.parametrize("case", CASES, ids=NAMES)
async def test_a_finished_command_leaves_no_regrouped_process(case: str, tmp_path: Path) -> None:
    output = await run_command(in_background(case), ToolSettings(workspace=tmp_path))
    held = wait_for_pid(tmp_path / "held.pid")
    try:
        assert "started" in output
        assert wait_until_gone([held], within=5) == [], "it outlived its command"
    finally:
        kill_leftovers([held])


@pytest.mark.parametrize("case", CASES, ids=NAMES)
async def test_a_cancelled_command_leaves_no_regrouped_process(case: str, tmp_path: Path) -> None:
    task = asyncio.create_task(run_command(case, ToolSettings(workspace=tmp_path)))
    held = await asyncio.to_thread(wait_for_pid, tmp_path / "held.pid")
    try:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert wait_until_gone([held], within=5) == [], "it outlived the cancel"
    finally:
        kill_leftovers([held])


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
@pytest.mark.parametrize("case", CASES, ids=NAMES)
def test_a_stopped_or_killed_koroku_leaves_no_regrouped_process(
    fake: FakeGemini, tmp_path: Path, case: str, signum: signal.Signals
) -> None:
    assert KOROKU is not None, "koroku-tui is not installed in the test environment"
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    fake.add(call_reply(("run_command", {"command": case})))
    koroku = subprocess.Popen(
        [KOROKU, "--yes", "--print", "run it"],
        env=koroku_env(fake, home),
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    held: list[int] = []
    try:
        held.append(wait_for_pid(workspace / "held.pid"))
        koroku.send_signal(signum)
        koroku.communicate(timeout=30)
        assert wait_until_gone(held) == [], "it outlived Koroku"
    finally:
        if koroku.poll() is None:
            koroku.kill()
            koroku.communicate()
        kill_leftovers(held)
    assert koroku.returncode in (128 + signum, -signum)


# -- a child that left the session keeps the output open -----------------------

DETACHED = "setsid sh -c 'echo $$ >> detached.pid; exec sleep 300' & echo started"
"""Its sleep holds the command's stdout and stderr open after the shell exits."""


def detached_pids(folder: Path) -> list[int]:
    path = folder / "detached.pid"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def test_print_mode_says_nothing_of_a_detached_child_holding_the_output(
    fake: FakeGemini, tmp_path: Path
) -> None:
    assert KOROKU is not None, "koroku-tui is not installed in the test environment"
    fake.add(call_reply(("run_command", {"command": DETACHED})), text_reply("Started it."))
    try:
        done = subprocess.run(
            [KOROKU, "--yes", "--print", "start it"],
            env=koroku_env(fake, tmp_path / "home"),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        kill_leftovers(detached_pids(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Started it.\n"
    assert done.stderr == ""  # no "Exception ignored ... Event loop is closed"


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_detached_children_holding_the_output_cost_no_descriptors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    context = ToolSettings(workspace=tmp_path)
    await run_command("echo warm-up", context)
    before = open_descriptors()
    try:
        for _ in range(5):
            assert "started" in await run_command(DETACHED, context)
        # At most as many: a store an earlier test left open may close meanwhile
        # (its worker thread closes the file when its loop has ended).
        assert open_descriptors() <= before
    finally:
        kill_leftovers(detached_pids(tmp_path))
    gc.collect()  # an unretrieved exception is reported when its future is collected
    assert "never retrieved" not in caplog.text


# -- Koroku as PID 1 (a container without an init) ---------------------------

AS_PID_1 = """
import asyncio, os
from pathlib import Path
from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.tools.builtin.shell import run_command

async def main():
    assert os.getpid() == 1
    for _ in range(5):
        assert "hi" in await run_command("echo hi", ToolSettings(workspace=Path.cwd()))
    states = [
        Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        for pid in os.listdir("/proc") if pid.isdigit()
    ]
    print(states.count("Z"))

asyncio.run(main())
"""


def pid_namespaces_available() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run([unshare, "-fp", "--mount-proc", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not pid_namespaces_available(), reason="needs unshare and root")
def test_as_pid_1_koroku_leaves_no_zombies(tmp_path: Path) -> None:
    unshare = shutil.which("unshare")
    assert unshare is not None
    done = subprocess.run(
        [unshare, "-fp", "--mount-proc", sys.executable, "-c", AS_PID_1],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "0\n"  # the watchers, orphaned to PID 1, were reaped
