"""Running the calls of one model step, and answering them all in one user event.

Each call is counted by the turn's guard first: within the budget it runs
(through the registry, which asks for approval where needed), beyond it it is
answered with an error without running. A third identical call in a row gets
the nudge added to its result. A call whose arguments nest too deeply (see
``call_depth.py``) is answered with an error without running, or asking.
``on_tool_call`` / ``on_tool_result`` bracket every call, refused ones
included, so a sidebar row never stays "running".
A result holding the live API key has it replaced before anyone sees it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from google.genai import types

from koroku_tui.agent import instructions
from koroku_tui.agent.hooks import HookEmitter, ToolCallFinished, ToolCallStarted
from koroku_tui.agent.loop.guardrail import TOOL_BUDGET_EXHAUSTED, TurnGuard
from koroku_tui.agent.tools import ToolRegistry, ToolResult, ToolSettings, tool_responses
from koroku_tui.agent.tools.file_keeping import running_call
from koroku_tui.agent.wire.call_depth import too_deep_refusal
from koroku_tui.agent.wire.redaction import Redactor
from koroku_tui.events import SessionEvent

__all__ = ["answer_unfinished", "calls_of", "refuse_calls", "responses_event", "run_calls"]


def calls_of(content: types.Content) -> list[types.FunctionCall]:
    """The function calls of a model step, in order."""
    return [p.function_call for p in content.parts or () if p.function_call is not None]


def _redacted(result: ToolResult, redactor: Redactor) -> ToolResult:
    if result.error is not None:
        return dataclasses.replace(result, error=redactor.text(result.error))
    return dataclasses.replace(result, output=redactor.text(result.output or ""))


def _with_note(result: ToolResult, note: str) -> ToolResult:
    if result.error is not None:
        return dataclasses.replace(result, error=f"{result.error}\n\n{note}")
    return dataclasses.replace(result, output=f"{result.output or ''}\n\n{note}")


async def _run_call(
    call: types.FunctionCall,
    index: int,
    guard: TurnGuard,
    tools: ToolRegistry,
    tool_settings: ToolSettings,
    emitter: HookEmitter,
    results: list[ToolResult],
    announced: list[types.FunctionCall],
    redactor: Redactor,
    row_id: int | None,
) -> None:
    allowed = guard.count(call.name, call.args)
    started = ToolCallStarted(call, index, guard.calls_used, over_budget=not allowed)
    announced.append(call)  # before the hook: a cancel inside it never announces it twice
    await emitter.emit("on_tool_call", started)
    clock = time.perf_counter()
    too_deep = too_deep_refusal(call.args)
    if not allowed:
        result = ToolResult.failure(call, TOOL_BUDGET_EXHAUSTED)
    elif too_deep is not None:
        result = ToolResult.failure(call, too_deep)  # never shown for approval either
    else:
        with running_call(row_id, index):  # write_file's snapshot names the call
            result = await tools.execute(call, tool_settings)
        if guard.needs_nudge:
            result = _with_note(result, instructions.repeated_call_nudge(result.name, guard.streak))
        result = _redacted(result, redactor)
    duration = time.perf_counter() - clock
    # Recorded before the hook runs: a cancel that lands inside a slow UI
    # handler must not turn a finished call into "may not have run".
    results.append(result)
    await emitter.emit("on_tool_result", ToolCallFinished(call, result, duration))


async def run_calls(
    calls: Sequence[types.FunctionCall],
    guard: TurnGuard,
    tools: ToolRegistry,
    tool_settings: ToolSettings,
    emitter: HookEmitter,
    results: list[ToolResult],
    redactor: Redactor | None = None,
    *,
    announced: list[types.FunctionCall],
    row_id: int | None = None,
) -> None:
    """Run ``calls`` in order, appending each result to ``results`` as it finishes.

    Results are appended as they come so that, if the step is cancelled part
    way, the caller still holds those of the calls that finished, and each
    call to ``announced`` as the hooks are told it starts (the caller tells
    of the others when it answers them). Each result passes through
    ``redactor`` first (the agent's: the live API key). ``row_id``: the
    stored model row holding the calls (file snapshots name it).
    """
    redactor = redactor or Redactor(())
    for index, call in enumerate(calls):
        await _run_call(
            call, index, guard, tools, tool_settings, emitter, results, announced, redactor, row_id
        )


async def refuse_calls(
    calls: Sequence[types.FunctionCall],
    reason: str,
    guard: TurnGuard,
    emitter: HookEmitter,
    results: list[ToolResult],
    *,
    announced: list[types.FunctionCall],
) -> None:
    """Answer every call with ``reason`` without running it (or asking the user).

    The hooks see each call start and finish, as for a call over the budget,
    so a UI shows the call with its "not run" answer. The guard does not
    count them: nothing ran.
    """
    for index, call in enumerate(calls):
        started = ToolCallStarted(call, index, guard.calls_used)
        announced.append(call)
        await emitter.emit("on_tool_call", started)
        result = ToolResult.failure(call, reason)
        results.append(result)
        await emitter.emit("on_tool_result", ToolCallFinished(call, result, 0.0))


def answer_unfinished(
    calls: Sequence[types.FunctionCall], done: Sequence[ToolResult], reason: str
) -> list[ToolResult]:
    """Error results, saying ``reason``, for the calls after the ``done`` ones."""
    return [ToolResult.failure(call, reason) for call in calls[len(done) :]]


def responses_event(results: Sequence[ToolResult]) -> tuple[SessionEvent, types.Content]:
    """All responses of one step as ONE user event (FCMetadata per part) and its Content."""
    gathered = tool_responses(results)
    return SessionEvent.from_content(gathered.content, gathered.metadata), gathered.content
