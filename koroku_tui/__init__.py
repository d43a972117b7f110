"""Koroku: a personal Gemini agent for the terminal that remembers.

The event model and ``Agent`` are re-exported here lazily, so that ``import
koroku_tui`` (and ``koroku-tui --version``) stays fast and does not pull in the
Gemini SDK: ``from koroku_tui import Agent`` imports the agent on first use.
That ``Agent`` is the seed's (``koroku_tui.modes.seed_entry``): with no arguments it
works on the user's settings (``KOROKU_HOME`` and the other ``KOROKU_*``).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers only; at run time __getattr__ imports it
    from koroku_tui.modes.seed_entry import Agent

__version__ = "0.1.0"

_EVENT_NAMES = (
    "TextPart",
    "FunctionCallPart",
    "FunctionResponsePart",
    "OtherPart",
    "FunctionCallData",
    "FunctionResponseData",
    "FCMetadata",
    "SessionEvent",
    "SessionPart",
    "CompactionEvent",
    "StoredEvent",
    "StoredEventAdapter",
)

__all__ = ["Agent", "__version__", *_EVENT_NAMES]


def __getattr__(name: str) -> Any:
    if name in _EVENT_NAMES:
        return getattr(import_module("koroku_tui.events"), name)
    if name == "Agent":
        return import_module("koroku_tui.modes.seed_entry").Agent
    raise AttributeError(f"module 'koroku_tui' has no attribute {name!r}")
