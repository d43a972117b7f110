"""Tool-call arguments nested deeper than any tool needs.

Each case is ``(shape, depth)``: :func:`nested_args` builds arguments whose
whole nesting (the arguments object is level 1) is ``depth``. A call nested
deeper than ``call_depth.MAX_ARGS_DEPTH`` (64) is answered "nested too deeply"
without running or asking, and the turn, the stored rows and every later
request stay whole.
"""

from __future__ import annotations

from typing import Any

TOO_DEEP: list[tuple[str, int]] = [
    ("object", 65),  # one level past the limit
    ("object", 202),  # stored, but pydantic refused to read the row back: call and answer lost
    ("object", 302),  # pydantic refused to serialise the row: "Something went wrong inside Koroku"
    ("object", 602),  # RecursionError in without_lone_surrogates while the reply streamed in
    ("array", 602),  # arrays count as well as objects
    ("mixed", 900),  # objects and arrays in turn, near what JSON parsers accept at all
    ("object", 990),  # RecursionError: "Something went wrong inside Koroku" ended the turn
    ("array", 1_500),  # past Python's recursion limit in every JSON parser on the way
    ("object", 20_000),  # "at any depth"
]

KEPT: list[tuple[str, int]] = [
    ("object", 64),  # exactly the limit: the call runs
    ("array", 64),  # the same with arrays
]


def nested_args(shape: str, depth: int) -> dict[str, Any]:
    """Arguments ``{"data": ...}`` nesting ``depth`` levels in all, ending in a string."""
    inner: Any = "bottom"
    for level in range(depth - 1):
        as_array = shape == "array" or (shape == "mixed" and level % 2 == 1)
        inner = [inner] if as_array else {"a": inner}
    return {"data": inner}
