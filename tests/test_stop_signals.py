"""Tools leave nothing behind: Koroku stopped or killed in the middle of an approved command.

The real ``koroku-tui --print --yes`` against the fake server runs a command
whose shell and foreground ``sleep`` write their pids; then Koroku gets
SIGTERM, SIGHUP or SIGKILL. Neither process may outlive it. After SIGTERM
and SIGHUP the stored history answers the call ("Interrupted: ..."); after
SIGKILL the next start answers it as lost.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from helpers.agent_kit import stored_events
from helpers.processes import (
    KOROKU,
    kill_leftovers,
    koroku_env,
    parent_of,
    wait_for_pid,
    wait_until_gone,
)

from koroku_tui.agent.context.repair import LOST_RESULT_ERROR
from koroku_tui.agent.loop.guardrail import INTERRUPTED_BY_STOP
from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.tools.builtin.shell import run_command
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(90)

# The shell waits on a foreground sleep (a grandchild of Koroku), which is
# what PR_SET_PDEATHSIG on the shell alone would leave running.
LONG_COMMAND = "echo $$ > shell.pid; sh -c 'echo $$ > sleep.pid; exec sleep 300'; echo after"


def start_long_command(fake: FakeGemini, home: Path, workspace: Path) -> subprocess.Popen[str]:
    assert KOROKU is not None, "koroku-tui is not installed in the test environment"
    fake.add(call_reply(("run_command", {"command": LONG_COMMAND})))
    return subprocess.Popen(
        [KOROKU, "--yes", "--print", "run the long command"],
        env=koroku_env(fake, home),
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_a_stopped_or_killed_koroku_leaves_no_command_running(
    fake: FakeGemini, tmp_path: Path, signum: signal.Signals
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    koroku = start_long_command(fake, home, workspace)
    pids: list[int] = []
    try:
        pids = [wait_for_pid(workspace / "shell.pid"), wait_for_pid(workspace / "sleep.pid")]
        koroku.send_signal(signum)
        _, stderr = koroku.communicate(timeout=30)
        assert wait_until_gone(pids) == [], "the command outlived Koroku"
    finally:
        if koroku.poll() is None:
            koroku.kill()
            koroku.communicate()
        kill_leftovers(pids)

    events = asyncio.run(stored_events(home / "koroku.db"))
    if signum == signal.SIGKILL:
        assert koroku.returncode == -signal.SIGKILL
        assert [e.role for e in events] == ["user", "model"]  # the call dangles
        fake.add(text_reply("It was cut short."))
        assert KOROKU is not None, "koroku-tui is not installed in the test environment"
        again = subprocess.run(
            [KOROKU, "--print", "what happened?"],
            env=koroku_env(fake, home),
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert again.returncode == 0, again.stderr
        answered = fake.generate_requests[-1].contents[2]["parts"][0]["functionResponse"]
        assert answered["response"] == {"error": LOST_RESULT_ERROR}
        return
    # SIGTERM/SIGHUP: the call is answered in the file, and Koroku says why it stopped.
    assert koroku.returncode == 128 + signum
    assert stderr.strip() == (
        f"koroku-tui: stopped by {signum.name}; the conversation so far is saved."
    )
    assert [e.role for e in events] == ["user", "model", "user"]
    [response] = events[-1].function_responses
    assert response.function_response.name == "run_command"
    assert response.function_response.response == {"error": INTERRUPTED_BY_STOP}
    assert "Interrupted" in INTERRUPTED_BY_STOP


# -- a cancel while the command is being set up -----------------------------


def children_of_this_process() -> list[int]:
    return [
        int(pid)
        for task in Path("/proc/self/task").iterdir()
        for pid in (task / "children").read_text().split()
    ]


async def test_a_cancel_while_the_command_starts_kills_its_whole_group(tmp_path: Path) -> None:
    # The shell is forked synchronously in the tool's first step; the pipes
    # are connected a loop turn later. Blocking the loop (time.sleep) until
    # the grandchild runs puts the cancel exactly in between.
    context = ToolSettings(workspace=tmp_path)
    task = asyncio.create_task(run_command(LONG_COMMAND, context))
    for _ in range(100):  # a few loop turns: until the shell is forked, not one more
        await asyncio.sleep(0)
        if children_of_this_process():
            break
    sleep_pid = wait_for_pid(tmp_path / "sleep.pid")
    shell_pid = wait_for_pid(tmp_path / "shell.pid")
    try:
        task.cancel(INTERRUPTED_BY_STOP)
        with pytest.raises(asyncio.CancelledError) as raised:
            async with asyncio.timeout(5):  # the old clean-up waited for ever
                await task
        assert raised.value.args == (INTERRUPTED_BY_STOP,)
        assert wait_until_gone([shell_pid, sleep_pid], within=3) == []
    finally:
        kill_leftovers([shell_pid, sleep_pid])


# -- the full-screen app, in a real terminal -----------------------------------

TMUX = shutil.which("tmux")


class _Tmux:
    """One tmux server running koroku-tui in a 120x40 window."""

    def __init__(self) -> None:
        assert TMUX is not None
        self.socket = f"koroku-stop-{uuid.uuid4().hex[:8]}"

    def __call__(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True)
        return done.stdout

    def approve(self, started: Path, within: float = 30.0) -> None:
        """Press y until the command starts (writes ``started``).

        A key typed in the instant between the dialog reaching the screen and
        the dialog noting it is shown counts as typed ahead and is ignored
        (it says so): then press again.
        """
        deadline = time.monotonic() + within
        self("send-keys", "-t", "koroku", "y")
        while time.monotonic() < deadline and not started.exists():
            if "were ignored" in self("capture-pane", "-p", "-t", "koroku"):
                self("send-keys", "-t", "koroku", "y")
            time.sleep(0.05)

    def wait_for(self, text: str, within: float = 30.0) -> None:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if text in self("capture-pane", "-p", "-t", "koroku"):
                return
            time.sleep(0.1)
        raise AssertionError(f"never saw {text!r}:\n{self('capture-pane', '-p', '-t', 'koroku')}")


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
@pytest.mark.parametrize("how", ["SIGTERM", "terminal closed"])
def test_the_app_stopped_mid_command_kills_it_and_answers_the_call(
    fake: FakeGemini, tmp_path: Path, how: str
) -> None:
    assert KOROKU is not None, "koroku-tui is not installed in the test environment"
    home, workspace = tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    fake.add(call_reply(("run_command", {"command": LONG_COMMAND})))
    # Keys reach the dialog at once (the grace against typing ahead is tested in-process).
    env = koroku_env(fake, home) | {"TERM": "xterm-256color", "KOROKU_APPROVAL_GRACE": "0"}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    tmux = _Tmux()
    pids: list[int] = []
    try:
        tmux(
            "new-session",
            "-d",
            "-s",
            "koroku",
            "-x",
            "120",
            "-y",
            "40",
            f"cd {shlex.quote(str(workspace))} && env -i {exports} {shlex.quote(KOROKU)}",
        )
        tmux.wait_for("Quit")
        tmux("send-keys", "-t", "koroku", "-l", "run the long command")
        tmux("send-keys", "-t", "koroku", "Enter")
        tmux.wait_for("Allow once")
        tmux.approve(workspace / "shell.pid")
        pids = [wait_for_pid(workspace / "shell.pid"), wait_for_pid(workspace / "sleep.pid")]
        koroku = parent_of(pids[0])
        pids.append(koroku)
        if how == "SIGTERM":
            os.kill(koroku, signal.SIGTERM)
        else:
            tmux("kill-server")  # the terminal goes away: SIGHUP
        assert wait_until_gone(pids) == [], "the command (or Koroku) outlived the stop"
    finally:
        tmux("kill-server")
        kill_leftovers(pids)
    events = asyncio.run(stored_events(home / "koroku.db"))
    assert [e.role for e in events] == ["user", "model", "user"]
    [response] = events[-1].function_responses
    assert response.function_response.response == {"error": INTERRUPTED_BY_STOP}
