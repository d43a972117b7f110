"""Tool-call arguments nested too deeply: kept out, answered, never run.

The model decides how deep a call's arguments nest. A few hundred levels of
``{"a": {"a": ...}}`` break every layer after the stream: pydantic will not
serialise the row (about 250 levels) or read it back (about 200), and
recursive code runs out of stack. No tool takes more than a few levels, so a
call nested deeper than :data:`MAX_ARGS_DEPTH` is not kept as it came: its
arguments are replaced, as the reply is received, by a one-key placeholder
that says why (the part keeps its thought signature, so the history stays
valid for Gemini), and the call is answered with an error instead of run.

Deeper still (~1,000 levels), no JSON parser of Python's reads the streamed
line at all: ``deep_lines`` cuts such a line's deepest containers down to a
:func:`cut_marker` string first, and :func:`nesting_depth` counts the levels
each marker stands for, so the answer names the depth the model sent.
"""

from __future__ import annotations

from typing import Any

from koroku_tui.agent.tools.answer_words import FLATTEN_ARGUMENTS

__all__ = ["MAX_ARGS_DEPTH", "cut_marker", "kept_args", "nesting_depth", "too_deep_refusal"]

MAX_ARGS_DEPTH = 64
"""Levels of objects and arrays a call's arguments may nest (the arguments object is 1)."""

_DROPPED = "koroku_arguments_dropped"
_CUT = "\ue000koroku: nested levels cut: "
"""Starts a string that stands for a container cut from a streamed line (``deep_lines``);
a private-use character first, so no text a model means says it by chance."""


def cut_marker(levels: int) -> str:
    """The string standing for a cut container that nested ``levels`` levels (itself is 1)."""
    return f"{_CUT}{levels}"


def _cut_levels(value: str) -> int:
    """The levels a :func:`cut_marker` string stands for; 0 for any other string."""
    if value.startswith(_CUT) and value[len(_CUT) :].isdigit():
        return int(value[len(_CUT) :])
    return 0


def nesting_depth(value: object) -> int:
    """How many objects/arrays deep ``value`` nests (0 for a scalar), without recursion.

    A :func:`cut_marker` counts as the levels it stands for.
    """
    deepest = 0
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            if isinstance(item, str) and (levels := _cut_levels(item)):
                deepest = max(deepest, depth + levels - 1)
            continue
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in children)
    return deepest


def kept_args(args: dict[str, Any] | None) -> dict[str, Any] | None:
    """``args`` as they may be stored and sent back: the placeholder when too deep."""
    if args is None:
        return None
    depth = nesting_depth(args)
    if depth <= MAX_ARGS_DEPTH:
        return args
    return {_DROPPED: f"nested too deeply ({depth:,} levels)"}


def too_deep_refusal(args: dict[str, Any] | None) -> str | None:
    """The error a call with these arguments is answered with, or None when it may run."""
    if args is not None and set(args) == {_DROPPED} and isinstance(args[_DROPPED], str):
        why = args[_DROPPED]
    elif args is not None and (depth := nesting_depth(args)) > MAX_ARGS_DEPTH:
        why = f"nested too deeply ({depth:,} levels)"
    else:
        return None
    return (
        f"Not run: the arguments were {why}; at most {MAX_ARGS_DEPTH} levels are "
        f"accepted. {FLATTEN_ARGUMENTS}"
    )
