"""The tools every Koroku session has, registered in one place."""

from __future__ import annotations

from koroku_tui.agent.tools.builtin.files import list_directory, read_file, write_file
from koroku_tui.agent.tools.builtin.memory import read_memory
from koroku_tui.agent.tools.builtin.recall import read_session, search_history
from koroku_tui.agent.tools.builtin.shell import run_command
from koroku_tui.agent.tools.registry import DEFAULT_TIMEOUT, ToolRegistry

__all__ = ["RUN_COMMAND_TIMEOUT", "default_registry"]

RUN_COMMAND_TIMEOUT = 60.0
"""Builds and test runs take longer than file reads; other tools get DEFAULT_TIMEOUT."""


def default_registry(*, timeout: float = DEFAULT_TIMEOUT) -> ToolRegistry:
    """A registry with the built-in tools.

    read_file, list_directory, read_memory, search_history and read_session
    only read, so they run freely; write_file and
    run_command change things, so they need the user's approval. ``timeout``
    is the limit of every tool but run_command (``RUN_COMMAND_TIMEOUT``); a
    ``ToolSettings.timeouts`` entry overrides either per session.
    """
    registry = ToolRegistry()
    registry.register(read_file, timeout=timeout)
    registry.register(list_directory, timeout=timeout)
    registry.register(write_file, needs_approval=True, timeout=timeout)
    registry.register(
        run_command,
        needs_approval=True,
        timeout=RUN_COMMAND_TIMEOUT,
        timeout_note="The command and every process it started were killed.",
    )
    registry.register(read_memory, timeout=timeout)
    registry.register(search_history, timeout=timeout)
    registry.register(read_session, timeout=timeout)
    return registry
