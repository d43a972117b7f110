"""One MCP server, through the official SDK: connect, initialize, list its tools, call them.

A :class:`Connection` is one start of one server. Its :meth:`Connection.run`
is the body of the task that holds it: the SDK's context managers (the
transport, the client session) are entered and left in that task, as anyio
requires; other tasks call tools through :meth:`Connection.call`.

How it reaches the server (a process under the guard, or streamable HTTP) is
``transports.py``'s.

Everything it reports goes through :class:`Reports` (``servers.py``): ready
with its tools, its tools changed, or ended (a clause saying why).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import anyio
import httpx2
import mcp_types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from koroku_tui.agent.tools.mcp import transports
from koroku_tui.agent.tools.mcp.listing import ListedTool, listed
from koroku_tui.agent.tools.mcp.results import result_text
from koroku_tui.agent.tools.mcp.server_log import ServerLog, with_stderr_line
from koroku_tui.agent.tools.mcp.watched import WatchedStream, first_error
from koroku_tui.agent.tools.result import ToolError
from koroku_tui.config.mcp_servers import McpServerSettings
from koroku_tui.text.safety import escape_hidden

__all__ = ["Connection", "Reports"]

CLIENT = mcp_types.Implementation(name="koroku", version="0.1.0")
"""How Koroku introduces itself to a server."""
CLOSED_CODE = mcp_types.CONNECTION_CLOSED
SDK_CLOSED = "Connection closed"
"""What the SDK's error says when it saw the connection close (code -32000, as servers use)."""
STDERR_GRACE = 1.0
"""Seconds a dead server's stderr may take to reach its end (its last line is quoted)."""


class Reports(Protocol):
    """What a connection tells its server set (``servers.py``)."""

    def ready(self, connection: Connection, tools: list[ListedTool]) -> None:
        """Initialised and its tools listed: offer them."""

    def tools_changed(self, connection: Connection, tools: list[ListedTool]) -> None:
        """It listed its tools again after ``notifications/tools/list_changed``."""

    def ended(self, connection: Connection, clause: str) -> None:
        """It failed to start, died or stopped answering: ``clause`` says how."""


class Connection:
    """One start of one server (see the module docstring)."""

    def __init__(
        self,
        name: str,
        settings: McpServerSettings,
        reports: Reports,
        *,
        workspace: Path,
        env_allow: Collection[str] = (),
    ) -> None:
        self.name = name
        self.settings = settings
        self._reports = reports
        self._workspace = workspace
        self._env_allow = env_allow
        self.stop = anyio.Event()
        """Set once the server is to end (see :meth:`end`)."""
        self._scope: anyio.CancelScope | None = None
        self._session: ClientSession | None = None
        self._log: ServerLog | None = None
        self._ended = False
        self._stream: WatchedStream[Any] | None = None
        self._listing = False
        """A ``tools/list`` after ``list_changed`` is on its way."""
        self._list_again = False
        """Another ``list_changed`` came meanwhile: one more list once it is back."""

    # -- the task's body ---------------------------------------------------

    async def run(self, deadline: float) -> None:
        """Start the server, report it ready, and hold it until :attr:`stop` or its end.

        ``deadline`` (the event loop's clock) ends the start: its startup time counted
        from when it was asked for.
        """
        timeout = self.settings.startup_timeout_sec
        try:
            with anyio.CancelScope(deadline=deadline) as startup:
                self._scope = startup
                if self.stop.is_set():
                    startup.cancel()
                async with self._transport() as (read, write):
                    watched = self._stream = WatchedStream(read)
                    async with ClientSession(
                        watched, write, message_handler=self._on_message, client_info=CLIENT
                    ) as session:
                        await session.initialize()
                        tools = await _all_tools(session)
                        startup.deadline = math.inf
                        self._session = session
                        self._reports.ready(self, tools)
                        await watched.wait_for_end_or(self.stop)
                        self._session = None
                        if not self.stop.is_set():
                            self._end(await self._with_last_line("stopped"))
            if startup.cancelled_caught:
                self._end(await self._with_last_line(_not_started(timeout)))
        except Exception as exc:
            self._end(await self._with_last_line(self._failure(first_error(exc))))
        finally:
            self._session = None
            if self._log is not None:
                self._log.close()

    def end(self) -> None:
        """End the server now, started or not: the task running it leaves the SDK's contexts,
        which end its process (within the SDK's bounded shutdown)."""
        self.stop.set()
        if self._scope is not None:
            self._scope.cancel()

    def _end(self, clause: str) -> None:
        if not self._ended and not self.stop.is_set():
            self._ended = True
            self._reports.ended(self, clause)

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        if self.settings.url is not None:
            async with transports.remote_streams(self.settings) as streams:
                yield streams
            return
        self._log = ServerLog(self.name)
        parameters = transports.stdio_parameters(self.settings, self._workspace, self._env_allow)
        async with transports.local_streams(parameters, self._log) as streams:
            yield streams

    async def _on_message(self, message: Any) -> None:
        if not isinstance(message, mcp_types.ToolListChangedNotification):
            return
        # The SDK runs each notice in a task of its own: a server sending a thousand
        # would have a thousand lists asked and offered. While one list is on its way,
        # more notices ask for one list after it (which sees every change before it).
        self._list_again = True
        if self._listing:
            return
        self._listing = True
        try:
            while self._list_again and (session := self._session) is not None:
                self._list_again = False
                try:
                    tools = await _all_tools(session)
                except Exception as exc:  # a server that cannot list its tools keeps the old list
                    self._log_line(f"listing its tools again failed: {first_error(exc)}")
                    return
                self._reports.tools_changed(self, tools)
        finally:
            self._listing = False

    def _log_line(self, text: str) -> None:
        if self._log is not None:
            self._log.add(text.encode())

    # -- calls ---------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """Call the server's ``tool``; its answer as text, or ``ToolError`` with its sentence."""
        session = self._session
        if session is None:
            raise ToolError(f"server {self.name} is not running.")
        try:
            result = await session.call_tool(tool, arguments)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED and self._gone():
                # Failed here, before the answer: the next call already says it is not running.
                self._end(await self._with_last_line("stopped"))
                clause = await self._with_last_line("stopped during the call")
                raise ToolError(f"server {self.name} {clause}.") from None
            raise ToolError(f"{self.name} refused the call: {exc.message}") from None
        except ValidationError as exc:
            raise ToolError(f"{self.name} {_breaks_protocol(exc)}.") from None
        except RuntimeError as exc:
            raise ToolError(f"{self.name} answered in a way Koroku cannot read: {exc}") from None
        except httpx2.HTTPError as exc:
            self._end(f"could not be reached ({exc})")
            raise ToolError(f"server {self.name} could not be reached: {exc}") from None
        if not isinstance(result, mcp_types.CallToolResult):
            raise ToolError(f"{self.name} answered with something other than a tool's result.")
        return result_text(result)

    async def answers(self, within: float) -> bool:
        """Whether the server answers a ping within ``within`` seconds (else it is ended)."""
        session = self._session
        if session is None:
            return False
        with anyio.move_on_after(within):
            try:
                await session.send_ping()
            except MCPError as exc:
                # "Method not found" is an answer too: a server that never learnt ping.
                if exc.code != mcp_types.CONNECTION_CLOSED or not self._gone():
                    return True
                self._end(await self._with_last_line(f"stopped answering ({exc})"))
                return False
            except Exception as exc:
                self._end(await self._with_last_line(f"stopped answering ({first_error(exc)})"))
                return False
            return True
        self._end(
            await self._with_last_line(f"stopped answering (no answer to a ping in {within:g} s)")
        )
        return False

    def _gone(self) -> bool:
        """Whether the server's stream ended: the SDK's "connection closed" (-32000) is also
        the code many servers answer a call they refuse with, which ends nothing."""
        return self._stream is None or self._stream.ended.is_set() or self.stop.is_set()

    # -- sentences ---------------------------------------------------------

    async def _with_last_line(self, clause: str) -> str:
        """``clause`` and the last line the server wrote on stderr (once its stderr ended)."""
        log = self._log
        if log is None:
            return clause
        with anyio.move_on_after(STDERR_GRACE):
            await log.ended.wait()
        return with_stderr_line(clause, log.last_line)

    @property
    def last_line(self) -> str:
        """The last line the server wrote on stderr so far ("" for none, or a remote one)."""
        return self._log.last_line if self._log is not None else ""

    def _failure(self, exc: BaseException) -> str:
        if isinstance(exc, transports.UnsendableToken):
            return f"could not be reached: {exc}"
        # The streams are closed by now: the SDK's own words tell its closing from a server
        # refusing to start with the same code (-32000).
        if isinstance(exc, MCPError) and (exc.code, exc.message) == (CLOSED_CODE, SDK_CLOSED):
            return "ended before it was ready"
        if isinstance(exc, httpx2.HTTPError):
            return f"could not be reached at {self.settings.url} ({type(exc).__name__}: {exc})"
        if isinstance(exc, OSError) and self.settings.command is not None:
            # The guard that starts the command is Koroku's own Python: what is missing is
            # most often the folder (``cwd``), which only the file name says.
            missing = f": {exc.filename}" if exc.filename else ""
            return f"could not be started ({exc.strerror or exc}{missing})"
        if isinstance(exc, MCPError):
            return f"refused to start: {escape_hidden(exc.message)}"
        if isinstance(exc, ValidationError):
            return f"{_breaks_protocol(exc)}, so none of its tools can be used"
        return f"failed to start ({type(exc).__name__}: {exc})"


def _breaks_protocol(exc: ValidationError) -> str:
    """What the SDK refused of an answer, in one line (pydantic's own text spans several)."""
    errors = exc.errors()
    if not errors:
        return "answered in a form the protocol does not allow"
    first = errors[0]
    where = ".".join(str(step) for step in first["loc"])
    more = f", and {len(errors) - 1} more" if len(errors) > 1 else ""
    said = escape_hidden(f"{where}: {first['msg']}{more}")
    return f"answered in a form the protocol does not allow ({said})"


def _not_started(timeout: float) -> str:
    return f"did not finish starting within {timeout:g} s"


async def _all_tools(session: ClientSession) -> list[ListedTool]:
    """Every tool the server lists, page after page (at most 100 pages)."""
    tools: list[ListedTool] = []
    cursor: str | None = None
    for _ in range(100):
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(listed(tool) for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools
