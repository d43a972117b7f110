"""The tool registry: the specs Koroku offers, their declarations, and the executor.

Register typed functions (sync or async) with what they are (``register``,
keywords of ``ToolSpec.from_function``), or add a ready spec (``add``, e.g.
``ToolSpec.from_schema`` for a tool known by its JSON schema). Every call
runs through ``executor.execute_call``: validation, approval, a time limit
and an output cap, whatever the tool's source. Only cancellation escapes
``execute``.

No Gemini SDK at import (the app builds its registry before its first
frame): ``declarations`` and ``tool`` import it when first asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, overload

from koroku_tui.agent.tools.executor import cap_text, execute_call, unicode_text
from koroku_tui.agent.tools.result import ToolResult
from koroku_tui.agent.tools.spec import DEFAULT_TIMEOUT, ToolSource, ToolSpec, ToolTraits
from koroku_tui.agent.tools.tool_settings import ToolSettings

if TYPE_CHECKING:
    from google.genai import types

__all__ = ["DEFAULT_TIMEOUT", "ToolRegistry", "ToolSpec", "cap_text", "unicode_text"]

F = TypeVar("F", bound=Callable[..., Any])

_GEMINI_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")
"""What Gemini accepts as a function declaration's name."""


class ToolRegistry:
    """The tools the agent offers, in registration order."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}
        self._version = 0

    @property
    def version(self) -> int:
        """Grows with every change of the tools offered: what a cache of their declarations
        (and the system instruction's list) follows."""
        return self._version

    @overload
    def register(self, func: F, /, **traits: Unpack[ToolTraits]) -> F: ...
    @overload
    def register(self, func: None = None, /, **traits: Unpack[ToolTraits]) -> Callable[[F], F]: ...

    def register(
        self, func: F | None = None, /, **traits: Unpack[ToolTraits]
    ) -> F | Callable[[F], F]:
        """Register a function as a tool; usable plain or as a decorator with traits.

        ``traits`` are the keywords of ``ToolSpec.from_function`` (kind,
        needs_approval, timeout, preview, row, ...). Raises ``ValueError`` if
        the name is taken and ``TypeError`` if the signature cannot be
        described (see ``build_arguments_model``).
        """

        def add(fn: F) -> F:
            self.add(ToolSpec.from_function(fn, **traits))
            return fn

        return add(func) if func is not None else add

    def add(self, spec: ToolSpec) -> ToolSpec:
        """Offer a ready spec; ``ValueError`` if its name is taken or Gemini would refuse it."""
        _check_name(spec.name)
        if spec.name in self._tools:
            raise ValueError(f"a tool named {spec.name!r} is already registered")
        self._tools[spec.name] = spec
        self._version += 1
        return spec

    def remove(self, name: str) -> ToolSpec | None:
        """Stop offering the tool ``name``; its spec, or None if there was none."""
        spec = self._tools.pop(name, None)
        if spec is not None:
            self._version += 1
        return spec

    def replace_source(self, source: ToolSource, specs: Iterable[ToolSpec]) -> None:
        """Offer ``specs`` in place of every tool from ``source`` (an MCP server's new list).

        Checked whole first, as :meth:`add` checks one: on ``ValueError`` nothing changed.
        """
        new = list(specs)
        kept = {
            name: spec for name, spec in self._tools.items() if spec.source.label != source.label
        }
        for spec in new:
            _check_name(spec.name)
            if spec.name in kept or sum(s.name == spec.name for s in new) > 1:
                raise ValueError(f"a tool named {spec.name!r} is already registered")
        if not new and len(kept) == len(self._tools):
            return  # nothing of the source offered before or now
        self._tools = kept | {spec.name: spec for spec in new}
        self._version += 1

    def get(self, name: str) -> ToolSpec | None:
        """The tool called ``name``, if registered."""
        return self._tools.get(name)

    def spec_for(self, name: str) -> ToolSpec:
        """The spec of ``name``, or a neutral one when no such tool is registered.

        What the UI draws a call by: a stored call of a tool that is gone (an
        MCP tool from last month) still gets a plain row.
        """
        spec = self._tools.get(name)
        return spec if spec is not None else ToolSpec.unregistered(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolSpec]:
        """The specs, in registration order."""
        return iter(list(self._tools.values()))

    @property
    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def echo_tools(self) -> frozenset[str]:
        """Names of the tools whose answers only echo stored history (left out of the index)."""
        return frozenset(spec.name for spec in self._tools.values() if spec.echoes_history)

    def declarations(self) -> list[types.FunctionDeclaration]:
        """One declaration per tool, in registration order."""
        return [spec.declaration() for spec in self._tools.values()]

    def tool(self) -> types.Tool:
        """All declarations as the single ``types.Tool`` to put in the request config."""
        from google.genai import types

        return types.Tool(function_declarations=self.declarations())

    async def execute(self, call: types.FunctionCall, context: ToolSettings) -> ToolResult:
        """Run one function call and describe the outcome; never raises but for cancellation.

        See ``executor.execute_call``: every failure becomes an error result
        the model can read.
        """
        return await execute_call(self._tools.get(call.name or ""), call, context, self.names)


def _check_name(name: str) -> None:
    if not _GEMINI_NAME.fullmatch(name):
        # Gemini refuses the whole request over one bad declaration, every
        # turn; and a newline would break the tool list in the instruction.
        raise ValueError(
            f"{name!r} cannot be a tool's name: Gemini takes 1 to 64 letters, digits, "
            "'_', '.', ':' or '-', starting with a letter or '_'"
        )
