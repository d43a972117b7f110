"""The agent's tools: registry, executor, approval, results and the built-ins.

Typical use by the agent loop::

    registry = default_registry()
    context = ToolSettings(workspace=Path.cwd(), memory_dir=settings.memory_dir,
                          approval_callback=ui_approval)
    config = types.GenerateContentConfig(tools=[registry.tool()], ...)
    results = [await registry.execute(call, context) for call in response.function_calls]
    content, metadata = tool_responses(results)
"""

from __future__ import annotations

from koroku_tui.agent.tools.approval import ApprovalCallback, ApprovalDecision, ApprovalRequest
from koroku_tui.agent.tools.builtins import RUN_COMMAND_TIMEOUT, default_registry
from koroku_tui.agent.tools.registry import DEFAULT_TIMEOUT, ToolRegistry, ToolSpec
from koroku_tui.agent.tools.result import ToolError, ToolResponses, ToolResult, tool_responses
from koroku_tui.agent.tools.tool_settings import MAX_OUTPUT_CHARS, ToolSettings

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_OUTPUT_CHARS",
    "RUN_COMMAND_TIMEOUT",
    "ApprovalCallback",
    "ApprovalDecision",
    "ApprovalRequest",
    "ToolError",
    "ToolRegistry",
    "ToolResponses",
    "ToolResult",
    "ToolSettings",
    "ToolSpec",
    "default_registry",
    "tool_responses",
]
