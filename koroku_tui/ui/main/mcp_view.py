"""The palette's "MCP servers…": each configured server, its state and its tools; ``r`` restarts.

One line per server (``✓ time · ready with 2 tools``, ``✗ db · failed: db
ended before it was ready; the last line on its stderr: …``, ``… docs ·
starting``); under the list, the selected server's details: how it is
reached, whether its calls ask first, why it failed, and each of its tools
with its description, a ⚠ where the description holds hidden characters
(``McpToolInfo.flagged``) and the reason of a tool left out. The list
redraws whenever a status changes (``mcp_watch.McpWatch``).

Tool names, descriptions and reasons come from another program: every one
is drawn through ``visible`` (hidden characters, terminal escapes included,
as highlighted ``\\u001b``-style escapes), never as markup.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from koroku_tui.agent.tools.mcp.servers import MAX_RESTARTS
from koroku_tui.agent.tools.mcp.status import McpToolInfo, ServerState, ServerStatus
from koroku_tui.ui.main.format import DONE, FAILED, PENDING
from koroku_tui.ui.safe_text import literal, visible

__all__ = [
    "KEYS_HINT",
    "McpView",
    "none_configured",
    "server_details",
    "server_line",
    "state_words",
]

KEYS_HINT = "r restarts the selected server · Escape closes"

_MARKS = {ServerState.READY: DONE, ServerState.FAILED: FAILED, ServerState.STARTING: PENDING}


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def state_words(status: ServerStatus) -> str:
    """``starting``, ``ready with 2 tools`` (and how many are left out), ``failed: why``."""
    if status.state is ServerState.READY:
        offered = sum(1 for tool in status.tools if not tool.left_out)
        words = f"ready with {_count(offered, 'tool')}"
        if left_out := len(status.tools) - offered:
            words += f" ({left_out} left out)"
        return words
    if status.state is ServerState.FAILED:
        return f"failed: {status.reason}"
    return "starting"


def server_line(status: ServerStatus) -> Text:
    """The server's line in the list: a mark, its name, its state."""
    line = literal(f"{_MARKS[status.state]} ")
    line.append_text(visible(status.name, "bold"))
    line.append_text(visible(f" · {state_words(status)}"))
    return line


def _tool_lines(tool: McpToolInfo) -> Text:
    lines = literal("⚠ " if tool.flagged else "  ", "bold yellow")
    lines.append_text(visible(tool.tool, "bold"))
    if tool.left_out:
        lines.append_text(visible(f" · left out: {tool.left_out}", "italic"))
    elif tool.name:
        lines.append(f" · the model calls it {tool.name}", style="dim")
    if tool.description:
        lines.append("\n")
        lines.append_text(visible(tool.description.strip()))
    if tool.flagged:
        lines.append("\n")
        lines.append_text(
            visible(f"⚠ {tool.flagged[:1].upper()}{tool.flagged[1:]}.", "bold yellow")
        )
    return lines


def server_details(status: ServerStatus) -> Text:
    """What the view shows under the list of the selected server."""
    how = "a remote server (streamable HTTP)" if status.transport == "http" else "a local program"
    asks = "its calls run without asking (trusted)" if status.trusted else "each call asks first"
    details = visible(status.name, "bold")
    details.append(f": {how}; {asks}.")
    if status.restarts:
        details.append(f" Started again {_count(status.restarts, 'time')} this session.")
    if status.state is ServerState.FAILED:
        details.append("\n")
        details.append_text(visible(status.reason, "bold"))
        if status.startable:
            details.append(
                f" Koroku starts it again at your next message (at most {MAX_RESTARTS} times a "
                "session); r starts it again now."
            )
        else:
            details.append(" It is not started: Koroku reads its entry when Koroku starts.")
    elif status.state is ServerState.STARTING:
        details.append("\nStarting: its tools show once it has listed them.")
    elif not status.tools:
        details.append("\nIt offers no tools.")
    for tool in status.tools:
        details.append("\n\n")
        details.append_text(_tool_lines(tool))
    return details


def none_configured(config_file: Path) -> str:
    """What the view says when no server is configured: how to add one."""
    return (
        f"No MCP servers are configured. Add one as a [mcp_servers.NAME] table in {config_file} "
        '(command = "…" for a local server, url = "…" for a remote one).'
    )


class McpView(ModalScreen[None]):
    """The MCP servers of this run, live; ``r`` restarts the selected one, Escape closes."""

    DEFAULT_CSS = """
    McpView {
        align: center middle;
        background: $background 60%;
    }
    McpView > Vertical {
        width: 100;
        max-width: 100%;
        height: 90%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    McpView #mcp-title {
        text-style: bold;
    }
    McpView #mcp-list {
        height: auto;
        max-height: 10;
        margin: 1 0;
    }
    McpView #mcp-detail {
        height: 1fr;
    }
    McpView #mcp-keys {
        color: $text-muted;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "restart", "Restart", id="mcp.restart"),
        Binding("escape,q", "close", "Close", id="mcp.close"),
    ]

    def __init__(
        self,
        statuses: tuple[ServerStatus, ...],
        *,
        config_file: Path,
        restart: Callable[[str], None],
        note: str = "",
    ) -> None:
        super().__init__()
        self.statuses = statuses
        self.config_file = config_file
        self.note = note
        self._restart = restart

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("MCP servers"), id="mcp-title")
            if self.note:
                yield Static(literal(self.note, "italic"), id="mcp-note")
            yield OptionList(id="mcp-list")
            with VerticalScroll(id="mcp-detail"):
                yield Static("", id="mcp-detail-text")
            yield Static(Text(KEYS_HINT, "italic"), id="mcp-keys")

    def on_mount(self) -> None:
        self.show(self.statuses)
        self.query_one(OptionList).focus()

    def show(self, statuses: tuple[ServerStatus, ...]) -> None:
        """Redraw with ``statuses`` (the selected server stays selected)."""
        self.statuses = statuses
        listed = self.query_one(OptionList)
        names = [status.name for status in statuses]
        if [option.id for option in listed.options] == names:  # the same servers: new lines
            for status in statuses:
                listed.replace_option_prompt(status.name, server_line(status))
        else:
            chosen = listed.highlighted_option
            listed.set_options(Option(server_line(s), id=s.name) for s in statuses)
            if names:
                keep = chosen.id if chosen is not None and chosen.id in names else names[0]
                listed.highlighted = names.index(keep)
        listed.display = bool(statuses)
        for note in self.query("#mcp-note"):  # "still starting": the statuses say more now
            note.display = not statuses
        self._show_details()

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show_details()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()  # Enter on a server: its details are already shown

    def _selected_status(self) -> ServerStatus | None:
        option = self.query_one(OptionList).highlighted_option
        return next((s for s in self.statuses if option and s.name == option.id), None)

    def _show_details(self) -> None:
        status = self._selected_status()
        if status is not None:
            shown = server_details(status)
        elif not self.statuses and not self.note:
            shown = literal(none_configured(self.config_file))
        else:
            shown = Text()
        self.query_one("#mcp-detail-text", Static).update(shown)

    def action_restart(self) -> None:
        """Start the selected server again (the screen's job; the list follows it)."""
        status = self._selected_status()
        if status is not None:
            self._restart(status.name)

    def action_close(self) -> None:
        """Back to the conversation."""
        self.dismiss(None)
