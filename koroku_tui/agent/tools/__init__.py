"""The agent's tools: specs, registry, executor, approval, results and the built-ins.

A tool is a :class:`ToolSpec` (``spec.py``): what it is (kind, approval,
time limit, preview, row, source) and how to call it. The built-ins are
``builtin/`` (one module per family, one registration line per tool).

Typical use by the agent loop::

    registry = default_registry()
    context = ToolSettings(workspace=Path.cwd(), memory_dir=settings.memory_dir,
                          approval_callback=ui_approval)
    config = types.GenerateContentConfig(tools=[registry.tool()], ...)
    results = [await registry.execute(call, context) for call in response.function_calls]
    content, metadata = tool_responses(results)

The names below are imported on first use, as in ``koroku_tui.agent``: a
screen that names one light type must not bring the built-in tools with it.
None of this package imports the Gemini SDK until a declaration is built:
the app builds its registry (and reads specs) before its first frame.
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
    from koroku_tui.agent.tools.registry import ToolRegistry
    from koroku_tui.agent.tools.result import ToolError, ToolResponses, ToolResult, tool_responses
    from koroku_tui.agent.tools.spec import (
        DEFAULT_TIMEOUT,
        RowStyle,
        ToolKind,
        ToolLookup,
        ToolSource,
        ToolSpec,
    )
    from koroku_tui.agent.tools.tool_settings import MAX_OUTPUT_CHARS, ToolSettings

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_OUTPUT_CHARS",
    "RUN_COMMAND_TIMEOUT",
    "ApprovalCallback",
    "ApprovalDecision",
    "ApprovalRequest",
    "RowStyle",
    "ToolError",
    "ToolKind",
    "ToolLookup",
    "ToolRegistry",
    "ToolResponses",
    "ToolResult",
    "ToolSettings",
    "ToolSource",
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
    "ToolRegistry": "registry",
    "DEFAULT_TIMEOUT": "spec",
    "RowStyle": "spec",
    "ToolKind": "spec",
    "ToolLookup": "spec",
    "ToolSource": "spec",
    "ToolSpec": "spec",
    "ToolError": "result",
    "ToolResponses": "result",
    "ToolResult": "result",
    "tool_responses": "result",
    "MAX_OUTPUT_CHARS": "tool_settings",
    "ToolSettings": "tool_settings",
}
"""The module (under ``koroku_tui.agent.tools``) that defines each name of ``__all__``."""


__getattr__ = lazy_getattr(__name__, _MODULE_OF, globals())
