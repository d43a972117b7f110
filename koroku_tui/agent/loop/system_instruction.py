"""The system instruction a session's requests carry, kept up with what it names.

It lists the tools offered (an MCP server's come and go between turns) and
ends with the instruction files (re-read when one changed). Each is checked
at the start of a turn: the tool registry's ``version`` and the loaded files'
identity say whether anything changed, so an unchanged turn costs a few
``stat`` calls and no new text.
"""

from __future__ import annotations

from pathlib import Path

from koroku_tui.agent import instructions
from koroku_tui.agent.context.instruction_files import InstructionFiles, LoadedInstructions
from koroku_tui.agent.tools import ToolRegistry
from koroku_tui.agent.tools.approval_rules import ApprovalRules
from koroku_tui.agent.wire.request import RequestSettings

__all__ = ["SystemInstruction"]


class SystemInstruction:
    """Writes ``request.system_instruction`` whenever the tools or the files it names change."""

    def __init__(
        self,
        request: RequestSettings,
        memory_dir: Path,
        tools: ToolRegistry,
        rules: ApprovalRules,
    ) -> None:
        self._request = request
        self._memory_dir = memory_dir
        self._tools = tools
        self._rules = rules
        self._told: tuple[int, LoadedInstructions | None] | None = None
        self.follow(None)

    def follow(self, files: InstructionFiles | None) -> None:
        """Bring the instruction up to date: the tools offered now, ``files`` as they are now."""
        loaded = files.refresh() if files is not None else None
        told = (self._tools.version, loaded)
        if self._told is not None and told[0] == self._told[0] and loaded is self._told[1]:
            return
        self._told = told
        self._request.system_instruction = instructions.system_instruction(
            self._memory_dir, self._tools, self._rules, loaded
        )
