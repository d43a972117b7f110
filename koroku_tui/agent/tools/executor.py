"""Running one function call: the same rules for every tool, whatever its source.

Steps: find the tool, validate the arguments, apply the user's approval
rules (deny, allow, or ask), ask for approval if a rule or its spec says so
(with a preview of the change, when it has one), run it under its time
limit, make its text safe and cap it. Every failure becomes an error
result the model can read; only cancellation escapes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from koroku_tui.agent.tools.approval import ApprovalRequest
from koroku_tui.agent.tools.approval_rules import Verdict
from koroku_tui.agent.tools.arguments import ArgumentsError
from koroku_tui.agent.tools.denials import rule_denial
from koroku_tui.agent.tools.result import ToolError, ToolResult
from koroku_tui.agent.tools.spec import ToolSpec
from koroku_tui.agent.tools.tool_settings import ToolSettings

if TYPE_CHECKING:
    from google.genai import types

__all__ = ["cap_text", "cut_note", "execute_call", "unicode_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")


async def execute_call(
    spec: ToolSpec | None,
    call: types.FunctionCall,
    context: ToolSettings,
    available: Sequence[str],
) -> ToolResult:
    """Run ``call`` with the tool ``spec`` (``None``: no tool has its name); never raises.

    ``available`` names the registered tools, for the model to pick from when
    it named none of them. Cancellation propagates.
    """
    result = await _execute(spec, call, context, available)
    limit = context.max_output_chars
    if result.output is not None:
        output = cap_text(unicode_text(result.output), limit)
        if output != result.output:
            return dataclasses.replace(result, output=output)
    if result.error is not None:
        error = cap_text(unicode_text(result.error), limit)
        if error != result.error:
            return dataclasses.replace(result, error=error)
    return result


async def _execute(
    spec: ToolSpec | None,
    call: types.FunctionCall,
    context: ToolSettings,
    available: Sequence[str],
) -> ToolResult:
    name = call.name or ""
    if spec is None:
        known = ", ".join(available) or "none"
        return ToolResult.failure(
            call, f"Unknown tool {name!r}. Available tools: {known}.", name=name
        )
    try:
        kwargs = spec.arguments.validate(dict(call.args or {}))
    except ArgumentsError as exc:
        return ToolResult.failure(call, f"Invalid arguments for {name}: {exc}.")

    refusal = await _seek_approval(spec, call, kwargs, context)
    if refusal is not None:
        return dataclasses.replace(ToolResult.failure(call, refusal), refused=True)

    if spec.arguments.context_param is not None:
        kwargs[spec.arguments.context_param] = context
    limit = context.timeout_for(name, spec.timeout)
    # asyncio.CancelledError is a BaseException: it passes every clause
    # below, so the agent's cancel reaches the tool and the caller.
    try:
        async with asyncio.timeout(limit) as deadline:
            value = await _invoke(spec.func, kwargs)
    except TimeoutError as exc:
        if not deadline.expired():
            # The tool's own TimeoutError (e.g. a socket), not our limit.
            return ToolResult.failure(call, _describe_exception(exc))
        # A thread cannot be stopped: its result is abandoned instead.
        outcome = "was stopped" if spec.stoppable else "its result will be ignored"
        note = f" {spec.timeout_note}" if spec.timeout_note else ""
        # asyncio.timeout raises from the tool's CancelledError; a tool may
        # have noted what it produced before it was stopped (run_command).
        produced = "\n".join(getattr(exc.__cause__, "__notes__", []))
        if produced:
            note += f"\nOutput before it was stopped:\n{produced}"
        return ToolResult.failure(call, f"{name} timed out after {limit:g} s and {outcome}.{note}")
    except ToolError as exc:
        return ToolResult.failure(call, str(exc))
    except Exception as exc:
        return ToolResult.failure(call, _describe_exception(exc))
    try:
        text = _as_text(value)
    except Exception as exc:  # keys json cannot write, a cycle, a __str__ that raises
        problem = _describe_exception(exc)
        return ToolResult.failure(
            call, f"{name} answered with a value that is not text or JSON ({problem})."
        )
    return ToolResult.success(call, text)


async def _seek_approval(
    spec: ToolSpec, call: types.FunctionCall, kwargs: dict[str, Any], context: ToolSettings
) -> str | None:
    """``None`` when the call may run, else the refusal for the model.

    The rules first: one that denies refuses (even with auto-approve), one
    that allows runs the call; else the call asks if a rule or the spec says so.
    The command the rules read is the validated argument: what would run.
    """
    command = kwargs.get(spec.command_argument) if spec.command_argument else None
    ruling = context.rules.rule_for(spec.name, command if isinstance(command, str) else None)
    if ruling.verdict is Verdict.DENY:
        return rule_denial(spec.name, ruling.rule)
    if ruling.verdict is Verdict.ALLOW:
        return None
    if ruling.verdict is None and not spec.needs_approval:
        return None
    change = None
    if spec.preview is not None and context.will_ask(spec.name):
        # Read in a thread: the file is opened without blocking, but it may be large.
        change = await asyncio.to_thread(spec.preview, kwargs, context.workspace)
    request = ApprovalRequest(
        spec=spec,
        args=dict(call.args or {}),
        call_id=call.id,
        workspace=context.workspace,
        change=change,
        unapplied=ruling.unapplied,
    )
    return await context.seek_approval(request)


async def _invoke(func: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    if inspect.iscoroutinefunction(func):
        return await func(**kwargs)
    # Sync tools run in a worker thread so file I/O never blocks the UI loop.
    # A thread cannot be killed: on timeout the result is abandoned, not stopped.
    value = await asyncio.to_thread(functools.partial(func, **kwargs))
    if inspect.isawaitable(value):
        value = await value
    return value


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, default=str)


def _describe_exception(exc: BaseException) -> str:
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def unicode_text(text: str) -> str:
    """``text`` without lone surrogates, which neither Gemini's JSON nor the database can hold.

    A tool may hand back text decoded with ``surrogateescape`` (a file name,
    a command's output): each such byte becomes a ``\\xNN`` escape, any other
    lone surrogate U+FFFD.
    """
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_escape_surrogate, text)


def _escape_surrogate(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"


def cap_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, keeping the head and the tail.

    The tail is kept too because the end of a log or a failing command is
    often what matters; the note in between says how much was cut.
    """
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    tail = limit - head
    note = cut_note(len(text) - limit, limit)
    return text[:head] + note + (text[-tail:] if tail else "")


def cut_note(cut: int, limit: int) -> str:
    """What stands where ``cut`` characters were taken out of a text capped at ``limit``."""
    return f"\n\n[... {cut:,} characters cut: output capped at {limit:,} characters ...]\n\n"
