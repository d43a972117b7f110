"""The agent's MCP servers: started with the agent, made ready at each turn, closed with it.

The app builds the agent after its first frame, so the servers start after
it too, in the background (:meth:`McpServers.start` returns at once). Each
turn that begins with the user's message first waits for them
(:meth:`McpServers.ready_for_turn`: each server at most its start-up time),
then goes on; a server it goes without is one line on ``on_error`` (kind
``TOOL_SERVER``: news, the turn does not fail). Every change of a server's
state is ``on_mcp_status`` with all the statuses, emitted from the task that
saw it (a server's), not the turn's.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from koroku_tui.agent.errors import ErrorKind
from koroku_tui.agent.hooks import ErrorNotice, HookEmitter

if TYPE_CHECKING:
    from koroku_tui.agent.tools.mcp.servers import McpServers
    from koroku_tui.agent.tools.mcp.status import ServerStatus

__all__ = ["ToolServers"]


class ToolServers:
    """The agent's side of its :class:`McpServers` (none: every method does nothing)."""

    def __init__(self, servers: McpServers | None, emitter: HookEmitter) -> None:
        self.servers = servers
        self._emitter = emitter
        self._pending: set[asyncio.Task[None]] = set()
        if servers is not None:
            servers.listen(self._changed)

    def start(self) -> None:
        """Start every server in the background (idempotent)."""
        if self.servers is not None:
            self.servers.start()

    async def begin_turn(self) -> None:
        """Wait for the servers a turn may use; tell the user which it goes on without."""
        if self.servers is None:
            return
        for line in await self.servers.ready_for_turn():
            await self._emitter.emit("on_error", ErrorNotice(line, ErrorKind.TOOL_SERVER))

    async def close(self) -> None:
        """End every server's process, and the status hooks still on their way."""
        if self.servers is not None:
            await self.servers.close()
        for task in list(self._pending):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _changed(self, statuses: tuple[ServerStatus, ...]) -> None:
        if not self._emitter.has_handlers("on_mcp_status"):
            return
        task = asyncio.get_running_loop().create_task(self._emitter.emit("on_mcp_status", statuses))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
