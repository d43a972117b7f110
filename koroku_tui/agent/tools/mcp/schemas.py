"""A tool's ``input_schema`` as Gemini takes it, or why Gemini cannot take it.

Gemini reads a declaration's ``parameters_json_schema`` as JSON Schema
(``$ref``, ``$defs``, ``anyOf``, ``additionalProperties`` included), but the
whole request is refused (400) over one declaration it cannot take, every
turn. Found in the API's answers (the fake Gemini refuses the same, see
``fake_gemini/schemas.py``):

* the schema must describe an object (the parameters are its properties);
* a ``$ref`` must name a part of the same schema ("reference to undefined
  schema at ...");
* a loop of ``$ref`` is taken only if it can end: through a property that is
  optional or may be null, or through the items of an array that may be
  empty ("ref loops are only supported if they include optional or nullable
  property values, or a potentially-zero-length array items ...").

Such a tool is left out, with the reason (``McpToolInfo.left_out``); the
others are offered. A ``$schema`` key at the top (the draft it follows:
nothing Gemini needs, and reported refused) is dropped rather than the tool.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

__all__ = ["Declarable", "declarable", "ref_loop", "resolve_ref"]


@dataclass(frozen=True)
class Declarable:
    """A tool's parameters as sent to Gemini, or why they cannot be."""

    schema: dict[str, Any] | None
    """The schema to declare (``None`` when the tool is left out)."""
    left_out: str = ""
    """Why Gemini cannot take the schema, in a few words; ``""`` when it can."""


def declarable(schema: object) -> Declarable:
    """``schema`` (a tool's ``input_schema``) ready to declare, or the reason it is left out."""
    if not isinstance(schema, Mapping):
        return Declarable(None, "its parameters are not described by a JSON object")
    kind = schema.get("type", "object")
    if kind != "object":
        return Declarable(None, f"its parameters are not an object (type {kind!r})")
    ready = {key: value for key, value in schema.items() if key != "$schema"}
    ready["type"] = "object"
    for ref in _refs(ready):
        if resolve_ref(ready, ref) is None:
            return Declarable(None, f"its schema refers to {ref!r}, which it does not define")
    loop = ref_loop(ready)
    if loop is not None:
        return Declarable(None, f"its schema nests {loop!r} in itself without end")
    return Declarable(ready)


def _nodes(schema: object) -> Iterator[Mapping[str, Any]]:
    """Every object in ``schema`` (iteratively: a deep schema cannot exhaust the stack)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _refs(schema: object) -> list[str]:
    return [ref for node in _nodes(schema) if isinstance(ref := node.get("$ref"), str)]


def resolve_ref(root: Mapping[str, Any], ref: str) -> Mapping[str, Any] | None:
    """The part of ``root`` that ``ref`` names (``#``, ``#/$defs/Item``, ``#anchor``), or None."""
    if not ref.startswith("#"):
        return None  # another document: Gemini cannot fetch it
    pointer = unquote(ref[1:])
    if pointer and not pointer.startswith("/"):
        found = [node for node in _nodes(root) if node.get("$anchor") == pointer]
        return found[0] if found else None
    node: Any = root
    for step in pointer.split("/")[1:]:
        step = step.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and step in node:
            node = node[step]
        elif isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        else:
            return None
    return node if isinstance(node, Mapping) else None


def _nullable(node: Mapping[str, Any]) -> bool:
    kinds = node.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and any(
            isinstance(b, Mapping) and b.get("type") == "null" for b in branches
        ):
            return True
    return False


def _must_hold(node: Mapping[str, Any]) -> Iterator[object]:
    """The parts of ``node`` every value must have: required properties, composed schemas,
    the items of an array that may not be empty."""
    required = node.get("required")
    names = set(required) if isinstance(required, list) else set()
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        yield from (sub for name, sub in properties.items() if name in names)
    for key in ("allOf", "anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list):
            yield from branches
    items = node.get("items")
    least = node.get("minItems")
    if isinstance(least, int) and least > 0:
        yield from items if isinstance(items, list) else [items]


def _refs_that_must_hold(node: Mapping[str, Any]) -> set[str]:
    """The ``$ref`` a value of ``node`` cannot do without (an optional or nullable part can)."""
    found: set[str] = set()
    stack: list[object] = [node]
    while stack:
        part = stack.pop()
        if not isinstance(part, Mapping) or _nullable(part):
            continue
        if isinstance(ref := part.get("$ref"), str):
            found.add(ref)
        stack.extend(_must_hold(part))
    return found


def ref_loop(root: Mapping[str, Any]) -> str | None:
    """A ``$ref`` that a value must contain again inside itself (no end), or None."""
    edges: dict[str, set[str]] = {}
    pending = _refs(root)
    while pending:
        ref = pending.pop()
        if ref in edges:
            continue
        target = resolve_ref(root, ref)
        edges[ref] = _refs_that_must_hold(target) if target is not None else set()
        pending.extend(edges[ref])
    # Depth-first, iteratively: a ref met again on the current path closes a loop.
    done: set[str] = set()
    for start in edges:
        if start in done:
            continue
        path = [start]
        on_path = {start}
        branches = [iter(sorted(edges[start]))]
        while branches:
            nxt = next(branches[-1], None)
            if nxt is None:
                finished = path.pop()
                on_path.discard(finished)
                done.add(finished)
                branches.pop()
                continue
            if nxt in on_path:
                return nxt
            if nxt in done or nxt not in edges:
                continue
            path.append(nxt)
            on_path.add(nxt)
            branches.append(iter(sorted(edges[nxt])))
    return None
