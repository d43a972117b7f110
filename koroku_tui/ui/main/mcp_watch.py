"""What the main screen does with the MCP servers' statuses: a notice per failure, the view.

The agent emits every server's status at each change (``on_mcp_status``,
bridged as ``AgentMcpStatus``). :class:`McpWatch` turns a server that failed
into one warning notice with its reason, once per failure (a start of the
server that failed, however many statuses repeat it), and passes the
statuses on to the "MCP servers…" view while it is open, which redraws.

:func:`show_mcp_servers` opens that view (the palette's entry); its ``r``
restarts a server as the screen's one writing job (:func:`restart_server`).
The view's module, and its OptionList, are imported only then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from koroku_tui.agent.tools.mcp.status import ServerState, ServerStatus

if TYPE_CHECKING:
    from koroku_tui.ui.app import KorokuApp
    from koroku_tui.ui.main.mcp_view import McpView

__all__ = ["McpWatch", "restart_server", "show_mcp_servers"]


class McpWatch:
    """The main screen's follower of the MCP servers' statuses."""

    def __init__(self) -> None:
        self._told: set[tuple[str, int]] = set()
        """The failures already noticed: (server, its restarts when it failed)."""
        self.view: McpView | None = None
        """The "MCP servers…" view while it is open."""

    def heard(self, app: KorokuApp, statuses: tuple[ServerStatus, ...]) -> None:
        """The servers' statuses changed: a notice for each new failure; the view redraws."""
        for status in statuses:
            # A start fails once: its count of restarts names it (a restart counts one more).
            failure = (status.name, status.restarts)
            if status.state is ServerState.FAILED and failure not in self._told:
                self._told.add(failure)
                app.notify(status.reason, title="MCP server failed", severity="warning")
        if self.view is not None:
            self.view.show(statuses)


def show_mcp_servers(app: KorokuApp) -> None:
    """Open the "MCP servers…" view on the servers' statuses now (live from then on)."""
    from koroku_tui.ui.main.mcp_view import McpView  # with its OptionList, only when asked

    watch = app.main.mcp_watch
    agent = app.agent
    servers = agent.mcp if agent is not None else None
    note = ""
    if servers is None and app.settings.mcp_servers:
        names = ", ".join(app.settings.mcp_servers)
        why = f"which is not running: {app.problem}" if app.problem else "once Koroku has started"
        note = f"The MCP servers ({names}) start with Koroku's agent, {why}"
    statuses = servers.statuses() if servers is not None else ()
    view = McpView(
        statuses,
        config_file=app.parts.config_file,
        note=note,
        restart=lambda name: restart_server(app, name),
    )
    watch.view = view

    def closed(_: None) -> None:
        if watch.view is view:
            watch.view = None

    app.push_screen(view, closed)


def restart_server(app: KorokuApp, name: str) -> None:
    """Start the server ``name`` again, as the screen's one writing job (no turn under it).

    The view follows it through the statuses (starting, then ready or failed).
    """
    agent = app.agent
    servers = agent.mcp if agent is not None else None
    if servers is None:
        app.notify(app.problem or "Koroku is still starting.", severity="error")
        return
    screen = app.main
    if screen.busy():
        return
    screen.begin(servers.restart(name), f"restart of the MCP server {name}")
