"""The agent's tools: registry, executor, approval, results and the built-ins.

Typical use by the agent loop::

    registry = default_registry()
    context = ToolSettings(workspace=Path.cwd(), memory_dir=settings.memory_dir,
                          approval_callback=ui_approval)
    config = types.GenerateContentConfig(tools=[registry.tool()], ...)
    results = [await registry.execute(call, context) for call in response.function_calls]
    content, metadata = tool_responses(results)

The names below are imported on first use, as in ``koroku_tui.agent``: the
approval dialog's module (``tools.approval``) loads before the app's first
frame, and must not bring the registry and its SDK with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from koroku_tui.agent.lazy_exports import lazy_getattr

if TYPE_CHECKING:  # for type checkers; at run time __getattr__ imports them
    from koroku_tui.agent.tools.approval import (
        ApprovalCallback,
        ApprovalDecision,
        ApprovalRequest,
    )
    from koroku_tui.agent.tools.builtin import RUN_COMMAND_TIMEOUT, default_registry
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

_MODULE_OF = {
    "ApprovalCallback": "approval",
    "ApprovalDecision": "approval",
    "ApprovalRequest": "approval",
    "RUN_COMMAND_TIMEOUT": "builtin",
    "default_registry": "builtin",
    "DEFAULT_TIMEOUT": "registry",
    "ToolRegistry": "registry",
    "ToolSpec": "registry",
    "ToolError": "result",
    "ToolResponses": "result",
    "ToolResult": "result",
    "tool_responses": "result",
    "MAX_OUTPUT_CHARS": "tool_settings",
    "ToolSettings": "tool_settings",
}
"""The module (under ``koroku_tui.agent.tools``) that defines each name of ``__all__``."""


__getattr__ = lazy_getattr(__name__, _MODULE_OF, globals())
