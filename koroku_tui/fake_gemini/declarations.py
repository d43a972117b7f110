"""The real API's checks of a request's function declarations, with its 400 texts.

Gemini refuses the whole request over one declaration it cannot take. What
is checked here was seen refused by the real API (texts quoted from its
answers where known):

* a name outside 1 to 64 letters, digits, ``_ . : -`` starting with a letter
  or ``_`` (the API reference's ``FunctionDeclaration.name``);
* a ``parametersJsonSchema`` that does not describe an object (the reference:
  "The schema must describe an object"; the wording of the answer is ours);
* a ``$ref`` that names nothing in the schema: "reference to undefined schema
  at properties.language";
* a loop of ``$ref`` that cannot end: "ref loops are only supported if they
  include optional or nullable property values, or a potentially-zero-length
  array items, but a ref loop of required fields was found at ...".

Written apart from Koroku's own check (``agent/tools/mcp/schemas.py``) on
purpose: this plays Gemini's part, so it must test Koroku's rule, not share it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from koroku_tui.fake_gemini.wire import get_field

__all__ = ["declaration_problem"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")
BAD_NAME_MESSAGE = (
    "* GenerateContentRequest.tools[{tool}].function_declarations[{index}].name: Invalid "
    "function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, "
    "0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\n"
)
NOT_AN_OBJECT_MESSAGE = (
    "* GenerateContentRequest.tools[{tool}].function_declarations[{index}]"
    ".parameters_json_schema: the schema must describe an object (type: object)\n"
)
UNDEFINED_MESSAGE = "reference to undefined schema at {path}"
LOOP_MESSAGE = (
    "ref loops are only supported if they include optional or nullable property values, or a "
    "potentially-zero-length array items, but a ref loop of required fields was found at {path}"
)


def _anchored(node: Any, anchor: str) -> Mapping[str, Any] | None:
    if isinstance(node, Mapping):
        if node.get("$anchor") == anchor:
            return node
        node = list(node.values())
    for value in node if isinstance(node, list) else []:
        if (found := _anchored(value, anchor)) is not None:
            return found
    return None


def _target(root: Mapping[str, Any], ref: str) -> Any:
    if ref == "#":
        return root
    if ref.startswith("#") and not ref.startswith("#/"):
        return _anchored(root, ref[1:])
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for key in ref[2:].split("/"):
        key = key.replace("~1", "/").replace("~0", "~")
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else None


def _undefined_at(root: Mapping[str, Any], node: Any, path: str) -> str | None:
    if isinstance(node, list):
        for i, item in enumerate(node):
            if (found := _undefined_at(root, item, f"{path}.{i}".lstrip("."))) is not None:
                return found
    if not isinstance(node, Mapping):
        return None
    ref = node.get("$ref")
    if isinstance(ref, str) and _target(root, ref) is None:
        return path or "."
    for key, value in node.items():
        if (found := _undefined_at(root, value, f"{path}.{key}".lstrip("."))) is not None:
            return found
    return None


def _nullable(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    branches = [*(node.get("anyOf") or []), *(node.get("oneOf") or [])]
    return (
        kind == "null"
        or (isinstance(kind, list) and "null" in kind)
        or any(isinstance(b, Mapping) and b.get("type") == "null" for b in branches)
    )


def _loop_at(root: Mapping[str, Any], node: Any, path: str, chain: tuple[str, ...]) -> str | None:
    """Where a required-only walk from ``node`` meets a ``$ref`` of ``chain`` again."""
    if not isinstance(node, Mapping) or _nullable(node):
        return None
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in chain:
            return path
        target = _target(root, ref)
        where = ref[2:].replace("/", ".")
        if (found := _loop_at(root, target, where, (*chain, ref))) is not None:
            return found
    required = node.get("required") or []
    steps = [
        (f"properties.{k}", v) for k, v in (node.get("properties") or {}).items() if k in required
    ]
    for key in ("anyOf", "oneOf", "allOf"):
        steps += [(f"{key}.{i}", v) for i, v in enumerate(node.get(key) or [])]
    if (node.get("minItems") or 0) > 0 and isinstance(node.get("items"), Mapping):
        steps.append(("items", node["items"]))
    for step, value in steps:
        if (found := _loop_at(root, value, f"{path}.{step}".lstrip("."), chain)) is not None:
            return found
    return None


def _schema_problem(schema: Any, tool: int, index: int) -> str | None:
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return NOT_AN_OBJECT_MESSAGE.format(tool=tool, index=index)
    undefined = _undefined_at(schema, schema, "")
    if undefined is not None:
        return UNDEFINED_MESSAGE.format(path=undefined)
    starts = [("", schema)]
    for defs in ("$defs", "definitions"):
        starts += [(f"{defs}.{k}", v) for k, v in (schema.get(defs) or {}).items()]
    for path, node in starts:
        if (loop := _loop_at(schema, node, path, ())) is not None:
            return LOOP_MESSAGE.format(path=loop)
    return None


def declaration_problem(body: object) -> str | None:
    """The 400 message for the first declaration the real API would refuse, or None."""
    tools = get_field(body, "tools") if isinstance(body, Mapping) else None
    for t, tool in enumerate(tools if isinstance(tools, list) else []):
        declared = get_field(tool, "functionDeclarations") if isinstance(tool, Mapping) else None
        for i, declaration in enumerate(declared if isinstance(declared, list) else []):
            name = declaration.get("name") if isinstance(declaration, Mapping) else None
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                return BAD_NAME_MESSAGE.format(tool=t, index=i)
            schema = get_field(declaration, "parametersJsonSchema")
            if schema is not None and (problem := _schema_problem(schema, t, i)) is not None:
                return problem
    return None
