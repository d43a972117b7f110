"""What a tool is: one frozen :class:`ToolSpec` per tool, whoever wrote it.

Everything Koroku does with a tool above the store reads its spec, never
its name: the executor (approval, time limit, preview of the change), the
system instruction (the list of tools, and the recall and memory advice
when tools of those kinds are offered), the approval dialog (which argument
is a command), the transcript (how the row is drawn) and ``--print``'s
``--yes``. The one exception sits below the agent: the search index leaves
out the calls of tools that only echo stored history, and the store cannot
ask the registry, so it keeps their names (``ECHO_TOOLS`` in
``store/search.py``; a test checks they are the registry's ``echo_tools()``).

A spec is built from a typed Python function (:meth:`ToolSpec.from_function`,
the built-in tools) or from a name, a JSON schema and an async callable
(:meth:`ToolSpec.from_schema`, what a tool from an MCP server is). A stored
call whose tool is not registered any more is shown through
:meth:`ToolSpec.unregistered`, a neutral spec.

No Gemini SDK here (the UI reads specs before its first frame): it is
imported by :meth:`ToolSpec.declaration` only.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from koroku_tui.agent.tools.arguments import SchemaArguments, ToolArguments
from koroku_tui.agent.tools.change_preview import FileChange
from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.schema import build_arguments_model, parse_docstring
from koroku_tui.agent.tools.tool_settings import ToolSettings

if TYPE_CHECKING:
    from google.genai import types

__all__ = [
    "BUILT_IN",
    "DEFAULT_TIMEOUT",
    "UNREGISTERED",
    "ChangePreview",
    "RowStyle",
    "SchemaCall",
    "ToolKind",
    "ToolLookup",
    "ToolSource",
    "ToolSpec",
    "ToolTraits",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds a tool may run unless its spec says otherwise."""


class ToolKind(StrEnum):
    """What a tool does, in the few kinds Koroku tells apart."""

    READS_FILES = "reads files"
    """Reads files or folders of the workspace."""
    CHANGES_FILES = "changes files"
    """Creates, replaces or removes files."""
    RUNS_COMMANDS = "runs commands"
    """Runs programs (a shell command): it can do anything the user can."""
    READS_HISTORY = "reads history"
    """Reads Koroku's stored conversations: its answers quote what the store holds."""
    READS_MEMORY = "reads memory"
    """Reads the daily memory files: its answers quote summaries of stored conversations."""
    KEEPS_MEMORIES = "keeps memories"
    """Keeps or drops facts about the user in Koroku's own memories (no file, no command)."""
    OTHER = "other"
    """Anything else (a tool from an MCP server, a tool Koroku does not know any more)."""


class RowStyle(StrEnum):
    """How the transcript draws a call's row."""

    PLAIN = "plain"
    """``✓ name {arguments}``; opened, the answer as text."""
    SEARCH_HITS = "search hits"
    """The answer is a history search's (``koroku_tui.text.recall``: a headline, «marked»
    hits): the row shows the query and how many past messages matched, and opened,
    the hits with the matches highlighted."""


_MCP = "mcp:"


@dataclass(frozen=True)
class ToolSource:
    """Where a tool came from: ``builtin``, ``mcp:<server>``, or ``unregistered``."""

    label: str
    tool: str = ""
    """The name the tool has where it came from (an MCP server's own name for it, which
    the name the model calls may have had to change); ``""``: the spec's name."""

    @classmethod
    def mcp(cls, server: str, tool: str = "") -> ToolSource:
        """A tool offered by the MCP server ``server`` (as the settings name it), which calls
        it ``tool``."""
        return cls(f"{_MCP}{server}", tool)

    @property
    def server(self) -> str | None:
        """The MCP server's name (``time`` for ``mcp:time``), or None for another source."""
        return self.label.removeprefix(_MCP) if self.label.startswith(_MCP) else None

    def __str__(self) -> str:
        return self.label


BUILT_IN = ToolSource("builtin")
"""Koroku's own tools (and tools registered from Python code)."""
UNREGISTERED = ToolSource("unregistered")
"""A stored call's tool that no registry offers now (an MCP tool from last month)."""

ChangePreview = Callable[[Mapping[str, Any], Path], FileChange | None]
"""``(validated arguments, workspace) -> FileChange | None``: what a call would change,
computed (in a thread) before the approval dialog opens, which draws it."""

SchemaCall = Callable[[dict[str, Any]], Awaitable[Any]]
"""The callable of a schema tool: awaited with the validated arguments as one dict."""

ToolLookup = Callable[[str], "ToolSpec"]
"""A tool's spec by name, never failing (``ToolRegistry.spec_for``): what the UI is given."""


class ToolTraits(TypedDict, total=False):
    """The keywords of :meth:`ToolSpec.from_function` (and ``ToolRegistry.register``)."""

    name: str | None
    description: str | None
    kind: ToolKind
    needs_approval: bool
    timeout: float
    timeout_note: str
    preview: ChangePreview | None
    row: RowStyle
    command_argument: str | None
    source: ToolSource


@dataclass(frozen=True)
class ToolSpec:
    """One tool: how to call it, and everything Koroku shows or decides about it."""

    name: str
    """What the model calls it (unique in a registry)."""
    description: str
    """What it does, for the model: the declaration's and the system instruction's text."""
    func: Callable[..., Any]
    """Called with the validated arguments as keywords (sync ones run in a thread)."""
    arguments: ToolArguments
    """Validates the arguments and describes them (the declaration's JSON schema)."""
    kind: ToolKind = ToolKind.OTHER
    """What it does (see :class:`ToolKind`); says whether its answers echo stored history."""
    needs_approval: bool = False
    """Ask the user before each call (unless allowed for the session, or ``--yes``)."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds a call may run; ``ToolSettings.timeouts`` may override it per session."""
    timeout_note: str = ""
    """Added to the timeout error, e.g. to say what was killed."""
    preview: ChangePreview | None = None
    """What a call would change, shown in the approval dialog (``None``: nothing shown)."""
    row: RowStyle = RowStyle.PLAIN
    """How the transcript draws its calls."""
    command_argument: str | None = None
    """The argument that holds a shell command: the approval dialog says "this command"
    of hidden characters in a call, and that each line of that argument runs."""
    source: ToolSource = BUILT_IN
    """Where the tool came from."""

    @property
    def echoes_history(self) -> bool:
        """Its calls and answers only repeat what is stored (conversations, memory files).

        The search index leaves them out: otherwise every recall would be found
        again by the next search, ahead of the original.
        """
        return self.kind in (ToolKind.READS_HISTORY, ToolKind.READS_MEMORY)

    @property
    def stoppable(self) -> bool:
        """True when a call can be stopped at its time limit (async); a thread cannot."""
        return inspect.iscoroutinefunction(self.func)

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        kind: ToolKind = ToolKind.OTHER,
        needs_approval: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        timeout_note: str = "",
        preview: ChangePreview | None = None,
        row: RowStyle = RowStyle.PLAIN,
        command_argument: str | None = None,
        source: ToolSource = BUILT_IN,
    ) -> ToolSpec:
        """Describe ``func``: name, docstring summary and per-parameter docs, typed schema.

        A parameter typed ``ToolSettings`` receives the session's settings and
        is left out of the schema. Raises ``TypeError`` if the signature
        cannot be described (see ``build_arguments_model``).
        """
        tool_name = name or func.__name__
        doc = parse_docstring(inspect.getdoc(func))
        return cls(
            name=tool_name,
            description=description or doc.summary,
            func=func,
            arguments=build_arguments_model(func, tool_name, doc.params, ToolSettings),
            kind=kind,
            needs_approval=needs_approval,
            timeout=timeout,
            timeout_note=timeout_note,
            preview=preview,
            row=row,
            command_argument=command_argument,
            source=source,
        )

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        json_schema: Mapping[str, Any],
        call: SchemaCall,
        *,
        kind: ToolKind = ToolKind.OTHER,
        needs_approval: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
        timeout_note: str = "",
        command_argument: str | None = None,
        source: ToolSource = BUILT_IN,
    ) -> ToolSpec:
        """A tool known by its JSON schema only: ``await call(arguments)`` runs it.

        The arguments are checked at the top level (``SchemaArguments``) and
        handed over as one dict. Unlike a function's, such a tool asks the user
        first unless ``needs_approval=False``: its code is not Koroku's.
        """

        async def run(**arguments: Any) -> Any:
            return await call(arguments)

        return cls(
            name=name,
            description=description,
            func=run,
            arguments=SchemaArguments(json_schema),
            kind=kind,
            needs_approval=needs_approval,
            timeout=timeout,
            timeout_note=timeout_note,
            command_argument=command_argument,
            source=source,
        )

    @classmethod
    def unregistered(cls, name: str) -> ToolSpec:
        """The neutral spec of a tool no registry offers: a plain row, no preview, no command."""

        def gone() -> None:
            raise ToolError(f"{name} is not available.")

        return cls(
            name=name, description="", func=gone, arguments=SchemaArguments(), source=UNREGISTERED
        )

    def declaration(self) -> types.FunctionDeclaration:
        """The ``FunctionDeclaration`` Gemini sees for this tool."""
        from google.genai import types  # the first frame reads specs without the SDK

        schema = self.arguments.json_schema()
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description or None,
            # Left out for a tool without parameters, as the SDK does: an empty
            # object schema says nothing, and the API has rejected OBJECT
            # parameters without properties.
            parameters_json_schema=schema if schema.get("properties") else None,
        )
