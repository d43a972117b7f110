"""Koroku: a personal Gemini agent for the terminal that remembers.

The event model is re-exported here lazily so that ``import koroku_tui`` (and
``koroku-tui --version``) stays fast and does not pull in the Gemini SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

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
    "CompactionEvent",
    "StoredEvent",
    "StoredEventAdapter",
)

__all__ = ["__version__", *_EVENT_NAMES]


def __getattr__(name: str) -> Any:
    if name in _EVENT_NAMES:
        return getattr(import_module("koroku_tui.events"), name)
    raise AttributeError(f"module 'koroku_tui' has no attribute {name!r}")
