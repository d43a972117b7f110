"""Restarts: a clean one mid-session, and a SIGKILL while a tool runs."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.agent_killed_in_tool import BLOCKING_COMMAND, STARTED_FILE
from helpers.agent_kit import ENV_VARIABLES, open_agent, stored_events

from koroku_tui.agent.context.repair import LOST_RESULT_ERROR
from koroku_tui.events import Event, SessionEvent
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

pytestmark = pytest.mark.timeout(30)

HELPER = Path(__file__).parent / "helpers" / "agent_killed_in_tool.py"


def kill_agent_during_its_tool(base_url: str, db: Path, workspace: Path) -> None:
    """Run the helper agent in a real process and SIGKILL it while its tool runs."""
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARIABLES}
    env["PYTHONPATH"] = str(Path(__file__).parent)
    process = subprocess.Popen(
        [sys.executable, str(HELPER), base_url, str(db), str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        line = process.stdout.readline()
        assert line.startswith("TOOL_STARTED run_command"), process.stderr.read()
        deadline = time.monotonic() + 10
        while not (workspace / STARTED_FILE).exists():  # the command runs
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=10) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


async def test_a_restart_in_the_middle_of_a_tool_loop_continues(
    fake: FakeGemini, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("apples\n")
    fake.add(call_reply(("read_file", {"path": "a.txt"})), text_reply("Apples."), text_reply("2"))
    async with open_agent(fake, tmp_path) as first:
        assert await first.run("What is in a.txt?") is not None  # responses stored, not sent

    replayed: list[Event] = []

    async def replay(*, event: Event) -> None:
        replayed.append(event)

    async with open_agent(fake, tmp_path) as second:
        await second.initialize(replay_handler=replay)
        # The stored context ends with the responses: resend it, in the same turn.
        assert await second.retry() is None
        assert second.last_text == "Apples."
        assert await second.run_turn("And 1+1?") == "2"

    assert [type(e).__name__ for e in replayed] == ["SessionEvent"] * 3
    requests = fake.generate_requests
    assert [r.status for r in requests] == [200, 200, 200]
    # The signed call of the unfinished turn went back intact after the restart.
    assert requests[1].contents == requests[0].contents + requests[1].contents[1:]
    assert "thoughtSignature" in requests[1].contents[1]["parts"][0]


async def test_a_process_killed_during_a_tool_resumes_cleanly(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(
        call_reply(("run_command", {"command": BLOCKING_COMMAND})),
        text_reply("The command was interrupted; shall I run it again?"),
    )
    db = tmp_path / "koroku.db"
    await asyncio.to_thread(kill_agent_during_its_tool, fake.base_url, db, tmp_path)

    killed = await stored_events(db)
    assert [e.role for e in killed] == ["user", "model"]  # the reply was stored first

    async with open_agent(fake, tmp_path) as agent:
        answer = await agent.run_turn("What happened?")
    assert answer == "The command was interrupted; shall I run it again?"
    request = fake.generate_requests[-1]
    assert request.status == 200
    lost = request.contents[2]["parts"][0]["functionResponse"]
    assert lost["name"] == "run_command" and lost["response"] == {"error": LOST_RESULT_ERROR}
    # The repair is for the request only: the file still holds what really happened.
    after = await stored_events(db)
    assert [e.role for e in after] == ["user", "model", "user", "model"]
    assert isinstance(after[2], SessionEvent) and after[2].is_real_user_turn
