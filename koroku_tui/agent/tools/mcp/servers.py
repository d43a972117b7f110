"""``McpServers``: every configured MCP server, started in the background, offered at each turn.

- :meth:`McpServers.start` starts them all at once, each in its own task
  (no waiting: ten servers take the time of the slowest, and the app's first
  frame none). The SDK (~1 s to import) is imported then, in a thread.
- :meth:`McpServers.ready_for_turn`, at the start of each turn, starts again
  the servers that failed (at most ``MAX_RESTARTS`` times a session each),
  waits for those still starting, each at most until its start-up time is up,
  puts the tools of the ready ones in the registry (and takes out the others'),
  and returns one line per server the turn goes on without (once per failure).
- A call of a server that is not running is answered "server X is not
  running: ...". A call that is stopped (its time limit, a cancel) makes
  Koroku ping the server: one that does not answer is failed, and started
  again at the next turn.
- An entry the config loader gave a ``problem`` is failed with that sentence
  from the start and never started.
- :meth:`McpServers.listen` registers a callback told the statuses at every
  change; :meth:`McpServers.close` ends every server's process.

This module imports no SDK: a run without servers never imports it, and one
with servers imports it in a thread once they start.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from koroku_tui.agent.tools.mcp.configured import ConfiguredServer
from koroku_tui.agent.tools.mcp.names import overlapping
from koroku_tui.agent.tools.mcp.offer import Offer, ToolCaller, offer
from koroku_tui.agent.tools.mcp.status import ServerState, ServerStatus
from koroku_tui.agent.tools.registry import ToolRegistry
from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.spec import ToolSource
from koroku_tui.config.mcp_servers import McpServerSettings

if TYPE_CHECKING:
    from koroku_tui.agent.tools.mcp.connection import Connection
    from koroku_tui.agent.tools.mcp.listing import ListedTool

__all__ = ["MAX_RESTARTS", "McpServers", "StatusListener"]

logger = logging.getLogger(__name__)

MAX_RESTARTS = 3
"""Times a failed server is started again in one session (at the start of a turn)."""
PING_WITHIN = 5.0
"""Seconds a server whose call was stopped has to answer a ping before it is failed."""

StatusListener = Callable[[tuple[ServerStatus, ...]], None]
"""Told every server's status whenever one changes (called on the event loop)."""


class McpServers:
    """The MCP servers of one run (see the module docstring)."""

    def __init__(
        self,
        servers: Mapping[str, McpServerSettings],
        registry: ToolRegistry,
        *,
        workspace: Path,
        env_allow: Collection[str] = (),
    ) -> None:
        self._servers = {name: ConfiguredServer(name, s) for name, s in servers.items()}
        self._suffixed = overlapping(servers)
        """Servers whose tools always get the suffix (names.py): not whichever starts later."""
        self._registry = registry
        self._workspace = workspace
        self._env_allow = frozenset(env_allow)
        self._listeners: list[StatusListener] = []
        self._sdk: ModuleType | None = None
        self._sdk_lock = asyncio.Lock()
        self._watchers: set[asyncio.Task[bool]] = set()
        self._closed = False
        self.secrets = tuple(
            s.bearer_token.get_secret_value() for s in servers.values() if s.bearer_token
        )
        """The servers' bearer tokens: the agent's redactor keeps them out of what is stored
        or sent to Gemini, of the log, and of what children inherit."""
        self.used: set[str] = set()
        """Servers whose tools were called in this run (``--print --verbose`` names them)."""

    @property
    def names(self) -> list[str]:
        """The configured servers' names, in the config's order."""
        return list(self._servers)

    def statuses(self) -> tuple[ServerStatus, ...]:
        """Every server's status now, in the config's order."""
        return tuple(server.status() for server in self._servers.values())

    def listen(self, listener: StatusListener) -> None:
        """Tell ``listener`` the statuses at every change (a start, ready, failed, a new list)."""
        self._listeners.append(listener)

    def start(self) -> None:
        """Start every server not started yet, in the background; returns at once."""
        if self._closed:
            return
        for server in self._servers.values():
            if server.task is None and server.startable:
                self._launch(server)

    async def ready_for_turn(self) -> list[str]:
        """Get the servers ready for a turn (see the module docstring); the lines to show."""
        if self._closed or not self._servers:
            return []
        self.start()
        for server in self._servers.values():
            again = server.startable and server.automatic_restarts < MAX_RESTARTS
            if server.state is ServerState.FAILED and again:
                server.automatic_restarts += 1
                await server.stop()
                self._launch(server, again=True)
        await asyncio.gather(*(server.wait_settled() for server in self._servers.values()))
        self._offer_ready_tools()
        lines = []
        for server in self._servers.values():
            if server.state is not ServerState.READY and server.told != server.attempt:
                server.told = server.attempt
                lines.append(server.went_on_without())
        return lines

    async def restart(self, name: str) -> None:
        """Start ``name`` again now (the user asked: not counted against the limit) and wait
        until it is ready or failed, at most its start-up time. An entry with a ``problem``
        stays failed: starting it again would not fix its config."""
        server = self._servers[name]
        if self._closed or not server.startable:
            return
        await server.stop()
        self._launch(server, again=True)
        await server.wait_settled()

    async def close(self) -> None:
        """End every server (their processes too), together; a few seconds at most."""
        self._closed = True
        for watcher in list(self._watchers):
            watcher.cancel()
        await asyncio.gather(*(server.stop() for server in self._servers.values()))

    # -- one start of a server -------------------------------------------------

    def _launch(self, server: ConfiguredServer, *, again: bool = False) -> None:
        attempt = server.begin(again=again)
        life = self._life(server, attempt)
        server.task = asyncio.get_running_loop().create_task(life, name=f"mcp:{server.name}")
        self._changed()

    async def _life(self, server: ConfiguredServer, attempt: int) -> None:
        try:
            sdk = await self._connection_module()
            connection: Connection = sdk.Connection(
                server.name,
                server.settings,
                _Reports(self, server, attempt),
                workspace=self._workspace,
                env_allow=self._env_allow,
            )
            server.connection = connection
            await connection.run(server.deadline)
        except Exception as exc:  # a bug or a broken install: one sentence, the rest in the log
            logger.exception("MCP server %s could not be run", server.name)
            self.failed(server, attempt, f"could not be started ({type(exc).__name__}: {exc})")
        finally:
            if server.attempt == attempt:
                server.settled.set()

    async def _connection_module(self) -> ModuleType:
        """The module that imports the SDK (~1 s), imported once, in a thread."""
        async with self._sdk_lock:
            if self._sdk is None:
                name = "koroku_tui.agent.tools.mcp.connection"
                self._sdk = await asyncio.to_thread(importlib.import_module, name)
        return self._sdk

    # -- what a connection reports ---------------------------------------------

    def is_current(self, server: ConfiguredServer, attempt: int) -> bool:
        """Whether ``attempt`` is ``server``'s current start (an older one's news is stale)."""
        return server.attempt == attempt and not self._closed

    def ready(self, server: ConfiguredServer, tools: list[ListedTool]) -> None:
        """``server``'s current start listed ``tools``: it is ready."""
        server.became_ready(self._offer(server, tools))
        self._changed()

    def listed(self, server: ConfiguredServer, tools: list[ListedTool]) -> None:
        """``server`` listed ``tools`` again: offered from the next turn."""
        server.offered = self._offer(server, tools)
        self._changed()

    def _offer(self, server: ConfiguredServer, tools: list[ListedTool]) -> Offer:
        """What ``server`` offers of ``tools``, named apart from every other tool."""
        others = {
            spec.name
            for other in self._servers.values()
            if other is not server
            for spec in other.offered.specs
        }
        taken = others | {
            spec.name for spec in self._registry if spec.source.label != f"mcp:{server.name}"
        }
        suffixed = server.name in self._suffixed
        caller = self._caller(server)
        return offer(server.name, server.settings, tools, caller, taken, suffixed=suffixed)

    def failed(self, server: ConfiguredServer, attempt: int, clause: str) -> None:
        """The start ``attempt`` of ``server`` failed, died or stopped answering."""
        if not self.is_current(server, attempt):
            return
        logger.warning("MCP server %s %s", server.name, clause)
        server.failed(clause)
        self._changed()

    def _changed(self) -> None:
        statuses = self.statuses()
        for listener in list(self._listeners):
            try:
                listener(statuses)
            except Exception:
                logger.exception("an MCP status listener failed")

    # -- the registry and calls ------------------------------------------------

    def _offer_ready_tools(self) -> None:
        """Each server's tools in the registry if it is ready, out of it if not."""
        for server in self._servers.values():
            source = ToolSource.mcp(server.name)
            ready = server.state is ServerState.READY
            try:
                self._registry.replace_source(source, server.offered.specs if ready else [])
            except ValueError as exc:  # a name taken since its list was read
                logger.warning("MCP server %s: its tools are not offered: %s", server.name, exc)
                self._registry.replace_source(source, [])

    def _caller(self, server: ConfiguredServer) -> ToolCaller:
        async def call(tool: str, arguments: dict[str, Any]) -> str:
            connection = server.connection if server.state is ServerState.READY else None
            if connection is None:
                raise ToolError(f"server {server.name} is not running: it {server.why}.")
            self.used.add(server.name)
            try:
                return await connection.call(tool, arguments)
            except asyncio.CancelledError:
                self._look_after(connection)
                raise

        return call

    def _look_after(self, connection: Connection) -> None:
        """Ping a server whose call was stopped: it is failed if it does not answer."""
        if self._closed:
            return
        watcher = asyncio.get_running_loop().create_task(connection.answers(PING_WITHIN))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)


@dataclass(frozen=True)
class _Reports:
    """What one start of one server reports, passed on unless a newer start replaced it."""

    servers: McpServers
    server: ConfiguredServer
    attempt: int

    def ready(self, connection: Connection, tools: list[ListedTool]) -> None:
        if self.servers.is_current(self.server, self.attempt):
            self.servers.ready(self.server, tools)

    def tools_changed(self, connection: Connection, tools: list[ListedTool]) -> None:
        if self.servers.is_current(self.server, self.attempt):
            self.servers.listed(self.server, tools)

    def ended(self, connection: Connection, clause: str) -> None:
        self.servers.failed(self.server, self.attempt, clause)
