"""A tool's arguments: checked before the call, described to Gemini as a JSON schema.

Two forms satisfy :class:`ToolArguments`: ``schema.ArgumentsModel``, built
from a typed Python function (pydantic validates and coerces), and
:class:`SchemaArguments`, built from a JSON schema alone (a tool from an MCP
server, whose code Koroku does not have). Both report what is wrong in the
same words, as :class:`ArgumentsError` problems the executor hands the model:
"missing required argument 'path'", "unexpected argument 'mode'",
"'path': Input should be a valid string (got 123)".
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "ArgumentsError",
    "SchemaArguments",
    "ToolArguments",
    "extra_argument",
    "missing_argument",
    "wrong_value",
]

MAX_ECHOED_INPUT = 80
"""A bad argument is quoted back to the model at most this long."""


class ArgumentsError(Exception):
    """The arguments do not fit the tool: each problem is one phrase for the model."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def missing_argument(name: str) -> str:
    """The problem phrase for a required argument left out."""
    return f"missing required argument {name!r}"


def extra_argument(name: str) -> str:
    """The problem phrase for an argument the tool does not take."""
    return f"unexpected argument {name!r}"


def wrong_value(name: str, message: str, got: Any) -> str:
    """The problem phrase for a value of the wrong kind, the value quoted (cut) after it."""
    shown = repr(got)
    if len(shown) > MAX_ECHOED_INPUT:
        shown = shown[:MAX_ECHOED_INPUT] + "..."
    return f"{name!r}: {message} (got {shown})"


class ToolArguments(Protocol):
    """What the registry and the executor need of a tool's arguments."""

    @property
    def context_param(self) -> str | None:
        """The keyword that receives the call's ``ToolSettings`` (never shown to the model)."""
        ...

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments to call the tool with; raises :class:`ArgumentsError`."""
        ...

    def json_schema(self) -> dict[str, Any]:
        """The parameters as a JSON schema object, as Gemini's declaration takes them."""
        ...


_TYPE_MESSAGES = {
    "string": "Input should be a valid string",
    "integer": "Input should be a valid integer",
    "number": "Input should be a valid number",
    "boolean": "Input should be a valid boolean",
    "array": "Input should be a valid list",
    "object": "Input should be a valid dictionary",
    "null": "Input should be None",
}
"""Worded as pydantic words them, so both forms of a tool answer alike."""


@dataclass(frozen=True)
class SchemaArguments:
    """Arguments described by a JSON schema object (``{"type": "object", "properties": ...}``).

    Validation covers the top level: every ``required`` key is there, no key
    is unknown when ``additionalProperties`` is false, and each value given
    has its property's ``type`` (one or a list) and is one of its ``enum``.
    Nested values are passed on as they came; the tool checks them itself. A
    whole number sent as ``3.0`` for an ``integer`` becomes ``3``, as
    pydantic does for a function's ``int``. A part of the schema not in JSON
    Schema's shape (``properties`` not an object, ``required`` not a list of
    names, a ``type`` not a name) checks nothing: the tool judges, as for a
    type this check does not know.
    """

    schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})

    @property
    def context_param(self) -> str | None:
        """Always ``None``: such a tool is not a Python function that takes ``ToolSettings``."""
        return None

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``args`` checked against the schema's top level (see the class docstring)."""
        properties = _mapping(self.schema.get("properties"))
        required = _names(self.schema.get("required"))
        problems: list[str] = []
        checked = dict(args)
        # In pydantic's order: each declared argument in turn, then the unknown ones.
        for name in [*properties, *(r for r in required if r not in properties)]:
            if name not in args:
                if name in required:
                    problems.append(missing_argument(name))
                continue
            checked[name], problem = _fit(name, args[name], properties.get(name))
            if problem is not None:
                problems.append(problem)
        if self.schema.get("additionalProperties") is False:
            problems += [extra_argument(name) for name in args if name not in properties]
        if problems:
            raise ArgumentsError(problems)
        return checked

    def json_schema(self) -> dict[str, Any]:
        """A copy of the schema (the declaration must not share the tool's own object)."""
        return copy.deepcopy(dict(self.schema))


def _fit(name: str, value: Any, prop: Any) -> tuple[Any, str | None]:
    """``value`` (a whole float made an int where one is wanted) and what is wrong with it."""
    if not isinstance(prop, Mapping):
        return value, None
    types = _names(prop.get("type"))
    if types and not any(_is(value, kind) for kind in types):
        message = _TYPE_MESSAGES.get(types[0], f"Input should be of type {types[0]}")
        return value, wrong_value(name, message, value)
    if isinstance(value, float) and "integer" in types and "number" not in types:
        value = int(value)  # passed the check above: a whole number
    options = prop.get("enum")
    if isinstance(options, list) and value not in options:
        return value, wrong_value(name, f"Input should be {_spoken_options(options)}", value)
    return value, None


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is an object, else an empty one (a malformed schema checks nothing)."""
    return value if isinstance(value, Mapping) else {}


def _names(value: Any) -> list[str]:
    """A name or a list of names (``required``, ``type``) as a list; anything else: none."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [name for name in value if isinstance(name, str)]
    return []


def _is(value: Any, kind: str) -> bool:
    """Whether ``value`` (as JSON decoding gives it) is of the JSON type ``kind``."""
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, int | float)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "null":
        return value is None
    return True  # a type this check does not know: the tool judges


def _spoken_options(options: list[Any]) -> str:
    """``'a', 'b' or 'c'``, as pydantic lists a literal's values."""
    shown = [repr(option) for option in options]
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " or " + shown[-1]
