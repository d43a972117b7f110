"""A package's names, imported from their modules on first use.

``koroku_tui.agent`` and ``koroku_tui.agent.tools`` export this way so that
naming one light type (``AgentError`` in a screen, say) does not import the
agent loop and the Gemini SDK before the app's first frame.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(
    package: str, module_of: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``module_of`` maps each name to its module."""

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value  # later lookups skip this function
        return value

    return __getattr__
