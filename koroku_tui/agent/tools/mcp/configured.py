"""One configured MCP server through its starts: its state, why it failed, what it offers.

Each start is numbered (``attempt``): what an older start reports once a
newer one replaced it is ignored. A start is *settled* once it is ready or
failed; a turn waits for that at most until the start's deadline (its
start-up time, counted from when it was asked for).

An entry the config loader gave a ``problem`` (its token's variable is not
set) is failed from the start with that sentence, and never started.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from koroku_tui.agent.tools.mcp.offer import Offer
from koroku_tui.agent.tools.mcp.server_log import with_stderr_line
from koroku_tui.agent.tools.mcp.status import ServerState, ServerStatus
from koroku_tui.config.mcp_servers import McpServerSettings

if TYPE_CHECKING:
    from koroku_tui.agent.tools.mcp.connection import Connection

__all__ = ["CLOSE_WITHIN", "ConfiguredServer"]

CLOSE_WITHIN = 5.0
"""Seconds a server's start has to end once asked before its task is cancelled."""


@dataclass(eq=False)
class ConfiguredServer:
    """One ``[mcp_servers.NAME]`` and its current start."""

    name: str
    settings: McpServerSettings
    state: ServerState = ServerState.STARTING
    clause: str = ""
    """Why it failed, as a clause after "it" ("did not finish starting within 10 s")."""
    offered: Offer = field(default_factory=Offer)
    """What it offers of its tools (from its last list)."""
    restarts: int = 0
    automatic_restarts: int = 0
    """Restarts at a turn's start (limited); a restart the user asked for is not one."""
    attempt: int = 0
    """Which start this is (1 the first)."""
    told: int = -1
    """The start whose failure a turn's line already said."""
    connection: Connection | None = None
    task: asyncio.Task[None] | None = None
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    deadline: float = 0.0
    """When the current start's time is up (the event loop's clock)."""

    def __post_init__(self) -> None:
        if not self.startable:
            self.state = ServerState.FAILED
            self.settled.set()

    @property
    def startable(self) -> bool:
        """Whether it may be started: its entry has no ``problem``."""
        return self.settings.problem is None

    @property
    def why(self) -> str:
        """Why it is not running, as a clause after "it"."""
        if self.settings.problem is not None:
            return f"was not started: {self.settings.problem}"
        return self.clause or "is still starting"

    @property
    def reason(self) -> str:
        """Why it is not running, as one sentence naming it."""
        return self.settings.problem or f"{self.name} {self.why}."

    def went_on_without(self) -> str:
        """The line a turn that goes on without it says."""
        if self.settings.problem is not None:
            return f"Went on without the MCP server {self.name}: {self.settings.problem}"
        return f"Went on without the MCP server {self.name}: it {self.why}."

    def status(self) -> ServerStatus:
        """What the UI reads of it."""
        return ServerStatus(
            name=self.name,
            state=self.state,
            transport="http" if self.settings.is_remote else "stdio",
            tools=self.offered.tools if self.state is ServerState.READY else (),
            reason=self.reason if self.state is ServerState.FAILED else "",
            restarts=self.restarts,
            trusted=self.settings.trust,
            startable=self.startable,
        )

    def begin(self, *, again: bool) -> int:
        """A new start: its number (the task running it is the caller's to make)."""
        self.attempt += 1
        if again:
            self.restarts += 1
        self.state, self.clause, self.connection = ServerState.STARTING, "", None
        self.settled = asyncio.Event()
        loop_time = asyncio.get_running_loop().time()
        self.deadline = loop_time + self.settings.startup_timeout_sec
        return self.attempt

    def became_ready(self, offered: Offer) -> None:
        """The current start listed its tools."""
        self.state, self.offered = ServerState.READY, offered
        self.settled.set()

    def failed(self, clause: str) -> None:
        """The current start failed, died or stopped answering: its process ends now."""
        self.state, self.clause = ServerState.FAILED, clause
        if self.connection is not None:
            self.connection.end()
        self.settled.set()

    async def wait_settled(self) -> None:
        """Wait until the current start is settled, at most until its deadline."""
        if self.state is not ServerState.STARTING:
            return
        remaining = self.deadline - asyncio.get_running_loop().time()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(0.0, remaining)):
                await self.settled.wait()
        if self.state is ServerState.STARTING:
            timeout = self.settings.startup_timeout_sec
            # What it last wrote on stderr (waiting for a database...) is often the why.
            line = self.connection.last_line if self.connection is not None else ""
            self.clause = with_stderr_line(f"did not finish starting within {timeout:g} s", line)

    async def stop(self) -> None:
        """End the current start, if it runs: its process ends with it."""
        task, connection = self.task, self.connection
        if task is None or task.done():
            return
        if connection is not None:
            connection.end()
            done, _ = await asyncio.wait({task}, timeout=CLOSE_WITHIN)
            if done:
                return
        # Not running the server yet (importing the SDK), or not ending: the last resort.
        task.cancel()
        await asyncio.wait({task}, timeout=CLOSE_WITHIN)
