"""The tool registry: declarations for Gemini and a never-raising executor.

Register typed functions (sync or async); the registry turns each into a
``types.FunctionDeclaration`` and runs calls through validation, approval,
a time limit and an output cap. Only cancellation escapes ``execute``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from google.genai import types
from pydantic import ValidationError

from koroku_tui.agent.tools.approval import ApprovalRequest
from koroku_tui.agent.tools.change_preview import preview_call
from koroku_tui.agent.tools.result import ToolError, ToolResult
from koroku_tui.agent.tools.schema import ArgumentsModel, build_arguments_model, parse_docstring
from koroku_tui.agent.tools.tool_settings import ToolSettings

__all__ = ["DEFAULT_TIMEOUT", "ToolRegistry", "ToolSpec", "cap_text", "unicode_text"]

DEFAULT_TIMEOUT = 30.0
"""Seconds a tool may run unless it was registered with another limit."""

F = TypeVar("F", bound=Callable[..., Any])
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_ECHOED_INPUT = 80
"""A bad argument is quoted back to the model at most this long."""


@dataclass(frozen=True)
class ToolSpec:
    """One registered tool: the function and everything known about it."""

    name: str
    description: str
    func: Callable[..., Any]
    arguments: ArgumentsModel
    needs_approval: bool = False
    timeout: float = DEFAULT_TIMEOUT
    timeout_note: str = ""
    """Added to the timeout error, e.g. to say what was killed."""

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        needs_approval: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        timeout_note: str = "",
    ) -> ToolSpec:
        """Describe ``func``: name, docstring summary and per-parameter docs, typed schema."""
        tool_name = name or func.__name__
        doc = parse_docstring(inspect.getdoc(func))
        return cls(
            name=tool_name,
            description=description or doc.summary,
            func=func,
            arguments=build_arguments_model(func, tool_name, doc.params, ToolSettings),
            needs_approval=needs_approval,
            timeout=timeout,
            timeout_note=timeout_note,
        )

    def declaration(self) -> types.FunctionDeclaration:
        """The ``FunctionDeclaration`` Gemini sees for this tool."""
        schema = self.arguments.json_schema()
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description or None,
            # Left out for a tool without parameters, as the SDK does: an empty
            # object schema says nothing, and the API has rejected OBJECT
            # parameters without properties.
            parameters_json_schema=schema if schema.get("properties") else None,
        )


class ToolRegistry:
    """The tools the agent offers, in registration order."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}

    @overload
    def register(
        self,
        func: F,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        needs_approval: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        timeout_note: str = "",
    ) -> F: ...
    @overload
    def register(
        self,
        func: None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        needs_approval: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        timeout_note: str = "",
    ) -> Callable[[F], F]: ...

    def register(
        self,
        func: F | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        needs_approval: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        timeout_note: str = "",
    ) -> F | Callable[[F], F]:
        """Register a function as a tool; usable plain or as a decorator with options.

        Raises ``ValueError`` if the name is taken and ``TypeError`` if the
        signature cannot be described (see ``build_arguments_model``).
        """

        def add(fn: F) -> F:
            spec = ToolSpec.from_function(
                fn,
                name=name,
                description=description,
                needs_approval=needs_approval,
                timeout=timeout,
                timeout_note=timeout_note,
            )
            if spec.name in self._tools:
                raise ValueError(f"a tool named {spec.name!r} is already registered")
            self._tools[spec.name] = spec
            return fn

        return add(func) if func is not None else add

    def get(self, name: str) -> ToolSpec | None:
        """The tool called ``name``, if registered."""
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    @property
    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def declarations(self) -> list[types.FunctionDeclaration]:
        """One declaration per tool, in registration order."""
        return [spec.declaration() for spec in self._tools.values()]

    def tool(self) -> types.Tool:
        """All declarations as the single ``types.Tool`` to put in the request config."""
        return types.Tool(function_declarations=self.declarations())

    async def execute(self, call: types.FunctionCall, context: ToolSettings) -> ToolResult:
        """Run one function call and describe the outcome; never raises but for cancellation.

        Steps: find the tool, validate the arguments, ask for approval if
        needed, run it under its time limit, cap the text. Every failure
        becomes an error result the model can read.
        """
        result = await self._execute(call, context)
        limit = context.max_output_chars
        if result.output is not None:
            output = cap_text(unicode_text(result.output), limit)
            if output != result.output:
                return ToolResult.success(call, output, name=result.name)
        if result.error is not None:
            error = cap_text(unicode_text(result.error), limit)
            if error != result.error:
                return ToolResult.failure(call, error, name=result.name)
        return result

    async def _execute(self, call: types.FunctionCall, context: ToolSettings) -> ToolResult:
        name = call.name or ""
        spec = self._tools.get(name)
        if spec is None:
            available = ", ".join(self._tools) or "none"
            return ToolResult.failure(
                call, f"Unknown tool {name!r}. Available tools: {available}.", name=name
            )
        try:
            kwargs = spec.arguments.validate(dict(call.args or {}))
        except ValidationError as exc:
            return ToolResult.failure(call, _describe_validation_error(name, exc))

        if spec.needs_approval:
            # Read in a thread: the file is opened without blocking, but it may be large.
            change = None
            if context.will_ask(name):
                change = await asyncio.to_thread(preview_call, name, kwargs, context.workspace)
            request = ApprovalRequest(
                tool_name=name,
                args=dict(call.args or {}),
                call_id=call.id,
                workspace=context.workspace,
                change=change,
            )
            refusal = await context.seek_approval(request)
            if refusal is not None:
                return ToolResult.failure(call, refusal)

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
            if inspect.iscoroutinefunction(spec.func):
                outcome = "was stopped"
            else:
                outcome = "its result will be ignored"  # a thread cannot be stopped
            note = f" {spec.timeout_note}" if spec.timeout_note else ""
            # asyncio.timeout raises from the tool's CancelledError; a tool may
            # have noted what it produced before it was stopped (run_command).
            produced = "\n".join(getattr(exc.__cause__, "__notes__", []))
            if produced:
                note += f"\nOutput before it was stopped:\n{produced}"
            return ToolResult.failure(
                call, f"{name} timed out after {limit:g} s and {outcome}.{note}"
            )
        except ToolError as exc:
            return ToolResult.failure(call, str(exc))
        except Exception as exc:
            return ToolResult.failure(call, _describe_exception(exc))
        return ToolResult.success(call, _as_text(value))


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


def _describe_validation_error(name: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            problems.append(f"missing required argument {where!r}")
        elif error["type"] == "extra_forbidden":
            problems.append(f"unexpected argument {where!r}")
        else:
            got = repr(error.get("input"))
            if len(got) > _MAX_ECHOED_INPUT:
                got = got[:_MAX_ECHOED_INPUT] + "..."
            problems.append(f"{where!r}: {error['msg']} (got {got})")
    return f"Invalid arguments for {name}: " + "; ".join(problems) + "."


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
    cut = len(text) - limit
    head = limit * 3 // 4
    tail = limit - head
    note = f"\n\n[... {cut:,} characters cut: output capped at {limit:,} characters ...]\n\n"
    return text[:head] + note + (text[-tail:] if tail else "")
