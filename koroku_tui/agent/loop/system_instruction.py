"""The system instruction a session's requests carry, kept up with what it names.

It lists the tools offered (an MCP server's come and go between turns), holds
the kept memories (read before each request: one ``remember`` counts from the
next request) and ends with the instruction files (re-read when one changed).
The tools and files are checked at the start of a turn: the tool registry's
``version`` and the loaded files' identity say whether anything changed, so
an unchanged turn costs a few ``stat`` calls and no new text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from koroku_tui.agent import instructions
from koroku_tui.agent.context.instruction_files import InstructionFiles, LoadedInstructions
from koroku_tui.agent.context.remembered import MemorySource, prompt_memories_text
from koroku_tui.agent.tools import ToolRegistry
from koroku_tui.agent.tools.approval_rules import ApprovalRules
from koroku_tui.agent.wire.request import RequestSettings
from koroku_tui.events import Event

__all__ = ["SystemInstruction"]


class SystemInstruction:
    """Writes ``request.system_instruction`` whenever the tools or the files it names change."""

    def __init__(
        self,
        request: RequestSettings,
        memory_dir: Path,
        tools: ToolRegistry,
        rules: ApprovalRules,
        memories: MemorySource | None = None,
    ) -> None:
        self._request = request
        self._source = memories
        self._memory_dir = memory_dir
        self._tools = tools
        self._rules = rules
        self._told: tuple[int, LoadedInstructions | None, str] | None = None
        self._loaded: LoadedInstructions | None = None
        self._memories = ""
        self.follow(None)

    def follow(self, files: InstructionFiles | None) -> None:
        """Bring the instruction up to date: the tools offered now, ``files`` as they are now."""
        self._loaded = files.refresh() if files is not None else None
        self._write()

    async def recall(self, events: Sequence[Event]) -> None:
        """Read the kept memories for the next request over ``events`` (a store's, if any).

        One small read per request: a memory kept, edited or deleted (here or
        in another window) counts from the next request.
        """
        if self._source is None:
            return
        memories = await prompt_memories_text(self._source, events)
        if memories is not None:
            self._memories = memories
            self._write()

    def _write(self) -> None:
        loaded = self._loaded
        told = (self._tools.version, loaded, self._memories)
        if self._told is not None:
            version, files, memories = self._told
            if version == told[0] and files is loaded and memories == told[2]:
                return
        self._told = told
        self._request.system_instruction = instructions.system_instruction(
            self._memory_dir, self._tools, self._rules, loaded, self._memories
        )
