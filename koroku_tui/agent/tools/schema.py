"""From a typed Python function to a pydantic arguments model and a JSON schema.

The same model serves twice: its JSON schema becomes the function
declaration's ``parameters_json_schema``, and it validates the arguments the
model sends before the function is called. The signature is read (and
checked) when the tool is registered; the pydantic model is built on first
use: the app registers its tools before its first frame, which shows calls
but neither validates nor declares them.
"""

from __future__ import annotations

import functools
import inspect
import operator
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, create_model
from pydantic_core import PydanticCustomError

from koroku_tui.agent.tools.arguments import (
    ArgumentsError,
    extra_argument,
    missing_argument,
    wrong_value,
)

__all__ = ["ArgumentsModel", "ParsedDocstring", "build_arguments_model", "parse_docstring"]

_SECTION_RE = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$")
_OTHER_SECTION_RE = re.compile(r"^\s*[A-Z][A-Za-z ]*:\s*$")
_ENTRY_RE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
# Schema keywords whose values are data, not schemas: never rewritten.
_DATA_KEYWORDS = frozenset({"default", "enum", "const", "examples"})
_NAME_MAP_KEYWORDS = frozenset({"properties", "$defs", "definitions", "patternProperties"})


@dataclass(frozen=True)
class ParsedDocstring:
    """A Google-style docstring: its first paragraph and its ``Args:`` entries."""

    summary: str
    params: dict[str, str]


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split a Google-style docstring into a one-paragraph summary and parameter texts."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary_lines: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION_RE.match(line):
            break
        summary_lines.append(line.strip())
    params: dict[str, str] = {}
    start = next((i for i, line in enumerate(lines) if _SECTION_RE.match(line)), None)
    if start is not None:
        params = _parse_args_section(lines[start + 1 :])
    return ParsedDocstring(summary=" ".join(summary_lines), params=params)


def _parse_args_section(lines: list[str]) -> dict[str, str]:
    params: dict[str, list[str]] = {}
    entry_indent: int | None = None
    current: str | None = None
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if entry_indent is None:
            entry_indent = indent
        if indent < entry_indent or (indent == entry_indent and _OTHER_SECTION_RE.match(line)):
            break  # dedent or the next section (Returns:, Raises:, ...)
        match = _ENTRY_RE.match(line.strip()) if indent == entry_indent else None
        if match:
            current = match.group(1)
            params[current] = [match.group(2).strip()]
        elif current is not None:
            params[current].append(line.strip())
    return {name: " ".join(p for p in parts if p) for name, parts in params.items()}


class _Field(NamedTuple):
    """One model-facing parameter, as the model's field will take it."""

    hint: Any
    default: Any
    """``...`` when the parameter is required."""
    alias: str
    """The parameter's name (the field's own name is ``arg_<index>``)."""
    description: str | None


@dataclass(frozen=True)
class ArgumentsModel:
    """The validated view of a function's model-facing parameters."""

    name: str
    """The tool's name: the model is called ``<name>_arguments``."""
    fields: dict[str, _Field]
    """Field name on ``model`` -> what it holds."""
    field_for: dict[str, str]
    """Parameter name -> field name on ``model`` (fields are aliased; see below)."""
    context_param: str | None
    """The parameter that receives the ``ToolSettings``, if the function has one."""

    @cached_property
    def model(self) -> type[BaseModel]:
        """The pydantic model, built on first use (~0.5 ms a tool, seven before the first frame)."""
        fields: dict[str, Any] = {
            name: (
                _refusing_bools(f.hint),
                Field(f.default, alias=f.alias, description=f.description),
            )
            for name, f in self.fields.items()
        }
        return create_model(
            f"{self.name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
        )

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Validated (and coerced) keyword arguments; raises ``ArgumentsError``."""
        try:
            instance = self.model.model_validate(dict(args))
        except ValidationError as exc:
            raise ArgumentsError(_problems(exc)) from exc
        return {param: getattr(instance, fld) for param, fld in self.field_for.items()}

    def json_schema(self) -> dict[str, Any]:
        """The parameters as a JSON schema object, trimmed for Gemini."""
        schema: dict[str, Any] = _strip_titles(self.model.model_json_schema())
        required = set(schema.get("required", []))
        properties: dict[str, Any] = schema.get("properties", {})
        for name, prop in properties.items():
            if name not in required:
                properties[name] = _simplify_optional(prop)
        if properties:
            # Gemini may reorder properties; keep the signature's order.
            schema["propertyOrdering"] = list(properties)
        return schema


def _problems(exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            problems.append(missing_argument(where))
        elif error["type"] == "extra_forbidden":
            problems.append(extra_argument(where))
        else:
            problems.append(wrong_value(where, error["msg"], error.get("input")))
    return problems


def build_arguments_model(
    func: Callable[..., Any],
    name: str,
    param_docs: dict[str, str],
    context_type: type,
) -> ArgumentsModel:
    """Build the arguments model of ``func``; a ``context_type`` parameter is left out.

    Raises ``TypeError`` for parameters a model cannot fill: ``*args``,
    ``**kwargs``, positional-only, or without a type hint. A hint pydantic
    cannot validate fails when the model is built, on first use.
    """
    hints = typing.get_type_hints(func, include_extras=True)
    fields: dict[str, _Field] = {}
    field_for: dict[str, str] = {}
    context_param: str | None = None
    for index, param in enumerate(inspect.signature(func).parameters.values()):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise TypeError(f"tool {name}: parameter {param.name!r} cannot be passed by keyword")
        if param.name not in hints:
            raise TypeError(f"tool {name}: parameter {param.name!r} has no type hint")
        hint = hints[param.name]
        if hint is context_type:
            context_param = param.name
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        # Internal field names plus an alias: a parameter called "json" or
        # "schema" would otherwise clash with BaseModel's own attributes.
        field_name = f"arg_{index}"
        fields[field_name] = _Field(hint, default, param.name, param_docs.get(param.name))
        field_for[param.name] = field_name
    return ArgumentsModel(
        name=name, fields=fields, field_for=field_for, context_param=context_param
    )


def _refuse_bool(kind: str, message: str) -> BeforeValidator:
    """A check that lets anything through but a JSON boolean, answered as pydantic words it."""

    def refuse(value: Any) -> Any:
        if isinstance(value, bool):
            raise PydanticCustomError(kind, message)
        return value

    return BeforeValidator(refuse)


_NO_BOOL = {
    int: _refuse_bool("int_type", "Input should be a valid integer"),
    float: _refuse_bool("float_type", "Input should be a valid number"),
}
"""Pydantic's lax mode takes ``true`` as the integer 1 (and the number 1.0): a
model that sent ``forget(memory_id=true)`` deleted memory 1. A boolean is never
a number here, as :class:`~koroku_tui.agent.tools.arguments.SchemaArguments`
already judges; strict mode is not the answer, it refuses ``3.0`` for an int."""


def _refusing_bools(hint: Any) -> Any:
    """``hint`` with each ``int`` and ``float`` in it (``list[int] | None``) refusing bools."""
    if hint is int or hint is float:
        return Annotated[hint, _NO_BOOL[hint]]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is None or origin is Literal or not args:
        return hint
    if origin is Annotated:
        return Annotated[(_refusing_bools(args[0]), *hint.__metadata__)]
    inner = tuple(_refusing_bools(arg) for arg in args)
    if inner == args:
        return hint
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(operator.or_, inner)
    return origin[inner]


def _strip_titles(node: Any) -> Any:
    """Drop pydantic's generated ``title`` keywords; they only add noise for the model."""
    if isinstance(node, list):
        return [_strip_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    cleaned: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in _DATA_KEYWORDS:
            cleaned[key] = value
        elif key in _NAME_MAP_KEYWORDS and isinstance(value, dict):
            cleaned[key] = {name: _strip_titles(sub) for name, sub in value.items()}
        else:
            cleaned[key] = _strip_titles(value)
    return cleaned


def _simplify_optional(prop: dict[str, Any]) -> dict[str, Any]:
    """``anyOf[X, null]`` with a ``None`` default becomes plain ``X``.

    The model just leaves an optional argument out; validation still accepts
    an explicit null.
    """
    if prop.get("default", 0) is None:
        prop = {k: v for k, v in prop.items() if k != "default"}
    options = prop.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return prop
    (other,) = [o for o in options if o != {"type": "null"}]
    rest = {k: v for k, v in prop.items() if k != "anyOf"}
    return {**other, **rest}
