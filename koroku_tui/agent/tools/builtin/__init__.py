"""The tools every Koroku session has: one module per family, one line per tool.

Adding a built-in tool is one module here (a typed function whose Google-style
docstring describes it and its parameters; see ``memory.py``) and one line
in :func:`register_builtins` saying what it is: its kind, whether it asks
first, its time limit, its preview, its row. The declaration, the system
instruction, the approval rule and the transcript row all follow from that
line (``koroku_tui.agent.tools.spec``).
"""

from __future__ import annotations

import functools

from koroku_tui.agent.recall.backlog import PRINT_WAIT
from koroku_tui.agent.tools.builtin import files, memory, recall, remembering, shell
from koroku_tui.agent.tools.change_preview import preview_file_write
from koroku_tui.agent.tools.registry import ToolRegistry
from koroku_tui.agent.tools.spec import DEFAULT_TIMEOUT, RowStyle, ToolKind, ToolSpec

__all__ = [
    "RUN_COMMAND_TIMEOUT",
    "SEARCH_HISTORY_TIMEOUT",
    "default_registry",
    "register_builtins",
]

RUN_COMMAND_TIMEOUT = 60.0
"""Builds and test runs take longer than file reads; other tools get DEFAULT_TIMEOUT."""
SEARCH_HISTORY_TIMEOUT = PRINT_WAIT + DEFAULT_TIMEOUT
"""search_history's least limit in ``--print`` (``search_timeout``), whose search first waits
up to ``PRINT_WAIT`` for the history's vectors. Cut at 30 s, a first ``--print`` over a year
of history (5,000 messages, ~40 s of MiniLM) told the model the search had timed out, and
found nothing. The app's searches never wait for indexing: the default limit holds there."""


def register_builtins(
    registry: ToolRegistry,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    search_timeout: float | None = None,
) -> None:
    """Register the built-in tools in ``registry``, in the order the model sees them.

    Reading tools run freely; those that change files or run commands ask
    the user first. ``remember`` and ``forget`` run freely too: they touch
    only Koroku's own memories, which the user sees, edits and deletes in the
    history screen's memory pane, every change shows in the transcript, and
    a dialog for each fact the user just asked to keep would ask twice.
    ``timeout`` is the limit of every tool but run_command
    (``RUN_COMMAND_TIMEOUT``) and, given ``search_timeout`` (``--print``:
    ``SEARCH_HISTORY_TIMEOUT``), search_history's, at least that; a
    ``ToolSettings.timeouts`` entry overrides any per session.
    """
    reads, history = ToolKind.READS_FILES, ToolKind.READS_HISTORY
    registry.register(files.read_file, kind=reads, timeout=timeout)
    registry.register(files.list_directory, kind=reads, timeout=timeout)
    registry.register(
        files.write_file,
        kind=ToolKind.CHANGES_FILES,
        needs_approval=True,
        preview=preview_file_write,
        timeout=timeout,
    )
    registry.register(
        shell.run_command,
        kind=ToolKind.RUNS_COMMANDS,
        needs_approval=True,
        command_argument="command",
        timeout=RUN_COMMAND_TIMEOUT,
        timeout_note="The command and every process it started were killed.",
    )
    registry.register(memory.read_memory, kind=ToolKind.READS_MEMORY, timeout=timeout)
    registry.register(
        recall.search_history,
        kind=history,
        row=RowStyle.SEARCH_HITS,
        timeout=max(timeout, search_timeout or timeout),
    )
    registry.register(recall.read_session, kind=history, timeout=timeout)
    keeps = ToolKind.KEEPS_MEMORIES
    registry.register(remembering.remember, kind=keeps, timeout=timeout)
    registry.register(remembering.forget, kind=keeps, timeout=timeout)


def default_registry(
    *, timeout: float = DEFAULT_TIMEOUT, search_timeout: float | None = None
) -> ToolRegistry:
    """A new registry holding the built-in tools (see :func:`register_builtins`)."""
    registry = ToolRegistry()
    for spec in _builtin_specs(timeout, search_timeout):
        registry.add(spec)
    return registry


@functools.cache
def _builtin_specs(timeout: float, search_timeout: float | None) -> tuple[ToolSpec, ...]:
    """The built-in specs, described once per limit (specs are frozen, so shared).

    Describing them builds a pydantic model per tool; the command line (for
    ``--yes``'s help), the app and the agent all ask for them at start.
    """
    registry = ToolRegistry()
    register_builtins(registry, timeout=timeout, search_timeout=search_timeout)
    return tuple(registry)
