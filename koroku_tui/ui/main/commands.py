"""The built-in commands: one table that both the palette (ctrl+p) and ``/`` read.

Each row is an action of the main screen with its slash name, its palette
title and a one-line description. ``MainScreen.system_commands`` yields the
rows as the palette's commands and the slash list (``ui.main.slash``) offers
the same rows as ``/name``: the two cannot disagree. A new action gets a row
here, and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from textual.app import SystemCommand

if TYPE_CHECKING:
    from koroku_tui.ui.main.screen import MainScreen

__all__ = ["BUILTIN_COMMANDS", "BuiltinCommand", "builtin", "palette_commands"]


@dataclass(frozen=True)
class BuiltinCommand:
    """One action of the main screen, as ``/name`` and as a palette entry."""

    name: str
    """Typed after the slash (``new`` for ``/new``)."""
    title: str
    """The palette's name for it."""
    description: str
    """One line, shown beside it in the palette and in the slash list."""
    run: Callable[[MainScreen], object]


def _act(action: str) -> Callable[[MainScreen], object]:
    """Run the screen's ``action_<action>`` (the method its key binding runs)."""
    return lambda screen: getattr(screen, f"action_{action}")()


def _memories(screen: MainScreen) -> None:
    screen.sessions.open_history(memories=True)


def _instructions(screen: MainScreen) -> None:
    from koroku_tui.ui.main.project_trust import show_instructions

    show_instructions(screen.koroku)


def _mcp(screen: MainScreen) -> None:
    from koroku_tui.ui.main.mcp_watch import show_mcp_servers

    show_mcp_servers(screen.koroku)


def _help(screen: MainScreen) -> None:
    from koroku_tui.ui.main.help_view import show_help  # a screen: imported when first shown

    show_help(screen)


def _cancel(screen: MainScreen) -> None:
    # Not Escape's action: with no turn running, that one is half of a double Escape,
    # and the next Escape would open the rewind list.
    if screen.running:
        screen.action_cancel_turn()
    else:
        screen.app.notify("No turn is running.")


def _quit(screen: MainScreen) -> None:
    screen.app.exit()


BUILTIN_COMMANDS: tuple[BuiltinCommand, ...] = (
    BuiltinCommand("new", "New session", "Start a fresh conversation", _act("new_session")),
    BuiltinCommand("compact", "Compact now", "Summarise older turns", _act("compact")),
    BuiltinCommand("history", "History", "Browse and search past sessions", _act("history")),
    BuiltinCommand("rewind", "Rewind…", "Go back to before a message you sent", _act("rewind")),
    BuiltinCommand("fork", "Fork…", "Branch this conversation into a new session", _act("fork")),
    BuiltinCommand(
        "undo-restore",
        "Undo file restore",
        "Put back what the last restore replaced",
        _act("undo_restore"),
    ),
    BuiltinCommand(
        "model", "Change model…", "The models Gemini offers, for this session", _act("model")
    ),
    BuiltinCommand("mcp", "MCP servers…", "Each server's state and tools; restart one", _mcp),
    BuiltinCommand(
        "memory", "Memories", "The memories and suggestions, in the history screen", _memories
    ),
    BuiltinCommand(
        "stats",
        "Usage statistics",
        "Tokens, requests, tools and time waiting, for this session and all history",
        _act("show_stats"),
    ),
    BuiltinCommand("help", "Help", "The keys and the commands, each with what it does", _help),
    BuiltinCommand(
        "sidebar", "Tool sidebar", "Show or hide the tool calls", _act("toggle_sidebar")
    ),
    BuiltinCommand("cancel", "Cancel turn", "Stop the running turn", _cancel),
    BuiltinCommand(
        "unqueue",
        "Remove queued message",
        "The newest message waiting for the turn",
        _act("unqueue"),
    ),
    BuiltinCommand("older", "Older messages", "Load earlier messages", _act("older")),
    BuiltinCommand(
        "newest", "Newest message", "Down to the end of the conversation", _act("newest")
    ),
    BuiltinCommand(
        "copy", "Copy last answer", "The newest answer, to the clipboard", _act("copy_answer")
    ),
    BuiltinCommand(
        "instructions",
        "Show instructions",
        "The instruction files the model is told, whole",
        _instructions,
    ),
    BuiltinCommand("quit", "Quit", "Close Koroku (the conversation is kept)", _quit),
)
"""Every built-in command, in the order the slash list shows them."""

_BY_NAME = {command.name: command for command in BUILTIN_COMMANDS}


def builtin(name: str) -> BuiltinCommand | None:
    """The built-in command ``/name`` (``None``: no such built-in)."""
    return _BY_NAME.get(name)


def palette_commands(screen: MainScreen) -> Iterator[SystemCommand]:
    """What the palette (ctrl+p) offers on ``screen``: every row of the table."""
    for command in BUILTIN_COMMANDS:
        yield SystemCommand(command.title, command.description, partial(command.run, screen))
