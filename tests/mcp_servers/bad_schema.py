"""A stdio MCP server whose tools' input schemas Gemini cannot take.

Usage: python bad_schema.py [--not-object] [--too-deep-to-parse]

Tools (``SCHEMAS``, in order): ``fine`` (a plain object schema, to show the
others do not spoil it), ``bool_schemas`` (properties whose schemas are not
objects but ``true`` and ``false``), ``ref_cycle`` (``$defs`` that only refer
to each other), ``type_array`` (a property typed ``["string", "integer",
"null"]``) and ``deep_nesting`` (objects nested ``DEPTH`` levels deep). The
SDK's client reads this listing whole. Each call answers ``called <name>``.

Two flags add a tool that spoils the whole listing for the SDK's client (on
the ``initialize`` protocol versions, which this server speaks):

- ``--not-object`` adds ``not_object``, whose root schema is a string schema:
  ``list_tools`` raises a validation error (the root must be ``type: object``).
- ``--too-deep-to-parse`` adds ``deeper_than_the_parser``, nested
  ``UNPARSEABLE_DEPTH`` levels: past the JSON parser's recursion limit, so the
  client cannot read the answer at all and ``list_tools`` is never answered
  (the client logs a parse error and must time out).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: holds mcp_servers.raw_rpc
from mcp_servers.raw_rpc import WORDS_SCHEMA, Json, RawServer, RawTool, says

DEPTH = 80
"""Deeper than any model API takes; shallow enough for the SDK's parser (~200 JSON levels)."""
UNPARSEABLE_DEPTH = 150


def nested(depth: int) -> Json:
    """An object schema whose one property is an object schema, ``depth`` times."""
    schema: Json = {"type": "object", "properties": {"leaf": {"type": "string"}}}
    for _ in range(depth - 1):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


SCHEMAS: dict[str, Json] = {
    "fine": WORDS_SCHEMA,
    "bool_schemas": {"type": "object", "properties": {"anything": True, "nothing": False}},
    "ref_cycle": {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
    },
    "type_array": {
        "type": "object",
        "properties": {"value": {"type": ["string", "integer", "null"]}},
    },
    "deep_nesting": nested(DEPTH),
}

SPOILERS: dict[str, tuple[str, Json]] = {
    "--not-object": ("not_object", {"type": "string"}),
    "--too-deep-to-parse": ("deeper_than_the_parser", nested(UNPARSEABLE_DEPTH)),
}
"""The flags, each with the tool it adds."""


def main() -> None:
    """Serve until stdin ends."""
    schemas = dict(SCHEMAS)
    for flag in sys.argv[1:]:
        if flag not in SPOILERS:
            sys.exit(f"bad_schema.py: unknown flag {flag!r}; known: {', '.join(SPOILERS)}")
        name, schema = SPOILERS[flag]
        schemas[name] = schema
    tools = [
        RawTool(name, says(f"called {name}"), f"Schema case {name}.", schema)
        for name, schema in schemas.items()
    ]
    RawServer("bad-schema", tools).serve()


if __name__ == "__main__":
    main()
