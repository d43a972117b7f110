"""The wire form of the common parts, built directly: the SDK's, at a tenth of its cost.

The SDK converts a part (``_Part_to_mldev`` / ``_Part_to_vertex``) by
looking up each of its twenty fields through ``get_value_by_path``, which
walks the pydantic model's fields for every lookup: ~0.12 ms a part, 0.25 s
for a step of a thousand calls and their answers. That ran in a thread, but
beside it the app's loop got half the GIL (keys echoed slowly) and a cancel
waited for it.

Text, thoughts, signatures, and function calls and responses holding only
``id``, ``name`` and plain JSON (``args`` / ``response``) are written here
directly, in the SDK's key order, with values copied as its
``convert_to_dict`` + ``encode_unserializable_types`` copy them (signatures
as URL-safe base64). Anything else (inline data, files, code, a call's
``will_continue``, values that are not plain JSON) returns None and goes
through the SDK's converter. ``tests/test_wire_parts.py`` checks, for every
part kind on both backends, that the JSON is byte for byte the SDK's.
"""

from __future__ import annotations

import base64
from typing import Any

from google.genai import types

__all__ = ["plain_part"]

_DIRECT_FIELDS = frozenset(
    {"function_call", "function_response", "text", "thought", "thought_signature"}
)
_CALL_FIELDS = ("id", "args", "name")
_RESPONSE_FIELDS = ("id", "name", "response")
_SCALARS = (str, int, float, bool, type(None))


class _NotPlain(Exception):
    """A value the SDK's converter would treat in its own way (bytes, models, enums...)."""


def _plain(value: Any) -> Any:
    """A copy of ``value`` if it is plain JSON (exact types, str keys); else ``_NotPlain``."""
    kind = type(value)
    if kind is dict:
        copied = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            copied[key] = _plain(item)
        return copied
    if kind is list:
        return [_plain(item) for item in value]
    if kind in _SCALARS:
        return value
    raise _NotPlain


def _fields(model: Any, kind: type, names: tuple[str, ...]) -> dict[str, Any] | None:
    """``model``'s ``names`` that are set, in order, values copied; None if another is set.

    None too when ``model`` is not exactly a ``kind`` (a dict left by ``model_construct``).
    """
    if type(model) is not kind:
        return None
    values = model.__dict__
    wire: dict[str, Any] = {}
    for name, value in values.items():
        if value is not None and name not in names:
            return None
    for name in names:
        value = values.get(name)
        if value is not None:
            wire[name] = _plain(value)
    return wire


_NESTED: tuple[tuple[str, type[Any], tuple[str, ...], str], ...] = (
    ("function_call", types.FunctionCall, _CALL_FIELDS, "functionCall"),
    ("function_response", types.FunctionResponse, _RESPONSE_FIELDS, "functionResponse"),
)
"""A call's and a response's field, type, plain fields and wire key, in the SDK's order."""


def plain_part(part: types.Part) -> dict[str, Any] | None:
    """``part``'s wire form (JSON-ready), or None when the SDK must convert it.

    The same for the Gemini API and Vertex AI: the two differ only for
    fields left to the SDK here.
    """
    values = part.__dict__
    if type(part) is not types.Part or any(
        value is not None and name not in _DIRECT_FIELDS for name, value in values.items()
    ):
        return None
    wire: dict[str, Any] = {}
    try:
        for name, kind, names, key in _NESTED:
            nested = values.get(name)
            if nested is not None:
                fields = _fields(nested, kind, names)
                if fields is None:
                    return None
                wire[key] = fields
        for name in ("text", "thought"):
            value = values.get(name)
            if value is not None:
                wire[name] = _plain(value)
    except (_NotPlain, RecursionError):
        return None
    signature = values.get("thought_signature")
    if signature is not None:
        if type(signature) is not bytes:
            return None
        wire["thoughtSignature"] = base64.urlsafe_b64encode(signature).decode("ascii")
    return wire
