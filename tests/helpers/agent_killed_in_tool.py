"""Start an agent whose tool blocks, so a test can SIGKILL this process mid-tool.

Usage: python agent_killed_in_tool.py BASE_URL DB_PATH WORKSPACE

Prints ``TOOL_STARTED`` once the tool call begins. The command it runs waits
for this process to disappear, so killing us leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from koroku_tui.agent import Agent, AgentConfig, ToolCallStarted
from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.wire.client import make_client
from koroku_tui.store import SessionManager

STARTED_FILE = "command-started"
"""Created in the workspace by the command once it runs."""
BLOCKING_COMMAND = f"touch {STARTED_FILE}; while kill -0 $PPID 2>/dev/null; do sleep 0.1; done"


async def main(base_url: str, db: Path, workspace: Path) -> None:
    client = make_client(base_url=base_url, api_key="test-key")
    agent = Agent(
        session_manager=SessionManager(db),
        client=client,
        tool_settings=ToolSettings(workspace=workspace, auto_approve=True),
        config=AgentConfig(memory_dir=workspace / "memory", auto_compact=False),
    )

    async def announce(payload: ToolCallStarted) -> None:
        print("TOOL_STARTED", payload.name, flush=True)

    agent.on("on_tool_call", announce)
    await agent.initialize()
    await agent.run_turn("Run the long command.")
    print("TURN_FINISHED", flush=True)  # never reached: the test kills us first


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
